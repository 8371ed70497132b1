//! `RuntimeError`: every way setting up, using or checking the runtime directory and its socket can fail, each
//! message naming the path involved.

use std::io;
use std::path::PathBuf;

/// Why the runtime directory, its lock, its socket or its registration could not be set up or read.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The runtime name is not a single safe path component.
    #[error("invalid runtime name {0:?}: use one or more letters, digits, '.', '_' or '-' (not \".\" or \"..\")")]
    InvalidName(String),
    /// A file system operation failed.
    #[error("cannot {action} {}: {cause}", path.display())]
    Io {
        /// What was being done, e.g. "create runtime directory".
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// Why, from the operating system (part of the text, not also a `source()`, so a printed chain says
        /// it once).
        cause: io::Error,
    },
    /// The service lock is held: another daemon serves this runtime directory.
    #[error("another opencode-pty daemon already runs in {}", dir.display())]
    Locked {
        /// The runtime directory.
        dir: PathBuf,
    },
    /// The socket directory or the runtime directory exists but cannot be trusted.
    #[error("refusing {what} {}: {reason}", path.display())]
    UnsafeDirectory {
        /// Which directory: `socket directory` or `runtime directory`.
        what: &'static str,
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The service lock file is not a regular file (a planted symbolic link, a FIFO): never followed or used.
    #[error("refusing service lock {}: {reason}", path.display())]
    UnsafeLock {
        /// The lock file's path.
        path: PathBuf,
        /// What was found there.
        reason: String,
    },
    /// The usual socket directory is not ours, and no private one could be made instead.
    #[error(
        "refusing socket directory {}: {reason}; and no private directory could be made instead: {cause}",
        usual.display()
    )]
    NoSocketDirectory {
        /// The usual socket directory (`/tmp/opencode-pty-<euid>`).
        usual: PathBuf,
        /// What is wrong with it, naming its owner.
        reason: String,
        /// Why the fallback failed.
        cause: String,
    },
    /// A live daemon listens on the socket path this runtime directory maps to: it is never unlinked.
    #[error("another opencode-pty daemon already runs in {}: it listens on {}", dir.display(), socket.display())]
    LiveSocket {
        /// The runtime directory.
        dir: PathBuf,
        /// The socket.
        socket: PathBuf,
    },
    /// The registration file is not a valid registration.
    #[error("invalid registration {}: {cause}", path.display())]
    Registration {
        /// The registration file.
        path: PathBuf,
        /// What the parser said.
        cause: serde_json::Error,
    },
    /// The credentials of a connected peer could not be read.
    #[error("cannot read the credentials of a connecting peer: {0}")]
    PeerCredentials(io::Error),
    /// A connecting peer runs as another user.
    #[error("connection refused: peer uid {peer} is not {ours}")]
    PeerRefused {
        /// The peer's user id.
        peer: u32,
        /// Our effective user id.
        ours: u32,
    },
}

impl RuntimeError {
    /// An [`RuntimeError::Io`] for `action` on `path`.
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> RuntimeError {
        RuntimeError::Io { action, path: path.into(), cause: source }
    }
}

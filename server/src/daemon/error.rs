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

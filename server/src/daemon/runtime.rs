//! The runtime directory, its service lock, the socket and the registration file: how a daemon claims a
//! directory, tells clients where and how to reach it, checks who connects, and gives it all back on exit.

use std::env;
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use nix::fcntl::Flock;
use nix::unistd::{User, geteuid};
use opencode_pty_protocol::{LOCK_FILE, PROTOCOL_VERSION, REGISTRATION_FILE, Registration};

use crate::terminal::SHELL_DIR;

pub(crate) use super::error::RuntimeError;
use super::files::{PRIVATE_FILE_MODE, TEMP_PREFIX, TEMP_SUFFIX, read_registration, set_mode};
use super::lock::{LiveHolder, lock_runtime_dir, socket_answers, still_linked};
use super::socket::{SocketDir, choose_socket_dir, socket_path_in};

/// Checks that `name` is a single safe path component: non-empty, not `.` or `..`, and only ASCII letters,
/// digits, `.`, `_` and `-`.
pub fn validate_name(name: &str) -> Result<(), RuntimeError> {
    let safe_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    if name.is_empty() || name == "." || name == ".." || !name.bytes().all(safe_byte) {
        return Err(RuntimeError::InvalidName(name.to_owned()));
    }
    Ok(())
}

/// Where runtime directories live by default: see [`default_root_from`]. A missing or empty `HOME` falls back
/// to the home directory of the effective user's passwd entry.
pub fn default_root() -> PathBuf {
    let home = env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from).or_else(|| {
        let user = User::from_uid(geteuid()).ok().flatten()?;
        Some(user.dir).filter(|dir| !dir.as_os_str().is_empty())
    });
    default_root_from(env::var_os("XDG_STATE_HOME").as_deref(), home.as_deref(), &env::temp_dir())
}

/// `xdg/opencode/pty` when `xdg` (`$XDG_STATE_HOME`) is absolute; else `home/.local/state/opencode/pty` when
/// `home` is non-empty; else `temp/opencode/pty`.
pub(crate) fn default_root_from(xdg: Option<&OsStr>, home: Option<&Path>, temp: &Path) -> PathBuf {
    if let Some(xdg) = xdg.map(Path::new).filter(|xdg| xdg.is_absolute()) {
        return xdg.join("opencode").join("pty");
    }
    if let Some(home) = home.filter(|home| !home.as_os_str().is_empty()) {
        return home.join(".local").join("state").join("opencode").join("pty");
    }
    temp.join("opencode").join("pty")
}

/// Refuses a connection whose peer does not run as our effective user.
pub(crate) fn check_peer(stream: &UnixStream) -> Result<(), RuntimeError> {
    let peer = peer_uid(stream)?;
    let ours = geteuid().as_raw();
    if peer_allowed(peer, ours) { Ok(()) } else { Err(RuntimeError::PeerRefused { peer, ours }) }
}

/// Whether a peer running as `peer_uid` may talk to a daemon running as `our_uid`.
fn peer_allowed(peer_uid: u32, our_uid: u32) -> bool {
    peer_uid == our_uid
}

/// The user id of the process on the other end of `stream` (`SO_PEERCRED`).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn peer_uid(stream: &UnixStream) -> Result<u32, RuntimeError> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let credentials = getsockopt(stream, PeerCredentials).map_err(|e| RuntimeError::PeerCredentials(e.into()))?;
    Ok(credentials.uid())
}

/// The user id of the process on the other end of `stream` (`getpeereid`).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn peer_uid(stream: &UnixStream) -> Result<u32, RuntimeError> {
    let (uid, _) = nix::unistd::getpeereid(stream).map_err(|e| RuntimeError::PeerCredentials(e.into()))?;
    Ok(uid.as_raw())
}

/// A claimed runtime directory: its service lock (held while this lives), the listening socket and the
/// registration written for it. Give it back with [`Runtime::cleanup`]; merely dropping it releases the lock
/// but leaves the files for the next daemon or a sweep.
#[derive(Debug)]
pub(crate) struct Runtime {
    dir: PathBuf,
    /// The runtime directory's (device, inode), to notice it removed or replaced ([`Runtime::check`]).
    dir_id: (u64, u64),
    lock: Flock<File>,
    /// Taken by the accept loop ([`Runtime::take_listener`]), which closes it as soon as the daemon stops.
    listener: Option<UnixListener>,
    socket_dir: SocketDir,
    socket_path: PathBuf,
    /// The socket file's (device, inode), to unlink it only while it is still ours.
    socket_id: (u64, u64),
    registration: Registration,
}

/// The runtime directory an in-place upgrade's predecessor claimed, planned ([`Runtime::plan_resume`]), then
/// published ([`ResumedRuntime::publish`]) and taken on with the service lock it held
/// ([`ResumedRuntime::into_runtime`]). The listening socket is served apart (it was passed on too); the socket
/// file and its directory are the predecessor's, and go with this daemon at its stop as they would have with
/// it.
#[derive(Debug)]
pub(crate) struct ResumedRuntime {
    dir: PathBuf,
    dir_id: (u64, u64),
    socket_dir: SocketDir,
    socket_path: PathBuf,
    socket_id: (u64, u64),
    registration: Registration,
}

impl ResumedRuntime {
    /// Writes the registration unless the file holds it already: it differs when this build announces another
    /// protocol or other features, or when a new image wrote its own and then fell back to this one.
    pub(crate) fn publish(&self) -> Result<(), RuntimeError> {
        if read_registration(&self.dir).is_ok_and(|found| found == self.registration) {
            return Ok(());
        }
        write_registration(&self.dir, &self.registration)
    }

    /// The runtime, with the service lock the predecessor held (`lock`: the same open file, passed across
    /// `execve`, or a duplicate of it).
    pub(crate) fn into_runtime(self, lock: Flock<File>) -> Runtime {
        let ResumedRuntime { dir, dir_id, socket_dir, socket_path, socket_id, registration } = self;
        Runtime { dir, dir_id, lock, listener: None, socket_dir, socket_path, socket_id, registration }
    }
}

/// What [`Runtime::check`] found.
#[derive(Debug)]
pub(crate) enum Checked {
    /// The directory, the lock file and the registration are still ours.
    Intact,
    /// Some were gone or replaced, and are ours again: the lock (taken anew, on a new file), the registration.
    /// The caller rewrites what else it keeps there (the record of process groups).
    Repaired(&'static str),
    /// Another daemon took the directory's new lock: this daemon must stop.
    Lost(RuntimeError),
    /// Something could not be repaired now; the next check tries again.
    Failed(RuntimeError),
}

impl Runtime {
    /// Claims `root/name`: creates it (0700), takes its service lock, binds the socket (0600) in the socket
    /// directory (`socket::choose_socket_dir`, under `socket_tmp` unless `$XDG_RUNTIME_DIR` serves) and writes the
    /// registration (0600) atomically. A socket at that path that a live daemon listens on is never unlinked.
    pub(crate) fn bind(root: &Path, name: &str, socket_tmp: &Path) -> Result<Runtime, RuntimeError> {
        validate_name(name)?;
        // Absolute, so the guardian (which runs in `/`) and everything else that is handed the directory's paths
        // find the same files whatever the working directory.
        let joined = root.join(name);
        let dir = std::path::absolute(&joined).map_err(|e| RuntimeError::io("resolve", joined.clone(), e))?;
        let lock = lock_runtime_dir(&dir, LiveHolder::RefuseAtOnce)?;
        let dir_id = identity(&dir)?;
        let socket_dir = choose_socket_dir(env::var_os("XDG_RUNTIME_DIR").as_deref(), socket_tmp)?;
        let forget_socket_dir = |error| {
            if socket_dir.fresh {
                let _ = fs::remove_dir(&socket_dir.path);
            }
            error
        };
        let socket_path = socket_path_in(&socket_dir.path, &dir).map_err(forget_socket_dir)?;
        // A daemon whose runtime directory was removed still listens here: its socket is not stale.
        if socket_answers(&socket_path) {
            return Err(forget_socket_dir(RuntimeError::LiveSocket { dir, socket: socket_path }));
        }
        match fs::remove_file(&socket_path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(forget_socket_dir(RuntimeError::io("remove stale socket", &socket_path, e))),
        }
        let listener = UnixListener::bind(&socket_path)
            .map_err(|e| forget_socket_dir(RuntimeError::io("listen on", &socket_path, e)))?;
        let meta = fs::symlink_metadata(&socket_path).map_err(|e| RuntimeError::io("inspect", &socket_path, e));
        let meta = meta.map_err(forget_socket_dir)?;
        let registration = Registration {
            instance_id: random_hex(),
            pid: std::process::id(),
            protocol: PROTOCOL_VERSION,
            // What the schema's `x-features` announces (SPEC V2), in the registration and in `pong` alike.
            features: opencode_pty_protocol::FEATURES.iter().map(|f| (*f).to_owned()).collect(),
            socket: socket_path.to_string_lossy().into_owned(),
            token: random_hex(),
        };
        let socket_id = (meta.dev(), meta.ino());
        let runtime =
            Runtime { dir, dir_id, lock, listener: Some(listener), socket_dir, socket_path, socket_id, registration };
        let finished = set_mode(&runtime.socket_path, PRIVATE_FILE_MODE, "set permissions of socket")
            .and_then(|()| write_registration(&runtime.dir, &runtime.registration));
        match finished {
            Ok(()) => Ok(runtime),
            Err(e) => {
                runtime.cleanup();
                Err(e)
            }
        }
    }

    /// The runtime directory an in-place upgrade's predecessor claimed, as this image will take it on
    /// ([`ResumedRuntime`]): its path and identity, and the registration it published with this build's
    /// protocol and features. Nothing is written or taken: a resuming image asks this before it commits.
    pub(crate) fn plan_resume(
        root: &Path,
        name: &str,
        published: Registration,
    ) -> Result<ResumedRuntime, RuntimeError> {
        validate_name(name)?;
        let joined = root.join(name);
        let dir = std::path::absolute(&joined).map_err(|e| RuntimeError::io("resolve", joined.clone(), e))?;
        let dir_id = identity(&dir)?;
        let socket_path = PathBuf::from(&published.socket);
        // Removed meanwhile: then nothing at that path is ours to remove at the stop.
        let socket_id = identity(&socket_path).unwrap_or((0, 0));
        let socket_dir = SocketDir::holding(&socket_path);
        let registration = Registration {
            protocol: PROTOCOL_VERSION,
            features: opencode_pty_protocol::FEATURES.iter().map(|f| (*f).to_owned()).collect(),
            ..published
        };
        Ok(ResumedRuntime { dir, dir_id, socket_dir, socket_path, socket_id, registration })
    }

    /// The service lock's file (an upgrade passes a duplicate of it on: the lock goes with the open file).
    pub(crate) fn lock_file(&self) -> &File {
        &self.lock
    }

    /// The runtime directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The listening socket, until it is taken.
    #[cfg(test)]
    pub(crate) fn listener(&self) -> Option<&UnixListener> {
        self.listener.as_ref()
    }

    /// Takes the listening socket, so that whoever serves it can close it early.
    pub(crate) fn take_listener(&mut self) -> Option<UnixListener> {
        self.listener.take()
    }

    /// The registration written for this daemon.
    pub(crate) fn registration(&self) -> &Registration {
        &self.registration
    }

    /// The socket's path.
    #[cfg(test)]
    pub(crate) fn socket_path(&self) -> &Path {
        &self.socket_path
    }

    /// Checks that the runtime directory, its lock file and the registration are still this daemon's (same
    /// device and inode, same instance); when one was removed or replaced (say `rm -r` of the directory),
    /// recreates the directory, takes the lock anew (waiting at most `LOCK_WAIT` for a holder) and rewrites the
    /// registration. A lock another daemon holds longer means it owns the directory now: [`Checked::Lost`].
    pub(crate) fn check(&mut self) -> Checked {
        let lock_path = self.dir.join(LOCK_FILE);
        let dir_same = identity(&self.dir).is_ok_and(|id| id == self.dir_id);
        let lock_same = dir_same && still_linked(&self.lock, &lock_path);
        let registered = read_registration(&self.dir).is_ok_and(|found| found == self.registration);
        if lock_same && registered {
            return Checked::Intact;
        }
        let mut what = "registration";
        if !lock_same {
            what = if dir_same { "lock file" } else { "runtime directory" };
            match lock_runtime_dir(&self.dir, LiveHolder::Wait) {
                Ok(lock) => self.lock = lock,
                Err(error @ RuntimeError::Locked { .. }) => return Checked::Lost(error),
                Err(error) => return Checked::Failed(error),
            }
            match identity(&self.dir) {
                Ok(id) => self.dir_id = id,
                Err(error) => return Checked::Failed(error),
            }
        }
        match write_registration(&self.dir, &self.registration) {
            Ok(()) => Checked::Repaired(what),
            Err(error) => Checked::Failed(error),
        }
    }

    /// Gives the runtime directory back: removes the registration and the socket only while they are still ours
    /// (a successor may have replaced them), removes the lock file while holding the lock, removes the directory
    /// if it is then empty (and a socket directory made for this daemon alone), and releases the lock. Never
    /// fails; problems go to stderr.
    pub(crate) fn cleanup(self) {
        let Runtime { dir, lock, listener, socket_dir, socket_path, socket_id, registration, .. } = self;
        if read_registration(&dir).is_ok_and(|found| found.instance_id == registration.instance_id) {
            remove_logged(&dir.join(REGISTRATION_FILE));
        }
        if fs::symlink_metadata(&socket_path).is_ok_and(|meta| (meta.dev(), meta.ino()) == socket_id) {
            remove_logged(&socket_path);
        }
        drop(listener);
        if socket_dir.fresh {
            let _ = fs::remove_dir(&socket_dir.path);
        }
        // Scripts of terminals that are gone by now (each terminal removes its own; this is what a crash left).
        let _ = fs::remove_dir_all(dir.join(SHELL_DIR));
        let lock_path = dir.join(LOCK_FILE);
        if still_linked(&lock, &lock_path) {
            remove_logged(&lock_path);
        }
        let _ = fs::remove_dir(&dir);
        drop(lock);
    }
}

/// The (device, inode) of `path` itself (a symbolic link is not followed).
fn identity(path: &Path) -> Result<(u64, u64), RuntimeError> {
    let meta = fs::symlink_metadata(path).map_err(|e| RuntimeError::io("inspect", path, e))?;
    Ok((meta.dev(), meta.ino()))
}

/// Writes `dir/service.json` atomically: a private temp file, synced, renamed over it; then syncs the directory.
fn write_registration(dir: &Path, registration: &Registration) -> Result<(), RuntimeError> {
    let target = dir.join(REGISTRATION_FILE);
    let temp = dir.join(format!("{TEMP_PREFIX}{}{TEMP_SUFFIX}", registration.instance_id));
    let json = serde_json::to_vec_pretty(registration).map_err(|e| RuntimeError::io("encode", &target, e.into()))?;
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE_MODE)
        .open(&temp)
        .and_then(|mut file| file.write_all(&json).and_then(|()| file.sync_all()))
        .map_err(|e| RuntimeError::io("write", &temp, e))
        .and_then(|()| fs::rename(&temp, &target).map_err(|e| RuntimeError::io("write registration", &target, e)));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written?;
    // Best effort: make the rename itself durable.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Removes a file, reporting any failure but a missing file on stderr.
fn remove_logged(path: &Path) {
    if let Err(e) = fs::remove_file(path)
        && e.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), error = %e, "cannot remove a runtime file");
    }
}

/// 32 random lowercase hex characters.
pub(crate) fn random_hex() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests;

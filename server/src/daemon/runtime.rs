//! The runtime directory, its service lock, the socket and the registration file: how a daemon claims a
//! directory, tells clients where and how to reach it, checks who connects, and gives it all back on exit.

use std::env;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use nix::unistd::{User, geteuid};
use opencode_pty_protocol::{LOCK_FILE, PROTOCOL_VERSION, REGISTRATION_FILE, Registration};
use sha2::{Digest, Sha256};

pub(crate) use super::error::RuntimeError;

/// Registration temp files are named `service.<instance_id>.tmp`: this prefix ...
pub(crate) const TEMP_PREFIX: &str = "service.";
/// ... and this suffix.
pub(crate) const TEMP_SUFFIX: &str = ".tmp";
/// Sockets live in `/tmp/opencode-pty-<euid>`, a short fixed path, because socket paths are limited in length.
pub(crate) const SOCKET_ROOT_PREFIX: &str = "/tmp/opencode-pty-";
/// The socket's file name is this many leading bytes of the SHA-256 of the canonical runtime directory, in hex.
pub(crate) const SOCKET_HASH_BYTES: usize = 16;
/// The socket's file name extension.
pub(crate) const SOCKET_SUFFIX: &str = ".sock";
/// The longest Unix socket path the platforms accept is one byte less than this (macOS `sun_path` holds 104
/// bytes with the terminating NUL, Linux 108); our socket paths stay far below it.
#[cfg(test)]
pub(crate) const SOCKET_PATH_LIMIT: usize = 104;
/// How many times `bind` retries taking the service lock when the lock file it locked was removed meanwhile
/// (by a daemon finishing its cleanup, or by a sweep) and so no longer guards the directory.
pub(crate) const LOCK_ATTEMPTS: usize = 8;
/// Permissions of the runtime directory and of the socket directory.
const PRIVATE_DIR_MODE: u32 = 0o700;
/// Permissions of the lock file, the registration and the socket.
const PRIVATE_FILE_MODE: u32 = 0o600;

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

/// The directory holding the sockets of the effective user: `/tmp/opencode-pty-<euid>`.
pub(crate) fn socket_root() -> PathBuf {
    PathBuf::from(format!("{SOCKET_ROOT_PREFIX}{}", geteuid().as_raw()))
}

/// The socket path of a runtime directory: in [`socket_root`], named by a hash of the directory's canonical path.
pub(crate) fn socket_path_for(runtime_dir: &Path) -> Result<PathBuf, RuntimeError> {
    let canonical =
        fs::canonicalize(runtime_dir).map_err(|e| RuntimeError::io("resolve runtime directory", runtime_dir, e))?;
    Ok(socket_root().join(socket_file_name(&canonical)))
}

/// The socket file name for a canonical runtime directory.
fn socket_file_name(canonical: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let digest = Sha256::digest(canonical.as_os_str().as_bytes());
    let mut name = String::with_capacity(SOCKET_HASH_BYTES * 2 + SOCKET_SUFFIX.len());
    for byte in &digest[..SOCKET_HASH_BYTES] {
        let _ = write!(name, "{byte:02x}");
    }
    name + SOCKET_SUFFIX
}

/// Creates the socket directory `root` (mode 0700) if missing, refuses it unless it is a real directory (not a
/// symbolic link) owned by `euid`, and makes it private.
pub(crate) fn prepare_socket_root(root: &Path, euid: u32) -> Result<(), RuntimeError> {
    match DirBuilder::new().mode(PRIVATE_DIR_MODE).create(root) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(RuntimeError::io("create socket directory", root, e)),
    }
    check_private_dir(root, euid, "socket directory")?;
    set_mode(root, PRIVATE_DIR_MODE, "set permissions of socket directory")
}

/// Refuses `path` unless it is a real directory (not a symbolic link) owned by `euid`.
fn check_private_dir(path: &Path, euid: u32, what: &'static str) -> Result<(), RuntimeError> {
    let meta = fs::symlink_metadata(path).map_err(|e| RuntimeError::io("inspect", path, e))?;
    let refuse = |reason: String| Err(RuntimeError::UnsafeDirectory { what, path: path.to_owned(), reason });
    if meta.file_type().is_symlink() {
        return refuse("it is a symbolic link".into());
    }
    if !meta.is_dir() {
        return refuse("it is not a directory".into());
    }
    if meta.uid() != euid {
        return refuse(format!("it is owned by uid {}, not by uid {euid}", meta.uid()));
    }
    Ok(())
}

/// Reads and parses `dir/service.json`.
pub(crate) fn read_registration(dir: &Path) -> Result<Registration, RuntimeError> {
    let path = dir.join(REGISTRATION_FILE);
    let text = fs::read(&path).map_err(|e| RuntimeError::io("read registration", &path, e))?;
    serde_json::from_slice(&text).map_err(|source| RuntimeError::Registration { path, cause: source })
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
    lock: Flock<File>,
    /// Taken by the accept loop ([`Runtime::take_listener`]), which closes it as soon as the daemon stops.
    listener: Option<UnixListener>,
    socket_path: PathBuf,
    /// The socket file's (device, inode), to unlink it only while it is still ours.
    socket_id: (u64, u64),
    registration: Registration,
}

impl Runtime {
    /// Claims `root/name`: creates it (0700), takes its service lock, binds the socket (0600) and writes the
    /// registration (0600) atomically.
    pub(crate) fn bind(root: &Path, name: &str) -> Result<Runtime, RuntimeError> {
        validate_name(name)?;
        // Absolute, so the guardian (which runs in `/`) and everything else that is handed the directory's paths
        // find the same files whatever the working directory.
        let joined = root.join(name);
        let dir = std::path::absolute(&joined).map_err(|e| RuntimeError::io("resolve", joined.clone(), e))?;
        let lock = lock_runtime_dir(&dir)?;
        prepare_socket_root(&socket_root(), geteuid().as_raw())?;
        let socket_path = socket_path_for(&dir)?;
        match fs::remove_file(&socket_path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(RuntimeError::io("remove stale socket", &socket_path, e)),
        }
        let listener = UnixListener::bind(&socket_path).map_err(|e| RuntimeError::io("listen on", &socket_path, e))?;
        let meta = fs::symlink_metadata(&socket_path).map_err(|e| RuntimeError::io("inspect", &socket_path, e))?;
        let registration = Registration {
            instance_id: random_hex(),
            pid: std::process::id(),
            protocol: PROTOCOL_VERSION,
            features: Vec::new(),
            socket: socket_path.to_string_lossy().into_owned(),
            token: random_hex(),
        };
        let socket_id = (meta.dev(), meta.ino());
        let runtime = Runtime { dir, lock, listener: Some(listener), socket_path, socket_id, registration };
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

    /// Gives the runtime directory back: removes the registration and the socket only while they are still ours
    /// (a successor may have replaced them), removes the lock file while holding the lock, removes the directory
    /// if it is then empty, and releases the lock. Never fails; problems go to stderr.
    pub(crate) fn cleanup(self) {
        let Runtime { dir, lock, listener, socket_path, socket_id, registration } = self;
        if read_registration(&dir).is_ok_and(|found| found.instance_id == registration.instance_id) {
            remove_logged(&dir.join(REGISTRATION_FILE));
        }
        if fs::symlink_metadata(&socket_path).is_ok_and(|meta| (meta.dev(), meta.ino()) == socket_id) {
            remove_logged(&socket_path);
        }
        drop(listener);
        let lock_path = dir.join(LOCK_FILE);
        if still_linked(&lock, &lock_path) {
            remove_logged(&lock_path);
        }
        let _ = fs::remove_dir(&dir);
        drop(lock);
    }
}

/// Creates `dir` (0700) and takes its service lock, exclusively and without waiting. Retries when the lock
/// file was unlinked between opening and locking it, since a lock on an unlinked file guards nothing.
fn lock_runtime_dir(dir: &Path) -> Result<Flock<File>, RuntimeError> {
    let path = dir.join(LOCK_FILE);
    for _ in 0..LOCK_ATTEMPTS {
        fs::create_dir_all(dir).map_err(|e| RuntimeError::io("create runtime directory", dir, e))?;
        // Never follow a symbolic link planted where the runtime directory should be.
        check_private_dir(dir, geteuid().as_raw(), "runtime directory")?;
        set_mode(dir, PRIVATE_DIR_MODE, "set permissions of runtime directory")?;
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false).mode(PRIVATE_FILE_MODE);
        let file = match options.open(&path) {
            Ok(file) => file,
            // The directory was removed since we created it: start over.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(RuntimeError::io("open service lock", &path, e)),
        };
        let lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => lock,
            Err((_, errno)) if errno == Errno::EWOULDBLOCK => {
                return Err(RuntimeError::Locked { dir: dir.to_owned() });
            }
            Err((_, errno)) => return Err(RuntimeError::io("lock", &path, errno.into())),
        };
        if still_linked(&lock, &path) {
            return Ok(lock);
        }
    }
    Err(RuntimeError::io("lock", &path, io::Error::other("the lock file kept being removed while we locked it")))
}

/// Whether `path` still names the file `file` has open.
fn still_linked(file: &File, path: &Path) -> bool {
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => (open.dev(), open.ino()) == (named.dev(), named.ino()),
        _ => false,
    }
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

/// Sets the permission bits of `path`.
fn set_mode(path: &Path, mode: u32, action: &'static str) -> Result<(), RuntimeError> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(|e| RuntimeError::io(action, path, e))
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
mod tests {
    use super::*;
    use std::os::unix::fs::{FileTypeExt, symlink};
    use tempfile::TempDir;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn is_hex32(text: &str) -> bool {
        text.len() == 32 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    }

    #[test]
    fn validate_name_accepts_safe_components() {
        for name in ["ee7511b8-7db0.x_1", "a", "A.b", "..."] {
            validate_name(name).unwrap();
        }
    }

    #[test]
    fn validate_name_rejects_unsafe_components() {
        for name in ["", ".", "..", "a/b", "../x", "with space", "é", "a\0b"] {
            let error = validate_name(name).unwrap_err().to_string();
            assert!(error.starts_with(&format!("invalid runtime name {name:?}")), "{error}");
        }
        let root = TempDir::new().unwrap();
        assert!(matches!(Runtime::bind(root.path(), ".."), Err(RuntimeError::InvalidName(_))));
    }

    #[test]
    fn default_root_prefers_absolute_xdg_then_home_then_temp() {
        let (home, temp) = (Some(Path::new("/home/u")), Path::new("/t"));
        let state = Path::new("/home/u/.local/state/opencode/pty");
        assert_eq!(default_root_from(Some(OsStr::new("/state")), home, temp), Path::new("/state/opencode/pty"));
        assert_eq!(default_root_from(Some(OsStr::new("state")), home, temp), state, "relative xdg is ignored");
        assert_eq!(default_root_from(Some(OsStr::new("")), home, temp), state);
        assert_eq!(default_root_from(None, None, temp), Path::new("/t/opencode/pty"));
        assert_eq!(default_root_from(None, Some(Path::new("")), temp), Path::new("/t/opencode/pty"));
    }

    #[test]
    fn socket_path_is_a_short_hash_of_the_canonical_dir() {
        let temp = TempDir::new().unwrap();
        let path = socket_path_for(temp.path()).unwrap();
        assert_eq!(path.parent().unwrap(), socket_root());
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(is_hex32(name.strip_suffix(SOCKET_SUFFIX).unwrap()), "{name}");
        assert!(path.as_os_str().len() < SOCKET_PATH_LIMIT);
        assert_eq!(socket_path_for(&temp.path().join(".")).unwrap(), path);
        let missing = socket_path_for(&temp.path().join("missing")).unwrap_err().to_string();
        assert!(missing.starts_with("cannot resolve runtime directory"), "{missing}");
    }

    #[test]
    fn bind_creates_private_runtime() {
        let root = TempDir::new().unwrap();
        let runtime = Runtime::bind(root.path(), "one").unwrap();
        let dir = root.path().join("one");
        assert_eq!(runtime.dir(), dir);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join(REGISTRATION_FILE)), 0o600);
        assert_eq!(mode(&dir.join(LOCK_FILE)), 0o600);
        assert_eq!(mode(&socket_root()), 0o700);
        let socket = runtime.socket_path();
        assert!(fs::symlink_metadata(socket).unwrap().file_type().is_socket());
        assert_eq!(mode(socket), 0o600);
        assert!(socket.as_os_str().len() < SOCKET_PATH_LIMIT);
        assert_eq!(socket, socket_path_for(&dir).unwrap());

        let registration = read_registration(&dir).unwrap();
        assert_eq!(&registration, runtime.registration());
        assert!(is_hex32(&registration.instance_id) && is_hex32(&registration.token));
        assert_ne!(registration.instance_id, registration.token);
        assert_eq!((registration.protocol, registration.pid), (8, std::process::id()));
        assert!(registration.features.is_empty());
        assert_eq!(Path::new(&registration.socket), socket);
        let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "no temp file is left: {names:?}");

        let _client = UnixStream::connect(socket).unwrap();
        let (server, _) = runtime.listener().unwrap().accept().unwrap();
        check_peer(&server).unwrap();
        runtime.cleanup();
    }

    #[test]
    fn second_bind_fails_while_first_lives() {
        let root = TempDir::new().unwrap();
        let first = Runtime::bind(root.path(), "shared").unwrap();
        let error = Runtime::bind(root.path(), "shared").unwrap_err();
        assert!(matches!(error, RuntimeError::Locked { .. }));
        let expected = format!("another opencode-pty daemon already runs in {}", root.path().join("shared").display());
        assert_eq!(error.to_string(), expected);
        first.cleanup();
        Runtime::bind(root.path(), "shared").unwrap().cleanup();
    }

    #[test]
    fn cleanup_removes_everything() {
        let root = TempDir::new().unwrap();
        let runtime = Runtime::bind(root.path(), "gone").unwrap();
        let socket = runtime.socket_path().to_owned();
        runtime.cleanup();
        assert!(!socket.exists());
        assert!(!root.path().join("gone").exists());
    }

    #[test]
    fn cleanup_keeps_successor_registration() {
        let root = TempDir::new().unwrap();
        let runtime = Runtime::bind(root.path(), "handoff").unwrap();
        let mut successor = runtime.registration().clone();
        successor.instance_id = random_hex();
        let json = root.path().join("handoff").join(REGISTRATION_FILE);
        fs::write(&json, serde_json::to_vec(&successor).unwrap()).unwrap();
        runtime.cleanup();
        assert_eq!(read_registration(&root.path().join("handoff")).unwrap(), successor);
        assert!(!root.path().join("handoff").join(LOCK_FILE).exists());
    }

    #[test]
    fn cleanup_keeps_successor_socket() {
        let root = TempDir::new().unwrap();
        let runtime = Runtime::bind(root.path(), "rebound").unwrap();
        let socket = runtime.socket_path().to_owned();
        fs::remove_file(&socket).unwrap();
        let successor = UnixListener::bind(&socket).unwrap();
        runtime.cleanup();
        assert!(fs::symlink_metadata(&socket).unwrap().file_type().is_socket());
        drop(successor);
        fs::remove_file(&socket).unwrap();
    }

    #[test]
    fn socket_root_is_private_and_must_be_an_own_real_directory() {
        let temp = TempDir::new().unwrap();
        let euid = geteuid().as_raw();
        let real = temp.path().join("real");
        prepare_socket_root(&real, euid).unwrap();
        assert_eq!(mode(&real), 0o700);
        fs::set_permissions(&real, fs::Permissions::from_mode(0o755)).unwrap();
        prepare_socket_root(&real, euid).unwrap();
        assert_eq!(mode(&real), 0o700);
        let link = temp.path().join("link");
        symlink(&real, &link).unwrap();
        let error = prepare_socket_root(&link, euid).unwrap_err().to_string();
        assert_eq!(error, format!("refusing socket directory {}: it is a symbolic link", link.display()));
        let file = temp.path().join("file");
        fs::write(&file, "").unwrap();
        assert!(prepare_socket_root(&file, euid).unwrap_err().to_string().ends_with("it is not a directory"));
        let foreign = prepare_socket_root(&real, euid.wrapping_add(1)).unwrap_err().to_string();
        assert!(foreign.contains(&format!("not by uid {}", euid.wrapping_add(1))), "{foreign}");
    }

    #[test]
    fn only_peers_of_our_uid_are_allowed() {
        assert!(peer_allowed(1000, 1000));
        assert!(!peer_allowed(0, 1000));
        assert!(!peer_allowed(1001, 1000));
        let refused = RuntimeError::PeerRefused { peer: 0, ours: 1000 };
        assert_eq!(refused.to_string(), "connection refused: peer uid 0 is not 1000");
        let (a, b) = UnixStream::pair().unwrap();
        check_peer(&a).unwrap();
        check_peer(&b).unwrap();
    }
}

//! Tests of the runtime directory: binding, cleanup, and the check that repairs a removed directory.

use super::*;
use crate::daemon::socket::{SOCKET_PATH_LIMIT, socket_path_in};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use tempfile::TempDir;

/// Binds `name` in `root`, its socket directory under `root/tmp` (unless `$XDG_RUNTIME_DIR` serves).
fn bind(root: &TempDir, name: &str) -> Result<Runtime, RuntimeError> {
    let tmp = root.path().join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    Runtime::bind(root.path(), name, &tmp)
}

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
    assert!(matches!(bind(&root, ".."), Err(RuntimeError::InvalidName(_))));
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
fn bind_creates_private_runtime() {
    let root = TempDir::new().unwrap();
    let runtime = bind(&root, "one").unwrap();
    let dir = root.path().join("one");
    assert_eq!(runtime.dir(), dir);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join(REGISTRATION_FILE)), 0o600);
    assert_eq!(mode(&dir.join(LOCK_FILE)), 0o600);
    assert_eq!(mode(&runtime.socket_dir.path), 0o700);
    let socket = runtime.socket_path();
    assert!(fs::symlink_metadata(socket).unwrap().file_type().is_socket());
    assert_eq!(mode(socket), 0o600);
    assert!(socket.as_os_str().len() < SOCKET_PATH_LIMIT);
    assert_eq!(socket, socket_path_in(&runtime.socket_dir.path, &dir).unwrap());

    let registration = read_registration(&dir).unwrap();
    assert_eq!(&registration, runtime.registration());
    assert!(is_hex32(&registration.instance_id) && is_hex32(&registration.token));
    assert_ne!(registration.instance_id, registration.token);
    assert_eq!((registration.protocol, registration.pid), (8, std::process::id()));
    assert_eq!(registration.features, opencode_pty_protocol::FEATURES, "the schema's x-features (SPEC V2)");
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
    let first = bind(&root, "shared").unwrap();
    let error = bind(&root, "shared").unwrap_err();
    assert!(matches!(error, RuntimeError::Locked { .. }));
    let expected = format!("another opencode-pty daemon already runs in {}", root.path().join("shared").display());
    assert_eq!(error.to_string(), expected);
    first.cleanup();
    bind(&root, "shared").unwrap().cleanup();
}

#[test]
fn cleanup_removes_everything() {
    let root = TempDir::new().unwrap();
    let runtime = bind(&root, "gone").unwrap();
    let socket = runtime.socket_path().to_owned();
    runtime.cleanup();
    assert!(!socket.exists());
    assert!(!root.path().join("gone").exists());
}

#[test]
fn cleanup_keeps_successor_registration() {
    let root = TempDir::new().unwrap();
    let runtime = bind(&root, "handoff").unwrap();
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
    let runtime = bind(&root, "rebound").unwrap();
    let socket = runtime.socket_path().to_owned();
    fs::remove_file(&socket).unwrap();
    let successor = UnixListener::bind(&socket).unwrap();
    runtime.cleanup();
    assert!(fs::symlink_metadata(&socket).unwrap().file_type().is_socket());
    drop(successor);
    fs::remove_file(&socket).unwrap();
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

#[test]
fn an_idle_runtime_stays_intact_and_untouched() {
    let root = TempDir::new().unwrap();
    let mut runtime = bind(&root, "idle").unwrap();
    let registration = runtime.dir().join(REGISTRATION_FILE);
    let before = fs::metadata(&registration).unwrap().ino();
    for _ in 0..3 {
        assert!(matches!(runtime.check(), Checked::Intact));
    }
    assert_eq!(fs::metadata(&registration).unwrap().ino(), before, "an intact registration is not rewritten");
    runtime.cleanup();
}

#[test]
fn a_removed_runtime_directory_is_recreated_with_a_new_lock_and_the_registration() {
    let root = TempDir::new().unwrap();
    let mut runtime = bind(&root, "removed").unwrap();
    let dir = runtime.dir().to_owned();
    fs::remove_dir_all(&dir).unwrap();
    assert!(matches!(runtime.check(), Checked::Repaired("runtime directory")));
    assert_eq!(&read_registration(&dir).unwrap(), runtime.registration());
    assert!(still_linked(&runtime.lock, &dir.join(LOCK_FILE)));
    let error = bind(&root, "removed").unwrap_err();
    assert!(matches!(error, RuntimeError::Locked { .. }), "the new lock is held: {error}");
    assert!(matches!(runtime.check(), Checked::Intact));
    // Only the lock file removed: a new one is locked.
    fs::remove_file(dir.join(LOCK_FILE)).unwrap();
    assert!(matches!(runtime.check(), Checked::Repaired("lock file")));
    assert!(still_linked(&runtime.lock, &dir.join(LOCK_FILE)));
    // Only the registration replaced: it is written again, the lock kept.
    fs::write(dir.join(REGISTRATION_FILE), "{}").unwrap();
    assert!(matches!(runtime.check(), Checked::Repaired("registration")));
    assert_eq!(&read_registration(&dir).unwrap(), runtime.registration());
    runtime.cleanup();
    assert!(!dir.exists());
}

#[test]
fn a_removed_directory_whose_new_lock_another_holds_is_lost() {
    let root = TempDir::new().unwrap();
    let mut runtime = bind(&root, "taken").unwrap();
    let dir = runtime.dir().to_owned();
    fs::remove_dir_all(&dir).unwrap();
    fs::create_dir(&dir).unwrap();
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(dir.join(LOCK_FILE));
    let _other = Flock::lock(file.unwrap(), nix::fcntl::FlockArg::LockExclusiveNonblock).unwrap();
    let checked = runtime.check();
    assert!(matches!(checked, Checked::Lost(RuntimeError::Locked { .. })), "{checked:?}");
    let socket = runtime.socket_path().to_owned();
    runtime.cleanup();
    assert!(!socket.exists(), "its own socket goes with it");
    assert!(dir.join(LOCK_FILE).exists(), "the other daemon's lock file stays");
}

#[test]
fn a_second_daemon_never_unlinks_a_live_socket() {
    let root = TempDir::new().unwrap();
    let first = bind(&root, "live").unwrap();
    let socket = first.socket_path().to_owned();
    // The directory, and with it the lock and the registration, removed under the first daemon.
    fs::remove_dir_all(first.dir()).unwrap();
    let error = bind(&root, "live").unwrap_err();
    let expected = format!(
        "another opencode-pty daemon already runs in {}: it listens on {}",
        first.dir().display(),
        socket.display()
    );
    assert_eq!(error.to_string(), expected);
    let _client = UnixStream::connect(&socket).expect("the first daemon's socket is still there");
    first.cleanup();
}

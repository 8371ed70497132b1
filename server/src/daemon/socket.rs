//! Where a daemon's socket lives. Socket paths are limited in length, so the socket is not in the runtime
//! directory but in a short private directory: `$XDG_RUNTIME_DIR/opencode-pty` when the session has a private
//! runtime directory (owned by us, mode 0700: private by design), else `/tmp/opencode-pty-<euid>`. Anyone can
//! create that path in `/tmp` first (a directory of theirs, a symbolic link, a FIFO); then the daemon makes a
//! fresh private directory `/tmp/opencode-pty-<euid>-XXXXXX` of its own instead, removed at its stop. Clients
//! never compute the path: they read it from the registration.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::unistd::geteuid;
use sha2::{Digest, Sha256};

use super::error::RuntimeError;
use super::files::{PRIVATE_DIR_MODE, check_private_dir, set_mode};

/// Where the usual socket directory `opencode-pty-<euid>` is made when there is no `$XDG_RUNTIME_DIR`: a short
/// fixed path (the hidden `--socket-tmp` option moves it, for tests of a squatted one).
pub const DEFAULT_SOCKET_TMP: &str = "/tmp";
/// The usual socket directory's name in [`DEFAULT_SOCKET_TMP`] is this followed by the effective uid.
pub(crate) const SOCKET_DIR_PREFIX: &str = "opencode-pty-";
/// The socket directory's name inside `$XDG_RUNTIME_DIR`.
pub(crate) const XDG_SOCKET_DIR: &str = "opencode-pty";
/// The socket's file name is this many leading bytes of the SHA-256 of the canonical runtime directory, in hex.
pub(crate) const SOCKET_HASH_BYTES: usize = 16;
/// The socket's file name extension.
pub(crate) const SOCKET_SUFFIX: &str = ".sock";
/// The longest Unix socket path the platforms accept is one byte less than this (macOS `sun_path` holds 104
/// bytes with the terminating NUL, Linux 108); a socket directory whose socket paths would not fit is skipped.
pub(crate) const SOCKET_PATH_LIMIT: usize = 104;

/// The socket directory a daemon uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SocketDir {
    /// The directory.
    pub(crate) path: PathBuf,
    /// Made for this daemon alone (the usual one was not ours): removed at its stop.
    pub(crate) fresh: bool,
}

impl SocketDir {
    /// The socket directory that holds `socket` (a predecessor chose it): fresh unless it is the usual one in
    /// `$XDG_RUNTIME_DIR` or in the temporary directory.
    pub(crate) fn holding(socket: &Path) -> SocketDir {
        let path = socket.parent().map(Path::to_path_buf).unwrap_or_default();
        let usual = format!("{SOCKET_DIR_PREFIX}{}", geteuid().as_raw());
        let name = path.file_name().and_then(OsStr::to_str).unwrap_or_default();
        SocketDir { fresh: name.starts_with(&format!("{usual}-")), path }
    }
}

/// Picks and prepares the socket directory: `xdg/opencode-pty` when `xdg` (`$XDG_RUNTIME_DIR`) is an absolute,
/// private directory of ours; else `tmp/opencode-pty-<euid>` when it is (or can be made) a private directory of
/// ours; else a fresh private `tmp/opencode-pty-<euid>-XXXXXX`. Fails only when none can be made, naming the
/// owner of the squatted usual path.
pub(crate) fn choose_socket_dir(xdg: Option<&OsStr>, tmp: &Path) -> Result<SocketDir, RuntimeError> {
    let euid = geteuid().as_raw();
    if let Some(xdg) = xdg.map(Path::new).filter(|xdg| private_runtime_dir(xdg, euid)) {
        let dir = xdg.join(XDG_SOCKET_DIR);
        match prepare_socket_root(&dir, euid).and_then(|()| fits(&dir)) {
            Ok(()) => return Ok(SocketDir { path: dir, fresh: false }),
            Err(error) => tracing::warn!(%error, "not using $XDG_RUNTIME_DIR for the socket"),
        }
    }
    let usual = tmp.join(format!("{SOCKET_DIR_PREFIX}{euid}"));
    let refused = match prepare_socket_root(&usual, euid).and_then(|()| fits(&usual)) {
        Ok(()) => return Ok(SocketDir { path: usual, fresh: false }),
        Err(RuntimeError::UnsafeDirectory { reason, .. }) => reason,
        Err(other) => other.to_string(),
    };
    let template = tmp.join(format!("{SOCKET_DIR_PREFIX}{euid}-XXXXXX"));
    let fresh = nix::unistd::mkdtemp(&template)
        .map_err(|e| e.to_string())
        .and_then(|dir| {
            // mkdtemp makes it 0700; check it anyway, as for any directory we trust.
            check_private_dir(&dir, euid, "socket directory").and_then(|()| fits(&dir)).map_err(|error| {
                let _ = fs::remove_dir(&dir);
                error.to_string()
            })?;
            Ok(dir)
        })
        .map_err(|cause| RuntimeError::NoSocketDirectory { usual: usual.clone(), reason: refused.clone(), cause })?;
    tracing::warn!(usual = %usual.display(), reason = %refused, fallback = %fresh.display(),
        "the usual socket directory is not ours; using a private one of this daemon's (named in the registration)");
    Ok(SocketDir { path: fresh, fresh: true })
}

/// Whether `dir` is an absolute, real directory owned by `euid` that nobody else may enter (mode 0700 or
/// stricter), as `$XDG_RUNTIME_DIR` is by definition.
fn private_runtime_dir(dir: &Path, euid: u32) -> bool {
    dir.is_absolute()
        && fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir() && meta.uid() == euid && meta.mode() & 0o077 == 0)
}

/// Refuses a socket directory whose socket paths would be too long for `bind`.
fn fits(dir: &Path) -> Result<(), RuntimeError> {
    let longest = dir.as_os_str().len() + 1 + SOCKET_HASH_BYTES * 2 + SOCKET_SUFFIX.len();
    if longest < SOCKET_PATH_LIMIT {
        return Ok(());
    }
    let reason = format!("its socket paths would be {longest} bytes, over the limit of {}", SOCKET_PATH_LIMIT - 1);
    Err(RuntimeError::UnsafeDirectory { what: "socket directory", path: dir.to_owned(), reason })
}

/// The socket path of a runtime directory in socket directory `socket_dir`, named by a hash of the runtime
/// directory's canonical path.
pub(crate) fn socket_path_in(socket_dir: &Path, runtime_dir: &Path) -> Result<PathBuf, RuntimeError> {
    let canonical =
        fs::canonicalize(runtime_dir).map_err(|e| RuntimeError::io("resolve runtime directory", runtime_dir, e))?;
    Ok(socket_dir.join(socket_file_name(&canonical)))
}

/// The socket file name for a canonical runtime directory.
pub(crate) fn socket_file_name(canonical: &Path) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};
    use tempfile::TempDir;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn socket_path_is_a_short_hash_of_the_canonical_dir() {
        let temp = TempDir::new().unwrap();
        let sockets = Path::new("/tmp/opencode-pty-0");
        let path = socket_path_in(sockets, temp.path()).unwrap();
        assert_eq!(path.parent().unwrap(), sockets);
        let name = path.file_name().unwrap().to_str().unwrap();
        let hash = name.strip_suffix(SOCKET_SUFFIX).unwrap();
        assert!(hash.len() == 32 && hash.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert!(path.as_os_str().len() < SOCKET_PATH_LIMIT);
        assert_eq!(socket_path_in(sockets, &temp.path().join(".")).unwrap(), path);
        let missing = socket_path_in(sockets, &temp.path().join("missing")).unwrap_err().to_string();
        assert!(missing.starts_with("cannot resolve runtime directory"), "{missing}");
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
        let expected =
            format!("refusing socket directory {}: it is a symbolic link to {}", link.display(), real.display());
        assert_eq!(error, expected);
        let file = temp.path().join("file");
        fs::write(&file, "").unwrap();
        let error = prepare_socket_root(&file, euid).unwrap_err().to_string();
        assert!(error.ends_with("it is a regular file, not a directory"), "{error}");
        let foreign = prepare_socket_root(&real, euid.wrapping_add(1)).unwrap_err().to_string();
        assert!(foreign.contains(&format!("it is owned by uid {euid}")), "{foreign}");
        assert!(foreign.contains(&format!("not by uid {}", euid.wrapping_add(1))), "{foreign}");
    }

    #[test]
    fn the_private_xdg_runtime_dir_is_preferred() {
        let temp = TempDir::new().unwrap();
        let xdg = temp.path().join("xdg");
        DirBuilder::new().mode(0o700).create(&xdg).unwrap();
        let chosen = choose_socket_dir(Some(xdg.as_os_str()), &temp.path().join("tmp")).unwrap();
        assert_eq!(chosen, SocketDir { path: xdg.join(XDG_SOCKET_DIR), fresh: false });
        assert_eq!(mode(&chosen.path), 0o700);
        // Open to others, or relative: not private by design, so not used.
        fs::set_permissions(&xdg, fs::Permissions::from_mode(0o755)).unwrap();
        let tmp = temp.path().join("tmp");
        fs::create_dir(&tmp).unwrap();
        let usual = tmp.join(format!("{SOCKET_DIR_PREFIX}{}", geteuid().as_raw()));
        assert_eq!(choose_socket_dir(Some(xdg.as_os_str()), &tmp).unwrap().path, usual);
        assert_eq!(choose_socket_dir(Some(OsStr::new("relative")), &tmp).unwrap().path, usual);
    }

    #[test]
    fn the_socket_directory_of_a_predecessors_socket_is_fresh_only_when_it_was_made_for_it() {
        let euid = geteuid().as_raw();
        let holding = |dir: String| SocketDir::holding(&Path::new(&dir).join("0123.sock"));
        let usual = format!("/tmp/{SOCKET_DIR_PREFIX}{euid}");
        assert_eq!(holding(usual.clone()), SocketDir { path: usual.clone().into(), fresh: false });
        let xdg = format!("/run/user/{euid}/{XDG_SOCKET_DIR}");
        assert_eq!(holding(xdg.clone()), SocketDir { path: xdg.into(), fresh: false });
        let made = format!("{usual}-AbC123");
        assert_eq!(holding(made.clone()), SocketDir { path: made.into(), fresh: true });
    }

    #[test]
    fn a_squatted_usual_directory_gives_a_fresh_private_one() {
        let temp = TempDir::new().unwrap();
        let tmp = temp.path();
        let usual = tmp.join(format!("{SOCKET_DIR_PREFIX}{}", geteuid().as_raw()));
        let elsewhere = tmp.join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        symlink(&elsewhere, &usual).unwrap();
        let chosen = choose_socket_dir(None, tmp).unwrap();
        assert!(chosen.fresh);
        let name = chosen.path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with(&format!("{SOCKET_DIR_PREFIX}{}-", geteuid().as_raw())), "{name}");
        assert_eq!(mode(&chosen.path), 0o700);
        assert!(fs::read_dir(&elsewhere).unwrap().next().is_none(), "the link's target is left alone");
        // No fallback possible (the socket paths would be too long): the message names what squats the path.
        let long = tmp.join("x".repeat(80));
        fs::create_dir(&long).unwrap();
        let squatted = long.join(format!("{SOCKET_DIR_PREFIX}{}", geteuid().as_raw()));
        symlink(&elsewhere, &squatted).unwrap();
        let error = choose_socket_dir(None, &long).unwrap_err().to_string();
        let expected = format!(
            "refusing socket directory {}: it is a symbolic link to {}",
            squatted.display(),
            elsewhere.display()
        );
        assert!(error.starts_with(&expected), "{error}");
        assert!(error.contains("no private directory could be made instead"), "{error}");
    }
}

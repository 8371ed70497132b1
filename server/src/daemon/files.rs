//! The private files of a runtime directory: their modes (0700 for the directories, 0600 for the files), the
//! names of temp files, the check that a directory is a real one of ours, and reading the registration. The
//! runtime directory, its lock, the socket directory and the recovery side build on these.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use nix::unistd::User;
use opencode_pty_protocol::{REGISTRATION_FILE, Registration};

use super::error::RuntimeError;

/// Registration temp files are named `service.<instance_id>.tmp`: this prefix ...
pub(crate) const TEMP_PREFIX: &str = "service.";
/// ... and this suffix.
pub(crate) const TEMP_SUFFIX: &str = ".tmp";
/// Permissions of the runtime directory and of the socket directory.
pub(crate) const PRIVATE_DIR_MODE: u32 = 0o700;
/// Permissions of the lock file, the registration and the socket.
pub(crate) const PRIVATE_FILE_MODE: u32 = 0o600;

/// Refuses `path` unless it is a real directory (not a symbolic link) owned by `euid`; the reason says what
/// was found instead (where a link points, whose directory it is).
pub(crate) fn check_private_dir(path: &Path, euid: u32, what: &'static str) -> Result<(), RuntimeError> {
    let meta = fs::symlink_metadata(path).map_err(|e| RuntimeError::io("inspect", path, e))?;
    let refuse = |reason: String| Err(RuntimeError::UnsafeDirectory { what, path: path.to_owned(), reason });
    if meta.file_type().is_symlink() {
        let target = fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_else(|e| format!("? ({e})"));
        return refuse(format!("it is a symbolic link to {target}"));
    }
    if !meta.is_dir() {
        return refuse(format!("it is {}, not a directory", kind_of(&meta.file_type())));
    }
    if meta.uid() != euid {
        let owner = User::from_uid(meta.uid().into()).ok().flatten().map(|user| format!(" ({})", user.name));
        return refuse(format!("it is owned by uid {}{}, not by uid {euid}", meta.uid(), owner.unwrap_or_default()));
    }
    Ok(())
}

/// Words for what a file is.
pub(crate) fn kind_of(kind: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_file() {
        "a regular file"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "something else"
    }
}

/// Reads and parses `dir/service.json`.
pub(crate) fn read_registration(dir: &Path) -> Result<Registration, RuntimeError> {
    let path = dir.join(REGISTRATION_FILE);
    let text = fs::read(&path).map_err(|e| RuntimeError::io("read registration", &path, e))?;
    serde_json::from_slice(&text).map_err(|source| RuntimeError::Registration { path, cause: source })
}

/// Sets the permission bits of `path`.
pub(crate) fn set_mode(path: &Path, mode: u32, action: &'static str) -> Result<(), RuntimeError> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(|e| RuntimeError::io(action, path, e))
}

//! Which program an upgrade executes, and whether it may: an absolute path to a regular file that we may
//! execute, that nobody but its owner can write, owned by us or by root; without one, this daemon's own
//! executable as it is on disk now (a package upgrade replaced the file).
//!
//! The file is opened once (`O_PATH`, which opens nothing but the name: no device is touched, no FIFO waits),
//! every check is made of that open file, and the upgrade executes that same file through its descriptor
//! ([`Program::execute`]): what runs is what was checked, whatever is renamed over the path in between.

use std::ffi::CString;
use std::fs;
use std::io::{self, Read as _};
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::errno::Errno;
use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;
use nix::unistd::{AccessFlags, eaccess, geteuid};

/// What `/proc/self/exe` says after the file it names was removed or replaced.
const DELETED_SUFFIX: &str = " (deleted)";

/// The link that names this process's executable.
const OWN_EXE_LINK: &str = "/proc/self/exe";

/// The mode bits that let the group or others write a file.
const WRITABLE_BY_OTHERS: u32 = 0o022;

/// The mode bits that let anyone execute a file.
const EXECUTABLE_BITS: u32 = 0o111;

/// Why a program cannot be upgraded to. Nothing has changed when one is returned.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    /// The path does not start at `/`.
    #[error("cannot upgrade to {0}: the path is relative; give an absolute path")]
    Relative(PathBuf),
    /// Nothing is at the path.
    #[error("cannot upgrade to {0}: no such file")]
    Missing(PathBuf),
    /// Something is at the path, but not a regular file (a directory, a socket, ...).
    #[error("cannot upgrade to {path}: it is {kind}, not a regular file")]
    NotRegular {
        /// The program's path.
        path: PathBuf,
        /// What was found there.
        kind: &'static str,
    },
    /// The file has no execute permission for us.
    #[error("cannot upgrade to {path}: it is not executable by this daemon's user (mode {mode:o})")]
    NotExecutable {
        /// The program's path.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The group or others may write the file, so someone else could choose what the daemon becomes.
    #[error("cannot upgrade to {path}: it is writable by its group or by others (mode {mode:o})")]
    WritableByOthers {
        /// The program's path.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file belongs to another user, who could choose what the daemon becomes.
    #[error("cannot upgrade to {path}: it is owned by user {owner}, neither this daemon's user ({ours}) nor root")]
    ForeignOwner {
        /// The program's path.
        path: PathBuf,
        /// The file's owner.
        owner: u32,
        /// The daemon's effective user.
        ours: u32,
    },
    /// The file could not be inspected.
    #[error("cannot upgrade to {path}: cannot inspect it: {source}")]
    Inspect {
        /// The program's path.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// No program was named and this daemon's own executable has no path on disk any more.
    #[error(
        "cannot upgrade: no program was named, and this daemon's own executable ({link}) is no longer on disk; \
         name the new program's absolute path"
    )]
    NoOwnExecutable {
        /// What `/proc/self/exe` names.
        link: String,
    },
    /// No program was named and `/proc/self/exe` cannot be read.
    #[error("cannot upgrade: no program was named, and this daemon's own executable cannot be found: {0}")]
    OwnExecutable(io::Error),
    /// The file at the path is no longer the one that was checked.
    #[error("cannot upgrade to {0}: the file changed since it was checked")]
    Changed(PathBuf),
}

/// The first bytes of a script, which the kernel runs with the interpreter it names.
const SCRIPT_MAGIC: &[u8; 2] = b"#!";

/// A program that passed every check, and the file it was then, open.
#[derive(Debug, Clone)]
pub struct Program {
    path: PathBuf,
    identity: Identity,
    /// The file checked (`O_PATH`, close-on-exec).
    file: Arc<OwnedFd>,
    /// It starts with `#!`: its interpreter reads it through `/dev/fd/N`, so the exec passes its descriptor.
    script: bool,
}

impl PartialEq for Program {
    fn eq(&self, other: &Program) -> bool {
        (&self.path, self.identity) == (&other.path, other.identity)
    }
}

impl Eq for Program {}

/// A file's device, inode and change time: a file replaced at the same path differs in one of them, even when
/// the new file reuses the old one's inode number.
type Identity = (u64, u64, i64, i64);

/// `meta`'s [`Identity`].
fn identity(meta: &fs::Metadata) -> Identity {
    (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec())
}

impl Program {
    /// Checks `requested`, or without one this daemon's own executable as it is on disk now, for an upgrade.
    pub(crate) fn resolve(requested: Option<&Path>) -> Result<Program, ProgramError> {
        match requested {
            Some(path) => Program::check(path),
            None => Program::check(&own_executable_on_disk()?),
        }
    }

    /// Checks `path`: absolute, a regular file (after symbolic links), executable by us, writable by nobody but
    /// its owner, owned by us or by root; each of the file opened at the path, which is kept open.
    pub(crate) fn check(path: &Path) -> Result<Program, ProgramError> {
        if !path.is_absolute() {
            return Err(ProgramError::Relative(path.to_owned()));
        }
        let inspect = |source: io::Error| match source.kind() {
            io::ErrorKind::NotFound => ProgramError::Missing(path.to_owned()),
            _ => ProgramError::Inspect { path: path.to_owned(), source },
        };
        let file = open(path, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty()).map_err(|e| inspect(e.into()))?;
        let opened = opened_path(file.as_fd());
        let meta = fs::metadata(&opened).map_err(inspect)?;
        if !meta.is_file() {
            return Err(ProgramError::NotRegular { path: path.to_owned(), kind: kind_of(&meta) });
        }
        let mode = meta.mode() & 0o7777;
        let ours = geteuid().as_raw();
        if meta.uid() != ours && meta.uid() != 0 {
            return Err(ProgramError::ForeignOwner { path: path.to_owned(), owner: meta.uid(), ours });
        }
        if mode & WRITABLE_BY_OTHERS != 0 {
            return Err(ProgramError::WritableByOthers { path: path.to_owned(), mode });
        }
        // `eaccess` alone would let root execute a file without any execute bit (it says yes to root).
        if mode & EXECUTABLE_BITS == 0 || eaccess(&opened, AccessFlags::X_OK).is_err() {
            return Err(ProgramError::NotExecutable { path: path.to_owned(), mode });
        }
        let script = starts_a_script(&opened);
        Ok(Program { path: path.to_owned(), identity: identity(&meta), file: Arc::new(file), script })
    }

    /// The program's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file checked, open (`O_PATH`, close-on-exec).
    pub(crate) fn file(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// Whether the file is a script (it starts with `#!`): its interpreter opens it again through the
    /// descriptor it was executed by, which must then cross the exec (the new image closes it,
    /// `inherited::close_strays`).
    pub(crate) fn is_script(&self) -> bool {
        self.script
    }

    /// Executes the file checked (not whatever the path names now) with `argv` and `env`, in place of this
    /// process. Returns only if that failed. The caller makes [`Self::file`] inheritable for a script.
    pub(crate) fn execute(&self, argv: &[CString], env: &[CString]) -> Errno {
        let Err(errno) = nix::unistd::fexecve(self.file.as_fd(), argv, env);
        errno
    }

    /// Checks that the file at the path is still the one that was checked (nobody swapped it in between).
    pub(crate) fn unchanged(&self) -> Result<(), ProgramError> {
        match fs::metadata(&self.path) {
            Ok(meta) if identity(&meta) == self.identity => Ok(()),
            Ok(_) => Err(ProgramError::Changed(self.path.clone())),
            Err(source) if source.kind() == io::ErrorKind::NotFound => Err(ProgramError::Missing(self.path.clone())),
            Err(source) => Err(ProgramError::Inspect { path: self.path.clone(), source }),
        }
    }
}

/// The path through which `fd`'s file is reached again (the kernel's link to the open file itself).
fn opened_path(fd: BorrowedFd<'_>) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// Whether the file at `opened` starts with `#!` (a file we cannot read is no script we could run).
fn starts_a_script(opened: &Path) -> bool {
    let mut magic = [0u8; SCRIPT_MAGIC.len()];
    fs::File::open(opened).and_then(|mut file| file.read_exact(&mut magic)).is_ok() && &magic == SCRIPT_MAGIC
}

/// This daemon's executable as it is on disk now: what `/proc/self/exe` names, or, when the file it started
/// from was replaced (the link then ends in " (deleted)"), the file now at that path.
pub(crate) fn own_executable_on_disk() -> Result<PathBuf, ProgramError> {
    let link = fs::read_link(OWN_EXE_LINK).map_err(ProgramError::OwnExecutable)?;
    on_disk(&link).ok_or_else(|| ProgramError::NoOwnExecutable { link: link.to_string_lossy().into_owned() })
}

/// The file a `/proc/<pid>/exe` link's text names now: the text itself when a file is there (a name that
/// really ends in " (deleted)" included), else the text without the suffix the kernel adds to a removed file.
pub(crate) fn on_disk(link: &Path) -> Option<PathBuf> {
    if link.exists() {
        return Some(link.to_owned());
    }
    let text = link.to_str()?;
    let stripped = Path::new(text.strip_suffix(DELETED_SUFFIX)?);
    stripped.exists().then(|| stripped.to_owned())
}

/// What a file that is not a regular file is, for the error.
fn kind_of(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A file with `mode` in a fresh directory.
    fn file_with_mode(dir: &tempfile::TempDir, name: &str, mode: u32) -> PathBuf {
        let path = dir.path().join(name);
        fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_private_executable_is_accepted_and_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with_mode(&dir, "new", 0o755);
        let program = Program::resolve(Some(&path)).unwrap();
        assert_eq!(program.path(), path);
        program.unchanged().unwrap();
        // Replaced by another file at the same path: refused at the last check.
        let other = file_with_mode(&dir, "other", 0o755);
        fs::rename(&other, &path).unwrap();
        let error = program.unchanged().unwrap_err().to_string();
        assert_eq!(error, format!("cannot upgrade to {}: the file changed since it was checked", path.display()));
    }

    #[test]
    fn a_relative_path_is_refused() {
        let error = Program::resolve(Some(Path::new("bin/opencode-pty"))).unwrap_err().to_string();
        assert_eq!(error, "cannot upgrade to bin/opencode-pty: the path is relative; give an absolute path");
    }

    #[test]
    fn a_missing_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent");
        let error = Program::resolve(Some(&path)).unwrap_err().to_string();
        assert_eq!(error, format!("cannot upgrade to {}: no such file", path.display()));
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let error = Program::resolve(Some(dir.path())).unwrap_err().to_string();
        assert_eq!(error, format!("cannot upgrade to {}: it is a directory, not a regular file", dir.path().display()));
    }

    #[test]
    fn a_file_without_execute_permission_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with_mode(&dir, "plain", 0o644);
        let error = Program::resolve(Some(&path)).unwrap_err().to_string();
        assert_eq!(
            error,
            format!("cannot upgrade to {}: it is not executable by this daemon's user (mode 644)", path.display())
        );
    }

    #[test]
    fn a_file_writable_by_others_or_the_group_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o757, 0o775, 0o777] {
            let path = file_with_mode(&dir, &format!("open{mode:o}"), mode);
            let error = Program::resolve(Some(&path)).unwrap_err().to_string();
            assert_eq!(
                error,
                format!(
                    "cannot upgrade to {}: it is writable by its group or by others (mode {mode:o})",
                    path.display()
                )
            );
        }
    }

    /// Giving a file away takes root; as another user this test can only check that our own file passes.
    #[test]
    fn a_file_owned_by_another_user_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with_mode(&dir, "theirs", 0o755);
        if !geteuid().is_root() {
            Program::resolve(Some(&path)).unwrap();
            return;
        }
        // `nobody` on most systems; any uid but ours and root's will do.
        let other = 65534;
        nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(other)), None).unwrap();
        let error = Program::resolve(Some(&path)).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "cannot upgrade to {}: it is owned by user {other}, neither this daemon's user (0) nor root",
                path.display()
            )
        );
    }

    #[test]
    fn without_a_program_our_own_executable_is_checked() {
        let exe = std::env::current_exe().unwrap();
        let mode = fs::metadata(&exe).unwrap().mode() & 0o7777;
        match Program::resolve(None) {
            Ok(program) => assert_eq!(program.path(), exe),
            // A build tree made under umask 002 (user private groups): refused, rightly.
            Err(ProgramError::WritableByOthers { path, .. }) if mode & WRITABLE_BY_OTHERS != 0 => {
                assert_eq!(path, exe)
            }
            Err(error) => panic!("{error}"),
        }
    }

    #[test]
    fn a_replaced_executable_is_found_at_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with_mode(&dir, "daemon", 0o755);
        // What `/proc/self/exe` says once a package upgrade replaced the file: the new file is found.
        let link = PathBuf::from(format!("{}{DELETED_SUFFIX}", path.display()));
        assert_eq!(on_disk(&link), Some(path.clone()));
        assert_eq!(on_disk(&path), Some(path.clone()));
        // A name that really ends in the suffix is itself.
        let odd = file_with_mode(&dir, "odd (deleted)", 0o755);
        assert_eq!(on_disk(&odd), Some(odd.clone()));
        // Removed and not replaced: nothing.
        fs::remove_file(&path).unwrap();
        assert_eq!(on_disk(&link), None);
    }
}

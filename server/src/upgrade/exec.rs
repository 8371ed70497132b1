//! The handover itself: the state goes into a sealed memory file, the old executable stays open (so a new image
//! that cannot take the state can go back to it, whatever happened to the file on disk), exactly the descriptors
//! the daemon keeps lose close-on-exec, and the process becomes `PROGRAM resume --state-fd N
//! --fallback-exe-fd M -- <daemon arguments>`: same pid, same children, same descriptors.
//!
//! The caller must have stopped everything that starts processes (creates, the guardian's restart) before
//! [`upgrade`]: between clearing close-on-exec and `execve` a child started by another thread would inherit
//! the kept descriptors. If `execve` fails, every flag is put back and the daemon goes on as it was.

use std::convert::Infallible;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, FdFlag, fcntl};

use super::envelope::{EnvelopeError, seal};
use super::program::{Program, ProgramError};

/// The hidden command a new image starts with.
pub(crate) const RESUME_COMMAND: &str = "resume";

/// The option naming the state's memory file.
pub(crate) const STATE_FD_OPTION: &str = "--state-fd";

/// The option naming the old executable, open, for the fallback.
pub(crate) const FALLBACK_EXE_FD_OPTION: &str = "--fallback-exe-fd";

/// The link that names this process's executable, which stays readable when the file is replaced.
const OWN_EXE: &str = "/proc/self/exe";

/// Why an upgrade's `execve` did not happen. The daemon is as it was: every descriptor's flags are back.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The program changed or vanished since it was checked.
    #[error(transparent)]
    Program(#[from] ProgramError),
    /// The state could not be put in its memory file.
    #[error(transparent)]
    State(#[from] EnvelopeError),
    /// The old executable could not be kept open.
    #[error("cannot keep this daemon's executable open for a fallback: {0}")]
    OwnExecutable(std::io::Error),
    /// A descriptor's close-on-exec flag could not be read or cleared.
    #[error("cannot pass descriptor {fd} to the new image: {errno}")]
    Descriptor {
        /// The descriptor.
        fd: RawFd,
        /// What the system said.
        errno: Errno,
    },
    /// An argument or variable holds a NUL byte, which `execve` cannot pass.
    #[error("cannot pass {0:?} to the new image: it holds a NUL byte")]
    Nul(OsString),
    /// `execve` itself failed.
    #[error("cannot execute {program}: {errno}")]
    Exec {
        /// What was executed.
        program: String,
        /// What the system said.
        errno: Errno,
    },
}

/// The old executable, open, to go back to when the new image cannot take the state.
#[derive(Debug)]
pub(crate) struct FallbackExe(OwnedFd);

impl FallbackExe {
    /// This process's own executable, as it started (even if the file on disk was replaced since).
    pub(crate) fn current() -> Result<FallbackExe, ExecError> {
        FallbackExe::open(Path::new(OWN_EXE))
    }

    /// The executable at `path` (tests: a fallback other than the test binary).
    pub(crate) fn open(path: &Path) -> Result<FallbackExe, ExecError> {
        // Read-only and close-on-exec (the standard library's default); the flag is cleared with the others.
        File::open(path).map(|file| FallbackExe(file.into())).map_err(ExecError::OwnExecutable)
    }
}

/// What is ready to cross `execve`: the sealed state and the old executable.
#[derive(Debug)]
pub(crate) struct Handover {
    state: OwnedFd,
    exe: FallbackExe,
}

impl Handover {
    /// Seals `payload` of `format` into a memory file and keeps `exe` for the fallback.
    pub(crate) fn prepare(format: u32, payload: &[u8], exe: FallbackExe) -> Result<Handover, ExecError> {
        Ok(Handover { state: seal(format, payload)?, exe })
    }

    /// The state's descriptor number (the same in the new image).
    pub(crate) fn state_fd(&self) -> RawFd {
        self.state.as_raw_fd()
    }

    /// The old executable's descriptor number (the same in the new image).
    pub(crate) fn exe_fd(&self) -> RawFd {
        self.exe.0.as_raw_fd()
    }

    /// The new image's arguments (after its name): `resume --state-fd N --fallback-exe-fd M -- <daemon_args>`.
    pub(crate) fn resume_args(&self, daemon_args: &[OsString]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            RESUME_COMMAND.into(),
            STATE_FD_OPTION.into(),
            self.state_fd().to_string().into(),
            FALLBACK_EXE_FD_OPTION.into(),
            self.exe_fd().to_string().into(),
            "--".into(),
        ];
        args.extend(daemon_args.iter().cloned());
        args
    }

    /// Executes `program` with `args` (after its name) and this process's environment, passing `keep`, the
    /// state and the old executable. Returns only if that failed, with every descriptor as it was.
    pub(crate) fn exec(self, program: &Program, args: &[OsString], keep: &[BorrowedFd<'_>]) -> ExecError {
        let Err(error) = self.try_exec(program, args, keep);
        error
    }

    /// [`Handover::exec`], with `?`. The file executed is the one checked, through its descriptor (named by its
    /// path in `argv[0]`): a file renamed over the path after [`Program::unchanged`] is not what runs.
    fn try_exec(self, program: &Program, args: &[OsString], keep: &[BorrowedFd<'_>]) -> Result<Infallible, ExecError> {
        let Handover { state, exe } = self;
        program.unchanged()?;
        let argv = std::iter::once(program.path().as_os_str())
            .chain(args.iter().map(OsString::as_os_str))
            .map(c_string)
            .collect::<Result<Vec<_>, _>>()?;
        let env = environment()?;
        let mut passed: Vec<BorrowedFd<'_>> = keep.iter().copied().chain([state.as_fd(), exe.0.as_fd()]).collect();
        // A script's interpreter reads it through `/dev/fd/N`: its descriptor must cross the exec.
        passed.extend(program.is_script().then(|| program.file()));
        // Put back when this returns: the exec failed.
        let _restore = Inheritable::clear(&passed)?;
        tracing::info!(program = %program.path().display(), kept = keep.len(), "executing the new image in place");
        let errno = program.execute(&argv, &env);
        Err(ExecError::Exec { program: program.path().display().to_string(), errno })
    }
}

/// The daemon's one call: executes `program` as `PROGRAM resume ...` with the state (`format`, `payload`),
/// `keep` and this executable for the fallback. Returns only if the exec did not happen; the daemon then goes
/// on as it was (the caller restarts what it stopped).
pub(crate) fn upgrade(
    program: &Program,
    format: u32,
    payload: &[u8],
    keep: &[BorrowedFd<'_>],
    daemon_args: &[OsString],
) -> ExecError {
    let handover = match FallbackExe::current().and_then(|exe| Handover::prepare(format, payload, exe)) {
        Ok(handover) => handover,
        Err(error) => return error,
    };
    let args = handover.resume_args(daemon_args);
    handover.exec(program, &args, keep)
}

/// The arguments this daemon was started with, after the program's name, as a new image must be given them
/// again after `--`: `daemon ...` as typed, or, in an image an upgrade started, what followed its `--`.
pub(crate) fn daemon_args() -> Vec<OsString> {
    daemon_args_of(std::env::args_os().skip(1).collect())
}

/// [`daemon_args`] of the arguments `args` (after the program's name).
pub(crate) fn daemon_args_of(args: Vec<OsString>) -> Vec<OsString> {
    if args.first().is_some_and(|first| first == RESUME_COMMAND) {
        return args.into_iter().skip_while(|arg| arg != "--").skip(1).collect();
    }
    args
}

/// Descriptors whose close-on-exec flag was cleared to pass them to the next image; dropped (the exec failed),
/// it puts every flag back.
pub(crate) struct Inheritable<'a> {
    cleared: Vec<(BorrowedFd<'a>, FdFlag)>,
}

impl<'a> Inheritable<'a> {
    /// Clears close-on-exec on each of `fds`; on an error, puts back what it cleared.
    pub(crate) fn clear(fds: &[BorrowedFd<'a>]) -> Result<Inheritable<'a>, ExecError> {
        let mut done = Inheritable { cleared: Vec::with_capacity(fds.len()) };
        for fd in fds {
            let failed = |errno| ExecError::Descriptor { fd: fd.as_raw_fd(), errno };
            let flags = FdFlag::from_bits_retain(fcntl(fd, FcntlArg::F_GETFD).map_err(failed)?);
            fcntl(fd, FcntlArg::F_SETFD(flags - FdFlag::FD_CLOEXEC)).map_err(failed)?;
            done.cleared.push((*fd, flags));
        }
        Ok(done)
    }
}

impl Drop for Inheritable<'_> {
    fn drop(&mut self) {
        // In reverse: a descriptor passed twice ends with its first-seen flags.
        for (fd, flags) in self.cleared.iter().rev() {
            if let Err(errno) = fcntl(fd, FcntlArg::F_SETFD(*flags)) {
                tracing::warn!(fd = fd.as_raw_fd(), %errno, "cannot restore close-on-exec after a failed exec");
            }
        }
    }
}

impl std::fmt::Debug for Inheritable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fds: Vec<RawFd> = self.cleared.iter().map(|(fd, _)| fd.as_raw_fd()).collect();
        f.debug_struct("Inheritable").field("cleared", &fds).finish()
    }
}

/// `text` for `execve`.
pub(crate) fn c_string(text: &OsStr) -> Result<CString, ExecError> {
    CString::new(text.as_bytes()).map_err(|_| ExecError::Nul(text.to_owned()))
}

/// This process's environment for `execve`, as `NAME=value`.
pub(crate) fn environment() -> Result<Vec<CString>, ExecError> {
    std::env::vars_os()
        .map(|(name, value)| {
            let mut entry = name;
            entry.push("=");
            entry.push(value);
            c_string(&entry)
        })
        .collect()
}

#[cfg(test)]
mod tests;

//! The `resume` command, which an upgrade's `execve` starts: it takes the state's memory file and the old
//! executable, and either hands the state to the daemon (`restore_and_serve`, the seam the orchestration fills
//! in) or, when this image cannot take it, executes the old executable again with the same state, so the old
//! image resumes and nothing is lost.
//!
//! This image "cannot take" the state while nothing irreversible has happened: the envelope is foreign or
//! damaged, its format is not one this build reads, the daemon's arguments do not parse, or the restore
//! refuses (or panics) before it commits. Before it commits, the restore takes only what the previous image can
//! take back: it adopts the descriptors into the [`Fallback`], which passes them on again, at the same numbers,
//! if it falls back; it starts threads that wait for their work, and writes the registration (which the
//! previous image writes again). Everything that can fail happens then; it commits as it starts taking the
//! processes, and from then on nothing can fail but a panic, which ends the daemon (its guardian then ends
//! every child).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd, RawFd};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::PathBuf;

use super::envelope::{Handed, STATE_FORMATS, open};
use super::exec::{ExecError, Inheritable, RESUME_COMMAND, STATE_FD_OPTION, c_string, environment};
use super::inherited::{AdoptError, adopt};
use crate::daemon::run::{DaemonError, DaemonOptions};

/// The option by which a new image tells the previous executable why it could not take the state.
const REFUSED_OPTION: &str = "--refused-by-new-image";

/// The name the fallback gives the old image when its executable's path cannot be read.
const FALLBACK_NAME: &str = "opencode-pty";

/// What the `resume` command was given.
#[derive(Debug, Clone)]
pub struct ResumeArgs {
    /// The state's memory file.
    pub state_fd: RawFd,
    /// The old executable, open; absent in an image that is itself the fallback (the last resort).
    pub fallback_exe_fd: Option<RawFd>,
    /// Refuse any state (for tests of the fallback: a new image that cannot take the state).
    pub refuse_state: bool,
    /// Why the new image could not take the state, in the previous executable it fell back to: the owner who
    /// asked for the upgrade is told so, from this image, which serves on.
    pub refused_by_new_image: Option<String>,
    /// Refuse the state at the last step before the commit, once everything that can fail was done (for tests
    /// of the fallback from there).
    pub fail_late: bool,
    /// The daemon's own arguments (`daemon --name ...`), passed on to every image.
    pub daemon_args: Vec<OsString>,
}

/// Why a resumed image ended.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The state's descriptor could not be taken.
    #[error("cannot resume after an upgrade: the state's descriptor: {0}")]
    State(AdoptError),
    /// This image cannot take the state and there is no previous executable to go back to.
    #[error("cannot resume after an upgrade, and no previous executable is left to go back to: {0}")]
    Refused(String),
    /// This image cannot take the state, and executing the previous executable failed.
    #[error(
        "this image cannot take the upgrade state ({why}), and going back to the previous executable failed: {error}"
    )]
    FallBack {
        /// Why this image cannot take the state.
        why: String,
        /// Why the fallback failed.
        error: ExecError,
    },
    /// The resumed daemon failed after it committed to the state.
    #[error(transparent)]
    Daemon(#[from] DaemonError),
}

/// How the restore ended, if not by serving until an orderly stop.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Before the commit: nothing irreversible happened, and the previous image can take the state.
    Refused(String),
    /// After the commit: the daemon ends.
    Failed(DaemonError),
}

/// The previous executable and the state's memory file, while this image may still go back to it, and the
/// descriptors the state names, adopted before the commit, which it would pass back.
#[derive(Debug)]
pub(crate) struct Fallback {
    to: Option<(OwnedFd, File)>,
    adopted: BTreeMap<RawFd, OwnedFd>,
}

impl Fallback {
    /// Adopts the inherited descriptor `fd` (close-on-exec from now on, so no child of this image inherits
    /// it), held here until [`Fallback::commit`]: a fallback passes it on again, at the same number.
    pub(crate) fn adopt(&mut self, fd: RawFd) -> Result<(), AdoptError> {
        self.adopted.insert(fd, adopt(fd)?);
        Ok(())
    }

    /// The adopted descriptor `fd`, until the commit.
    pub(crate) fn adopted(&self, fd: RawFd) -> Option<BorrowedFd<'_>> {
        self.adopted.get(&fd).map(|fd| fd.as_fd())
    }

    /// Gives up the fallback, closing the old executable and the state's memory file (its memory is freed once
    /// the restore drops the state it was handed), and hands over the adopted descriptors: from now on this
    /// image owns the daemon. The restore calls it before its first irreversible act (taking the processes,
    /// serving the socket, taking signals, starting a guardian).
    pub(crate) fn commit(&mut self) -> BTreeMap<RawFd, OwnedFd> {
        self.to = None;
        std::mem::take(&mut self.adopted)
    }

    /// Whether [`Fallback::commit`] was called (or there was no fallback).
    pub(crate) fn committed(&self) -> bool {
        self.to.is_none()
    }
}

/// Restores the daemon from `state` (descriptors included, by number, with `upgrade::inherited`) and serves it
/// until it stops: `daemon::upgrading::resume`.
///
/// Contract: before calling `fallback.commit()`, only look (parse the state, `inherited::check` every number it
/// names), adopt descriptors through `fallback.adopt`, and do what the previous image undoes or ignores; return
/// `Failure::Refused` on anything this image cannot take. Commit, then take the processes, serve.
pub(crate) fn restore_and_serve(
    options: DaemonOptions,
    state: Handed,
    fallback: &mut Fallback,
    refused_by_new_image: Option<String>,
    fail_late: bool,
) -> Result<(), Failure> {
    crate::daemon::upgrading::resume::restore_and_serve(options, state, fallback, refused_by_new_image, fail_late)
}

/// The `resume` command: takes the state, then resumes the daemon (`daemon_options` turns the daemon's
/// arguments into its options) or goes back to the previous executable. Returns `Ok` after an orderly stop.
pub fn resume(
    args: ResumeArgs,
    daemon_options: impl FnOnce(&[OsString]) -> Result<DaemonOptions, String>,
) -> Result<(), ResumeError> {
    let state = File::from(adopt(args.state_fd).map_err(ResumeError::State)?);
    let exe = args.fallback_exe_fd.and_then(|fd| {
        adopt(fd).inspect_err(|error| tracing::warn!(%error, "the previous executable is not available")).ok()
    });
    tracing::info!(pid = std::process::id(), fallback = exe.is_some(), "resuming after an upgrade");
    let read = open(&state);
    // Without a fallback, the state's memory file is closed at once.
    let mut fallback = Fallback { to: exe.map(|exe| (exe, state)), adopted: BTreeMap::new() };
    let why = match read {
        Err(error) => error.to_string(),
        Ok(handed) if !STATE_FORMATS.contains(&handed.format) => {
            format!("its format {} is not one this build reads ({STATE_FORMATS:?})", handed.format)
        }
        Ok(_) if args.refuse_state => "told to refuse it (--refuse-state)".to_owned(),
        Ok(handed) => match daemon_options(&args.daemon_args) {
            Err(error) => format!("the daemon's arguments: {error}"),
            Ok(options) => {
                tracing::info!(format = handed.format, bytes = handed.payload.len(), "took the upgrade state");
                let refused_by = args.refused_by_new_image.clone();
                let restored = catch_unwind(AssertUnwindSafe(|| {
                    restore_and_serve(options, handed, &mut fallback, refused_by, args.fail_late)
                }));
                match restored {
                    Ok(Ok(())) => return Ok(()),
                    Ok(Err(Failure::Failed(error))) => return Err(ResumeError::Daemon(error)),
                    Ok(Err(Failure::Refused(why))) => why,
                    Err(panic) if fallback.committed() => resume_unwind(panic),
                    Err(panic) => format!("the restore panicked: {}", panic_text(panic.as_ref())),
                }
            }
        },
    };
    Err(fall_back(fallback, &args.daemon_args, why))
}

/// Executes the previous executable as `resume --state-fd N -- <daemon_args>` (with no fallback of its own:
/// it wrote this state, so it is the last resort). Returns only if that was impossible.
fn fall_back(fallback: Fallback, daemon_args: &[OsString], why: String) -> ResumeError {
    let Fallback { to, adopted } = fallback;
    let Some((exe, state)) = to else {
        return ResumeError::Refused(why);
    };
    tracing::warn!(%why, "this image cannot take the upgrade state; the previous executable resumes with it");
    let name = previous_name(&exe);
    let mut args: Vec<OsString> = vec![
        name.into_os_string(),
        RESUME_COMMAND.into(),
        STATE_FD_OPTION.into(),
        state.as_raw_fd().to_string().into(),
        REFUSED_OPTION.into(),
        why.clone().into(),
        "--".into(),
    ];
    args.extend(daemon_args.iter().cloned());
    let prepared =
        args.iter().map(|arg| c_string(arg)).collect::<Result<Vec<_>, _>>().and_then(|argv| Ok((argv, environment()?)));
    let error = match prepared {
        Err(error) => error,
        Ok((argv, env)) => {
            // Nothing in this image starts a process before it commits; closed all the same, as in the handover.
            let _closed = crate::process::spawn_gate::GATE.close();
            // The state, and what this image adopted of what it names, at the same numbers.
            let passed: Vec<BorrowedFd<'_>> =
                std::iter::once(state.as_fd()).chain(adopted.values().map(|fd| fd.as_fd())).collect();
            match Inheritable::clear(&passed) {
                Err(error) => error,
                // The old executable stays close-on-exec: the kernel reads it through the descriptor before it
                // closes it, and the old image needs no fallback of its own.
                Ok(_restore) => {
                    let Err(errno) = nix::unistd::fexecve(exe.as_fd(), &argv, &env);
                    let program = format!("the previous executable ({})", args[0].to_string_lossy());
                    ExecError::Exec { program, errno }
                }
            }
        }
    };
    ResumeError::FallBack { why, error }
}

/// The previous executable's path, for its name in the process list: what its descriptor names, without the
/// suffix the kernel adds to a removed file.
fn previous_name(exe: &OwnedFd) -> PathBuf {
    let link = PathBuf::from(format!("/proc/self/fd/{}", exe.as_raw_fd()));
    let Ok(target) = std::fs::read_link(link) else { return PathBuf::from(FALLBACK_NAME) };
    match target.to_str().and_then(|text| text.strip_suffix(" (deleted)")) {
        Some(stripped) => PathBuf::from(stripped),
        None => target,
    }
}

/// A panic's message, if it has one.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str)).unwrap_or("?")
}

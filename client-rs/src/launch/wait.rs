//! The launcher's two waits, each on an event with a deadline and never a sleep: a child's exit (its pidfd
//! turns readable) and a registration appearing (inotify on the runtime root and the daemon's directory,
//! together with the pidfd, so a daemon that dies first ends the wait at once).

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use opencode_pty_protocol::{REGISTRATION_FILE, Registration};

use super::LaunchError;
use crate::registration::MAX_REGISTRATION_BYTES;

/// The pidfd of `child`, readable once it has exited. The child is ours and not yet reaped, so its pid cannot
/// have been given to another process.
pub(super) fn pidfd(child: &Child) -> Result<OwnedFd, LaunchError> {
    let watch = |cause: std::io::Error| LaunchError::Watch { what: format!("the daemon's pid {}", child.id()), cause };
    let raw = i32::try_from(child.id()).ok().and_then(rustix::process::Pid::from_raw);
    let pid = raw.ok_or_else(|| watch(std::io::Error::from(std::io::ErrorKind::InvalidInput)))?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).map_err(|e| watch(e.into()))
}

/// Waits until `child` (whose pidfd is `pidfd`) has exited, at most `within`; reaps it and returns how it
/// ended, or `None` when it still runs at the deadline.
pub(super) fn exit(child: &mut Child, pidfd: &OwnedFd, within: Duration) -> Result<Option<ExitStatus>, LaunchError> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().map_err(LaunchError::Reap)? {
            return Ok(Some(status));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        ready(&mut [PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)], left)?;
    }
}

/// Waits, at most `within`, for `root/name/`[`REGISTRATION_FILE`] to hold a registration naming `child`'s pid.
/// Fails at once when the child exits first.
pub(super) fn registration(
    child: &mut Child,
    pidfd: &OwnedFd,
    root: &Path,
    name: &OsStr,
    within: Duration,
) -> Result<Registration, LaunchError> {
    let deadline = Instant::now() + within;
    let dir = root.join(name);
    let file = dir.join(REGISTRATION_FILE);
    let inotify = Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK).map_err(|e| watching(root, e))?;
    // The root tells when the daemon makes (or makes again) its directory; the directory, when a file in it is
    // written or renamed into place. Every change after a watch is set wakes the loop, which then looks again.
    inotify.add_watch(root, AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO).map_err(|e| watching(root, e))?;
    let in_dir = AddWatchFlags::IN_CLOSE_WRITE | AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_CREATE;
    loop {
        // Not there yet is no error: the root's watch says when it comes.
        let _ = inotify.add_watch(&dir, in_dir | AddWatchFlags::IN_ONLYDIR);
        if let Some(registration) = read(&file)
            && registration.pid == child.id()
        {
            return Ok(registration);
        }
        if let Some(status) = child.try_wait().map_err(LaunchError::Reap)? {
            return Err(LaunchError::Exited { status });
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(LaunchError::NoRegistration { pid: child.id(), file, within });
        }
        let mut fds = [PollFd::new(inotify.as_fd(), PollFlags::POLLIN), PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
        ready(&mut fds, left)?;
        // Only the wake-up matters; the state is read again above. Empty once it would block.
        while inotify.read_events().is_ok_and(|events| !events.is_empty()) {}
    }
}

/// A failure to watch `what`.
fn watching(what: &Path, e: Errno) -> LaunchError {
    LaunchError::Watch { what: what.display().to_string(), cause: e.into() }
}

/// The registration in `file` when there is one that decodes: a half-written file is not one yet.
fn read(file: &Path) -> Option<Registration> {
    let mut bytes = Vec::new();
    std::fs::File::open(file).ok()?.take(MAX_REGISTRATION_BYTES + 1).read_to_end(&mut bytes).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Waits until one of `fds` is ready or `left` has passed (rounded up to the next millisecond, so that a wait
/// never ends just short of its deadline and spins), retrying when a signal interrupts it.
fn ready(fds: &mut [PollFd<'_>], left: Duration) -> Result<(), LaunchError> {
    let millis = left.as_nanos().div_ceil(1_000_000);
    let timeout = PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX);
    match poll(fds, timeout) {
        Ok(_) | Err(Errno::EINTR) => Ok(()),
        Err(e) => Err(LaunchError::Watch { what: "the daemon's start".to_owned(), cause: e.into() }),
    }
}

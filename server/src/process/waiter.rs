//! The daemon's one wait thread, `opencode-pty-wait`: it learns how every child ended ([`ExitStatus`]), without
//! reaping it, and hands that to the child's report. Each child is watched through a pidfd, all of them polled
//! together, so a running process costs a descriptor here instead of a blocked thread of its own.
//!
//! A child is never reaped here (`waitid` with `WNOWAIT`): its pid and process group stay reserved until the
//! process is terminated (see `child`). A report runs on this thread and must not block: a terminal hands the
//! exit to its actor through a channel of its own with room for it, a pipe process records it in its state.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use crate::error::ServiceError;

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExitStatus {
    /// The exit status, when it exited normally.
    pub(crate) exit_code: Option<u32>,
    /// The signal's name (`SIGTERM`), when a signal killed it.
    pub(crate) signal: Option<String>,
}

impl ExitStatus {
    /// How a child ended, from what `waitid` said of it (`None` when it has not ended).
    pub(crate) fn from_wait(status: WaitStatus) -> Option<ExitStatus> {
        match status {
            WaitStatus::Exited(_, code) => Some(ExitStatus { exit_code: Some(code as u32), signal: None }),
            WaitStatus::Signaled(_, signal, _) => {
                Some(ExitStatus { exit_code: None, signal: Some(signal.as_str().to_owned()) })
            }
            _ => None,
        }
    }
}

/// What is told how a child ended (or that waiting for it failed: it was reaped by someone else). Called at
/// most once, on the wait thread; it must not block.
pub(crate) type Report = Box<dyn FnOnce(Result<ExitStatus, Errno>) + Send>;

/// One child being watched.
struct Watch {
    id: u64,
    pid: Pid,
    pidfd: OwnedFd,
    report: Report,
    /// Set when the watch is cancelled. Held while the report runs, so that once a cancel has returned, a report
    /// either was made or never will be.
    cancelled: Arc<Mutex<bool>>,
}

impl Watch {
    fn is_cancelled(&self) -> bool {
        *self.cancelled.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A child's registration with the wait thread. Dropping it cancels the watch: a report not yet made is not
/// made, and the wait thread lets go of the child's pidfd once the child has ended.
/// Returns once any report in progress is over.
#[derive(Debug)]
pub(crate) struct Watched {
    cancelled: Arc<Mutex<bool>>,
}

impl Drop for Watched {
    fn drop(&mut self) {
        *self.cancelled.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }
}

/// The wait thread's inbox: watches not yet taken, and the pipe that wakes its poll.
struct Waiter {
    incoming: Mutex<Vec<Watch>>,
    wake: OwnedFd,
}

/// The wait thread, started by the first watch and running for the rest of the daemon's life.
static WAITER: Mutex<Option<Arc<Waiter>>> = Mutex::new(None);

/// Watches the child `pid` of process `id`: `report` is told how it ended. Fails when the child's pidfd cannot
/// be opened (it was reaped by someone else, or the daemon is out of descriptors) or the wait thread cannot
/// start.
pub(crate) fn watch(id: u64, pid: Pid, report: Report) -> Result<Watched, ServiceError> {
    let raw = rustix::process::Pid::from_raw(pid.as_raw())
        .ok_or_else(|| ServiceError::system("cannot watch the child", format!("invalid pid {pid}")))?;
    let cancelled = Arc::new(Mutex::new(false));
    let pidfd = match rustix::process::pidfd_open(raw, rustix::process::PidfdFlags::empty()) {
        Ok(pidfd) => pidfd,
        // Already reaped by someone else (the kernel does so at once when SIGCHLD is ignored): waiting for it
        // has failed, as it would have later.
        Err(rustix::io::Errno::SRCH) => {
            finish(id, pid, &cancelled, report, Err(Errno::ECHILD));
            return Ok(Watched { cancelled });
        }
        Err(error) => return Err(ServiceError::system("cannot open the child's pidfd", error)),
    };
    let waiter = waiter()?;
    waiter.incoming.lock().unwrap_or_else(|e| e.into_inner()).push(Watch {
        id,
        pid,
        pidfd,
        report,
        cancelled: cancelled.clone(),
    });
    // A full pipe already holds a wake-up that has not been taken.
    let _ = nix::unistd::write(&waiter.wake, &[1]);
    Ok(Watched { cancelled })
}

/// The running wait thread, started on first use.
fn waiter() -> Result<Arc<Waiter>, ServiceError> {
    let mut slot = WAITER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(waiter) = &*slot {
        return Ok(waiter.clone());
    }
    let (wake_read, wake) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)
        .map_err(|error| ServiceError::system("cannot create the wait thread's pipe", error))?;
    let waiter = Arc::new(Waiter { incoming: Mutex::new(Vec::new()), wake });
    let running = waiter.clone();
    // Never joined: it waits in `poll` for as long as the daemon runs.
    drop(super::thread::start("opencode-pty-wait".into(), "wait", move || run(&running, wake_read))?);
    *slot = Some(waiter.clone());
    Ok(waiter)
}

/// The wait thread: polls the wake pipe and every watched pidfd, and reports each child that ended.
fn run(waiter: &Waiter, wake: OwnedFd) {
    let mut watches: Vec<Watch> = Vec::new();
    loop {
        watches.extend(waiter.incoming.lock().unwrap_or_else(|e| e.into_inner()).drain(..));
        let ready: Vec<bool> = {
            let mut fds = Vec::with_capacity(watches.len() + 1);
            fds.push(PollFd::new(wake.as_fd(), PollFlags::POLLIN));
            fds.extend(watches.iter().map(|watch| PollFd::new(watch.pidfd.as_fd(), PollFlags::POLLIN)));
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(error) => {
                    // Not expected (every descriptor is ours and open); say so once a second at most.
                    tracing::error!(%error, "the wait thread cannot poll");
                    std::thread::sleep(std::time::Duration::from_secs(1));
                }
            }
            fds.iter().map(|fd| fd.revents().is_some_and(|events| !events.is_empty())).collect()
        };
        if ready[0] {
            let mut drained = [0u8; 64];
            while matches!(nix::unistd::read(&wake, &mut drained), Ok(n) if n > 0) {}
        }
        // Back to front, so that removing one leaves the indices still to visit in place.
        for index in (0..watches.len()).rev() {
            if ready[index + 1]
                && let Some(end) = ended(&watches[index])
            {
                let Watch { id, pid, report, cancelled, .. } = watches.swap_remove(index);
                finish(id, pid, &cancelled, report, end);
            }
        }
        // A cancelled watch's process is being terminated: its pidfd is let go of without waiting for the end.
        watches.retain(|watch| !watch.is_cancelled());
    }
}

/// How the watched child ended, once it has (`None` while it runs: a ready pidfd of a process whose threads
/// are still leaving).
fn ended(watch: &Watch) -> Option<Result<ExitStatus, Errno>> {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG;
    loop {
        match waitid(Id::PIDFd(watch.pidfd.as_fd()), flags) {
            Ok(status) => return ExitStatus::from_wait(status).map(Ok),
            Err(Errno::EINTR) => continue,
            Err(error) => return Some(Err(error)),
        }
    }
}

/// Logs and reports a child's end, unless its watch was cancelled (its process is being terminated).
fn finish(id: u64, pid: Pid, cancelled: &Mutex<bool>, report: Report, end: Result<ExitStatus, Errno>) {
    let cancelled = cancelled.lock().unwrap_or_else(|e| e.into_inner());
    if *cancelled {
        return;
    }
    let pid = pid.as_raw();
    match &end {
        Ok(status) => {
            tracing::debug!(id, pid, code = ?status.exit_code, signal = ?status.signal, "child exited")
        }
        Err(error) => tracing::debug!(id, pid, %error, "waiting for a child failed"),
    }
    report(end);
}

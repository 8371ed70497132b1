//! SIGTERM, SIGINT and SIGHUP as an orderly shutdown: the daemon blocks them in every thread (the mask is
//! inherited by threads started later, so this runs first) and one thread takes them with `sigwait`. (SIGHUP:
//! a daemon started from a terminal that closes stops cleanly, instead of dying with its children left.) Children start with
//! an empty mask and default dispositions (see `terminal/spawn.rs`), so signals still reach them normally.
//!
//! Across an in-place upgrade the signals stay blocked (the mask survives `execve`, and so does a signal
//! pending for the process) until the new image's signal thread takes them. A signal the old image's thread
//! takes once the upgrade decided to execute ([`ExecWindow`]) would be lost with that image: the thread sends
//! it again to the process, where it waits for the image that follows, and takes no other until the window
//! closes (the exec did not happen: it then takes the same signal again, and the old image stops).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, pthread_sigmask};
use nix::unistd::getpid;

use super::serving::state::DaemonState;
use crate::process::thread::Parked;

/// The signals handled as a shutdown request.
pub(crate) fn termination_signals() -> SigSet {
    let mut set = SigSet::empty();
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGINT);
    set.add(Signal::SIGHUP);
    set
}

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and every thread it starts afterwards.
pub(crate) fn block() -> Result<(), nix::errno::Errno> {
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&termination_signals()), None)
}

/// What the signal thread and an upgrade's exec share.
struct Taking {
    /// An upgrade's `execve` is under way ([`ExecWindow`]).
    exec_window: bool,
    /// How many signals the thread took (what a test waits on).
    taken: u64,
}

static TAKING: Mutex<Taking> = Mutex::new(Taking { exec_window: false, taken: 0 });

/// Signalled when a signal was taken and when the exec window closes.
static TAKEN: Condvar = Condvar::new();

fn taking() -> MutexGuard<'static, Taking> {
    TAKING.lock().unwrap_or_else(|e| e.into_inner())
}

/// An upgrade's `execve` under way: a termination signal taken meanwhile is left pending for the next image.
#[derive(Debug)]
pub(crate) struct ExecWindow {
    _private: (),
}

/// Opens the exec window, unless the daemon is stopping (asked before, or by a signal taken before now): then
/// `None`, and the upgrade must not happen.
pub(crate) fn exec_window(state: &DaemonState) -> Option<ExecWindow> {
    let mut taking = taking();
    if state.is_stopping() {
        return None;
    }
    taking.exec_window = true;
    Some(ExecWindow { _private: () })
}

impl ExecWindow {
    /// For tests of a signal in the window: sends the process SIGTERM and waits (at most `bound`) until the
    /// signal thread took it.
    pub(crate) fn signal_and_wait(&self, bound: Duration) {
        let before = taking().taken;
        if let Err(error) = kill(getpid(), Signal::SIGTERM) {
            tracing::warn!(%error, "cannot send the daemon SIGTERM");
            return;
        }
        let deadline = Instant::now() + bound;
        let mut taking = taking();
        while taking.taken == before {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            taking = TAKEN.wait_timeout(taking, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }
}

impl Drop for ExecWindow {
    fn drop(&mut self) {
        taking().exec_window = false;
        TAKEN.notify_all();
    }
}

/// Starts the thread that turns SIGTERM, SIGINT or SIGHUP into [`DaemonState::stop`]. It lives as long as the process.
pub(crate) fn spawn_handler(state: Arc<DaemonState>) -> std::io::Result<()> {
    prepare_handler()?.start(state);
    Ok(())
}

/// The signal thread, started and waiting for the daemon's state: [`prepare_handler`], then [`Handler::start`].
#[derive(Debug)]
pub(crate) struct Handler(Parked<()>);

/// Starts the signal thread without letting it take a signal yet (a resuming image, before it commits).
pub(crate) fn prepare_handler() -> std::io::Result<Handler> {
    Parked::spawn("opencode-pty-signals").map(Handler)
}

impl Handler {
    /// From now on the thread takes the signals, for `state`.
    pub(crate) fn start(self, state: Arc<DaemonState>) {
        // Detached: it lives as long as the process.
        drop(self.0.run(move || take_signals(&state)));
    }
}

/// The signal thread's loop.
fn take_signals(state: &DaemonState) {
    let set = termination_signals();
    loop {
        match set.wait() {
            Ok(signal) => {
                tracing::info!(signal = signal.as_str(), "signal received, shutting down");
                let mut taking = taking();
                state.stop();
                taking.taken += 1;
                TAKEN.notify_all();
                if taking.exec_window {
                    // This image is about to be replaced: the next one takes the signal (it stays blocked
                    // and pending across `execve`), or, if the exec fails, this thread again.
                    tracing::info!(signal = signal.as_str(), "left pending for the image the upgrade executes");
                    if let Err(error) = kill(getpid(), signal) {
                        tracing::error!(%error, "cannot leave the signal pending across the upgrade");
                    }
                    while taking.exec_window {
                        taking = TAKEN.wait(taking).unwrap_or_else(|e| e.into_inner());
                    }
                }
            }
            Err(nix::errno::Errno::EINTR) => {}
            Err(error) => {
                tracing::error!(%error, "waiting for signals failed");
                return;
            }
        }
    }
}

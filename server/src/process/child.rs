//! A child process as the daemon holds it, PTY or pipe alike: how it ended ([`ExitStatus`]), the one wait
//! thread that learns that without reaping it, and the one kill-and-reap.
//!
//! A child is never reaped before its process is terminated: the wait thread only observes (`WNOWAIT`), so
//! its pid and process group id stay reserved and signalling them can never reach an unrelated process.

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::Pid;

use super::thread::Threads;
use crate::error::ServiceError;

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExitStatus {
    /// The exit status, when it exited normally.
    pub(crate) exit_code: Option<u32>,
    /// The signal's name (`SIGTERM`), when a signal killed it.
    pub(crate) signal: Option<String>,
}

/// A started child, by pid (which is also its process group id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Child {
    pid: Pid,
}

impl Child {
    /// The child started as `pid`.
    pub(crate) fn new(pid: u32) -> Child {
        Child { pid: Pid::from_raw(pid as i32) }
    }

    /// SIGKILL to its process group and to the child itself; either may be gone already.
    pub(crate) fn kill(&self) {
        let _ = killpg(self.pid, Signal::SIGKILL);
        let _ = kill(self.pid, Signal::SIGKILL);
    }

    /// Reaps it, waiting until it is dead: from then on its pid may be reused.
    pub(crate) fn reap(&self) {
        let _ = waitpid(self.pid, None);
    }

    /// [`Self::kill`], then [`Self::reap`]: for a child that must not be left behind.
    pub(crate) fn kill_and_reap(&self) {
        self.kill();
        self.reap();
    }

    /// The one way a process stops, PTY or pipe: drops `stop` (whose closing ends the process's threads),
    /// kills the child, joins `threads`, and reaps the child. The stop goes first, so that the process's threads
    /// learn of the terminate before the kill can end the child: an exit caused by the kill is never published
    /// as the process's own `exited` (subscribers of a terminated process see their connection close). `lost`
    /// says whether waiting for the child failed (someone else reaped it): then its pid may be anyone's, and it
    /// is neither signalled nor reaped. It is asked again after the join, when the wait thread's verdict is
    /// final.
    pub(crate) fn stop<S>(&self, stop: S, threads: &Threads, lost: impl Fn() -> bool) {
        drop(stop);
        // The child is not reaped before this point (the wait thread only observes), so its pid is still ours
        // unless it was lost.
        if !lost() {
            self.kill();
        }
        threads.join_all();
        if !lost() {
            self.reap();
        }
    }

    /// Waits until the child has ended, without reaping it.
    fn wait_exit(&self) -> Result<ExitStatus, Errno> {
        loop {
            match waitid(Id::Pid(self.pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
                Ok(WaitStatus::Exited(_, code)) => {
                    return Ok(ExitStatus { exit_code: Some(code as u32), signal: None });
                }
                Ok(WaitStatus::Signaled(_, signal, _)) => {
                    return Ok(ExitStatus { exit_code: None, signal: Some(signal.as_str().to_owned()) });
                }
                Ok(_) | Err(Errno::EINTR) => continue,
                Err(error) => return Err(error),
            }
        }
    }

    /// Starts the wait thread (`opencode-pty-<prefix>wait-<id>`): it learns how the child ended, without
    /// reaping it, and hands that (or why waiting failed: the child was reaped by someone else) to `report`.
    pub(crate) fn start_waiter(
        &self,
        threads: &Threads,
        prefix: &str,
        id: u64,
        report: impl FnOnce(Result<ExitStatus, Errno>) + Send + 'static,
    ) -> Result<(), ServiceError> {
        let child = *self;
        threads.start(prefix, "wait", id, move || {
            let exit = child.wait_exit();
            match &exit {
                Ok(status) => tracing::debug!(id, pid = child.pid.as_raw(), code = ?status.exit_code,
                    signal = ?status.signal, "child exited"),
                Err(error) => tracing::debug!(id, pid = child.pid.as_raw(), %error, "waiting for a child failed"),
            }
            report(exit)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child started for a test; dropping it (even in a panic) kills and reaps it unless the test reaped it.
    struct Started(Child);

    impl Drop for Started {
        fn drop(&mut self) {
            // Only a child that is still ours is touched: once reaped, its pid may belong to anyone.
            let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
            if waitid(Id::Pid(self.0.pid), flags) != Err(Errno::ECHILD) {
                self.0.kill_and_reap();
            }
        }
    }

    // The child is reaped through `Child` (or the guard), which std cannot see.
    #[allow(clippy::zombie_processes)]
    fn started(program: &str, args: &[&str]) -> Started {
        let child = std::process::Command::new(program).args(args).spawn().expect("spawn");
        Started(Child::new(child.id()))
    }

    #[test]
    fn the_waiter_reports_the_exit_without_reaping() {
        let guard = started("sh", &["-c", "exit 3"]);
        let child = guard.0;
        let threads = Threads::default();
        let (tx, rx) = crossbeam_channel::bounded(1);
        child.start_waiter(&threads, "test-", 1, move |end| tx.send(end).unwrap()).unwrap();
        let end = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("an exit");
        assert_eq!(end, Ok(ExitStatus { exit_code: Some(3), signal: None }));
        threads.join_all();
        // Still a zombie: reaping it now succeeds.
        assert!(waitpid(child.pid, None).is_ok(), "the waiter must not reap");
    }

    #[test]
    fn kill_and_reap_ends_a_running_child() {
        let guard = started("sleep", &["1000"]);
        let child = guard.0;
        child.kill_and_reap();
        assert_eq!(waitpid(child.pid, None), Err(Errno::ECHILD), "killed and already reaped");
    }

    #[test]
    fn a_signal_is_reported_by_name() {
        let guard = started("sleep", &["1000"]);
        let child = guard.0;
        child.kill();
        assert_eq!(child.wait_exit(), Ok(ExitStatus { exit_code: None, signal: Some("SIGKILL".into()) }));
        child.reap();
        assert_eq!(child.wait_exit(), Err(Errno::ECHILD), "a reaped child cannot be waited for");
    }
}

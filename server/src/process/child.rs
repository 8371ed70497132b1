//! A child process as the daemon holds it, PTY or pipe alike: its watch by the
//! daemon's wait thread (`waiter`), which learns that without reaping it, and the one kill-and-reap.
//!
//! A child is never reaped before its process is terminated: the wait thread only observes (`WNOWAIT`), so
//! its pid and process group id stay reserved and signalling them can never reach an unrelated process.

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::waitpid;
#[cfg(test)]
use nix::sys::wait::{Id, WaitPidFlag, waitid};
use nix::unistd::Pid;

use super::threads::Threads;
use super::waiter::ExitStatus;
use crate::error::ServiceError;

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

    /// The first step of the one way a process stops, PTY or pipe (a terminal ends its whole session before the
    /// second, [`Self::finish_stop`], see `session`). Drops `stop` (whose closing ends the process's threads),
    /// then kills the child and its group. The stop goes
    /// first, so that the process's threads learn of the terminate before the kill can end the child: an exit
    /// caused by the kill is never published as the process's own `exited` (subscribers of a terminated process
    /// see their connection close). `lost` says whether waiting for the child failed (someone else reaped it):
    /// then its pid may be anyone's, and it is not signalled.
    pub(crate) fn begin_stop<S>(&self, stop: S, lost: impl Fn() -> bool) {
        drop(stop);
        // The child is not reaped before `finish_stop`, so its pid is still ours unless it was lost.
        if !lost() {
            self.kill();
        }
    }

    /// Joins `threads` and reaps the child, unless it was `lost`, which is asked after the join, which ends the
    /// watch: the wait thread's verdict is final then. Call it once, after the child was killed.
    pub(crate) fn finish_stop(&self, threads: &Threads, lost: impl Fn() -> bool) {
        threads.join_all();
        if !lost() {
            self.reap();
        }
    }

    /// Waits until the child has ended, without reaping it.
    #[cfg(test)]
    fn wait_exit(&self) -> Result<ExitStatus, Errno> {
        loop {
            match waitid(Id::Pid(self.pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
                Ok(status) => match ExitStatus::from_wait(status) {
                    Some(exit) => return Ok(exit),
                    None => continue,
                },
                Err(Errno::EINTR) => continue,
                Err(error) => return Err(error),
            }
        }
    }

    /// Has the daemon's wait thread (see `waiter`) tell `report` how the child ended, without reaping it (or
    /// why waiting failed: the child was reaped by someone else). The watch is kept with `threads` and ends
    /// with [`Threads::join_all`]: a process being stopped reports nothing more.
    pub(crate) fn watch(
        &self,
        threads: &Threads,
        id: u64,
        report: impl FnOnce(Result<ExitStatus, Errno>) + Send + 'static,
    ) -> Result<(), ServiceError> {
        threads.keep(super::waiter::watch(id, self.pid, Box::new(report))?);
        Ok(())
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
        child.watch(&threads, 1, move |end| tx.send(end).unwrap()).unwrap();
        let end = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("an exit");
        assert_eq!(end, Ok(ExitStatus { exit_code: Some(3), signal: None }));
        threads.join_all();
        // Still a zombie: reaping it now succeeds.
        assert!(waitpid(child.pid, None).is_ok(), "the waiter must not reap");
    }

    #[test]
    fn one_wait_thread_reports_every_child_with_its_own_status() {
        let guards: Vec<Started> = (0..20).map(|code| started("sh", &["-c", &format!("exit {code}")])).collect();
        let threads: Vec<Threads> = (0..guards.len()).map(|_| Threads::default()).collect();
        let (tx, rx) = crossbeam_channel::bounded(guards.len());
        for (n, guard) in guards.iter().enumerate() {
            let tx = tx.clone();
            guard.0.watch(&threads[n], n as u64, move |end| tx.send((n, end)).unwrap()).unwrap();
        }
        let mut seen = vec![false; guards.len()];
        for _ in 0..guards.len() {
            let (n, end) = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("an exit");
            assert_eq!(end, Ok(ExitStatus { exit_code: Some(n as u32), signal: None }));
            assert!(!std::mem::replace(&mut seen[n], true), "child {n} reported once");
        }
    }

    #[test]
    fn a_watch_ended_by_join_all_reports_nothing() {
        let (cancelled, other) = (started("sleep", &["1000"]), started("sleep", &["1000"]));
        let (tx, rx) = crossbeam_channel::bounded(2);
        let (first, second) = (Threads::default(), Threads::default());
        let report = |tx: crossbeam_channel::Sender<&'static str>, name| move |_| tx.send(name).unwrap();
        cancelled.0.watch(&first, 1, report(tx.clone(), "cancelled")).unwrap();
        other.0.watch(&second, 2, report(tx, "other")).unwrap();
        first.join_all();
        cancelled.0.kill();
        assert!(cancelled.0.wait_exit().is_ok(), "ended, not reaped");
        // The wait thread finds the cancelled child's pidfd ready no later than the other's, which ends after it.
        other.0.kill();
        assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(30)), Ok("other"));
        assert!(rx.try_recv().is_err(), "the cancelled watch made no report");
    }

    #[test]
    fn a_child_reaped_before_its_watch_is_reported_as_lost() {
        let guard = started("sleep", &["1000"]);
        let child = guard.0;
        child.kill_and_reap();
        let (tx, rx) = crossbeam_channel::bounded(1);
        child.watch(&Threads::default(), 1, move |end| tx.send(end).unwrap()).expect("no error: a report");
        assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(30)), Ok(Err(Errno::ECHILD)));
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

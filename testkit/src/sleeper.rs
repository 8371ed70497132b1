//! [`Sleeper`]: a `sleep` child leading a process group of its own, for tests of what signals or ends groups;
//! killed and reaped when dropped, so no test leaves it behind.

use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// How long the child sleeps: far longer than any test, which ends it.
const SLEEP_SECONDS: &str = "1000";

/// A `sleep` leading its own process group (its pid is the group's id). SIGKILLed and reaped on drop.
#[derive(Debug)]
pub struct Sleeper(Child);

impl Sleeper {
    /// Starts one. Panics when `sleep` cannot be run: a test cannot go on without it.
    pub fn start() -> Sleeper {
        let child = Command::new("sleep").arg(SLEEP_SECONDS).process_group(0).spawn();
        Sleeper(child.unwrap_or_else(|e| panic!("cannot start sleep: {e}")))
    }

    /// Its pid, which is also its process group's id.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Whether it still runs (once it has ended it is reaped).
    pub fn running(&mut self) -> bool {
        self.0.try_wait().expect("try_wait").is_none()
    }

    /// Waits until someone else ends it, however long that takes, and reaps it.
    pub fn wait(&mut self) -> ExitStatus {
        self.0.wait().expect("wait")
    }

    /// Waits at most `within` for it to end, woken by its end (its pidfd), and reaps it; `None` if it still runs.
    pub fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        let pid = i32::try_from(self.pid()).ok().and_then(rustix::process::Pid::from_raw).expect("a pid");
        let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).expect("a pidfd");
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.0.try_wait().expect("try_wait") {
                return Some(status);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            let millis = PollTimeout::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(PollTimeout::MAX);
            // Interrupted or not, the loop looks again.
            let _ = poll(&mut [PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)], millis);
        }
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeper_leads_its_group_and_its_end_is_seen_when_it_comes() {
        let mut sleeper = Sleeper::start();
        let pgid = nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(sleeper.pid() as i32))).unwrap();
        assert_eq!(pgid.as_raw() as u32, sleeper.pid());
        assert!(sleeper.running());
        assert_eq!(sleeper.wait_exit(Duration::from_millis(20)), None);
        nix::sys::signal::kill(pgid, nix::sys::signal::SIGTERM).unwrap();
        let started = Instant::now();
        let status = sleeper.wait_exit(Duration::from_secs(60)).expect("it ended");
        assert!(started.elapsed() < Duration::from_secs(5), "woken by the end: {:?}", started.elapsed());
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(15));
        assert!(!sleeper.running());
    }

    #[test]
    fn a_dropped_sleeper_is_gone() {
        let sleeper = Sleeper::start();
        let pid = sleeper.pid();
        drop(sleeper);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }
}

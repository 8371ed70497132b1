//! Bounded waits shared by every test binary: `WAIT`, the bound of every wait; the one poll (`eventually`) for
//! state outside the daemon's protocol (/proc, files, a child's exit); children run under a bound; and a guard
//! that kills a process a test reached outside the service.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// The longest any single wait in these tests may take.
pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// How often [`poll_for`] looks again.
const POLL: Duration = Duration::from_millis(10);

/// Polls `probe` until it returns `Some`, for at most `bound`; `None` if it never did. For state outside the
/// daemon's protocol only (/proc, files, a child's exit): whatever the daemon tells, a test waits for as an event.
pub(crate) fn poll_for<T>(bound: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(value) = probe() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// [`poll_for`] within [`WAIT`], failing the test with `what` if the condition never held.
pub(crate) fn eventually<T>(what: &str, probe: impl FnMut() -> Option<T>) -> T {
    poll_for(WAIT, probe).unwrap_or_else(|| panic!("{what}: not within {WAIT:?}"))
}

/// Waits at most `bound` for `child` to exit; kills and reaps it if it did not (`None` then), so no test leaves
/// it behind.
pub(crate) fn wait_or_kill(child: &mut Child, bound: Duration) -> Option<ExitStatus> {
    let status = poll_for(bound, || child.try_wait().expect("try_wait"));
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status
}

/// Whether a process with this pid exists (zombies included).
pub(crate) fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The state letter of `/proc/<pid>/stat` (`Z` for a zombie), or `None` once the process is gone.
pub(crate) fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Waits (bounded) until process `pid` is gone or a zombie: it has died.
pub(crate) fn wait_dead(what: &str, pid: u32) {
    eventually(what, || matches!(proc_state(pid), None | Some('Z')).then_some(()));
}

/// The pid a test script wrote to `path`, once it is there (bounded).
pub(crate) fn pid_from(path: &Path) -> u32 {
    eventually("a pid in the file", || std::fs::read_to_string(path).ok()?.trim().parse().ok())
}

/// SIGKILLs a process a test reached outside the service or daemon (one that left its child's group) when
/// dropped, even after a failed assertion, unless it is already gone or a zombie.
pub(crate) struct KillOnDrop(pub u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if matches!(proc_state(self.0), Some(state) if state != 'Z') {
            let pid = nix::unistd::Pid::from_raw(self.0 as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Runs `command` with `input` on its stdin and returns its output; kills it and fails the test if it outlives
/// `bound`.
pub(crate) fn run_bounded(mut command: Command, input: &[u8], bound: Duration) -> Output {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    child.stdin.take().expect("stdin").write_all(input).expect("write the input");
    let pid = child.id();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let guard = std::thread::spawn(move || {
        let late = finished.recv_timeout(bound).is_err();
        if late {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::SIGKILL);
        }
        late
    });
    let output = child.wait_with_output().expect("output");
    let _ = done.send(());
    let late = guard.join().expect("the guard thread");
    assert!(!late, "{command:?} did not finish within {bound:?}");
    output
}

//! Test helper: a shell script running in a new session whose controlling terminal is a fresh 80x24 PTY, the
//! terminal the tests of `procinfo` ask `/proc` about. A thread reads (and keeps the tail of) its output, so
//! programs that print never block; the test types into it, waits for what it printed, and polls.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::{Pid, tcgetpgrp};

use super::foreground::{ForegroundGroup, foreground_group, foreground_process};
use super::input::{InputWait, input_wait};
use super::stat::proc_stat;

/// How long a test waits for a session to reach a state (generous: the machine runs other tests).
pub(crate) const SETTLE: Duration = Duration::from_secs(20);

/// The most output a session keeps (its tail), for the markers tests wait for.
const KEPT_OUTPUT_BYTES: usize = 64 * 1024;

/// The output a session's reader saw: its tail and how many bytes in all.
#[derive(Default)]
struct Seen {
    tail: Vec<u8>,
    total: u64,
}

/// A script in a new session on a fresh PTY; dropping it kills the session's foreground group and the
/// script's, and reaps the script.
pub(crate) struct Session {
    pub(crate) master: OwnedFd,
    pub(crate) tty: PathBuf,
    child: Child,
    seen: Arc<Mutex<Seen>>,
}

impl Session {
    /// Runs `script` with `sh -c`.
    pub(crate) fn start(script: &str) -> Session {
        Session::start_with("sh", script)
    }

    /// Runs `script` with `shell -c` (`TERM=xterm-256color`, the rest of the environment inherited).
    pub(crate) fn start_with(shell: &str, script: &str) -> Session {
        let size = nix::pty::Winsize { ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = nix::pty::openpty(Some(&size), None).expect("openpty");
        for fd in [&pty.master, &pty.slave] {
            fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).expect("set close-on-exec");
        }
        let tty = nix::unistd::ttyname(&pty.slave).expect("the slave's path");
        let stdio = || Stdio::from(pty.slave.try_clone().expect("duplicate the slave"));
        // `setsid -c` makes its stdin, the slave, the new session's controlling terminal, as the daemon's
        // spawn does; std alone cannot without `unsafe`.
        let child = Command::new("setsid")
            .args(["-c", shell, "-c", script])
            .env("TERM", "xterm-256color")
            .stdin(stdio())
            .stdout(stdio())
            .stderr(stdio())
            .spawn()
            .expect("spawn setsid");
        let seen = Arc::new(Mutex::new(Seen::default()));
        let reader = pty.master.try_clone().expect("duplicate the master");
        let sink = seen.clone();
        // It ends when the terminal's last slave descriptor closes (the read fails), after the drop's kills.
        std::thread::spawn(move || {
            let mut buffer = vec![0; 64 * 1024];
            while let Ok(n @ 1..) = nix::unistd::read(&reader, &mut buffer) {
                let mut seen = sink.lock().unwrap_or_else(|e| e.into_inner());
                seen.total += n as u64;
                seen.tail.extend_from_slice(&buffer[..n]);
                let excess = seen.tail.len().saturating_sub(KEPT_OUTPUT_BYTES);
                seen.tail.drain(..excess);
            }
        });
        Session { master: pty.master, tty, child, seen }
    }

    /// The script's pid (the session leader).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The foreground process's name, as the daemon finds it.
    pub(crate) fn foreground(&self) -> Option<String> {
        foreground_process(&self.master, Some(&self.tty), self.pid())
    }

    /// The foreground group, as the daemon finds it.
    pub(crate) fn group(&self) -> Option<ForegroundGroup> {
        foreground_group(&self.master, Some(&self.tty), self.pid())
    }

    /// What the terminal waits for, as the daemon finds it.
    pub(crate) fn input(&self) -> Option<InputWait> {
        input_wait(&self.master, Some(&self.tty), &self.group()?)
    }

    /// Types `bytes` into the terminal.
    pub(crate) fn type_in(&self, bytes: &[u8]) {
        let written = nix::unistd::write(&self.master, bytes).expect("write to the master");
        assert_eq!(written, bytes.len(), "typed in one write");
    }

    /// How many bytes the script has printed so far.
    pub(crate) fn printed(&self) -> u64 {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).total
    }

    /// Whether the kept tail of the output contains `marker`.
    pub(crate) fn has_printed(&self, marker: &str) -> bool {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.tail.windows(marker.len()).any(|window| window == marker.as_bytes())
    }

    /// Polls (every 10 ms, for up to [`SETTLE`]) until `done` holds, and returns whether it did.
    pub(crate) fn wait_for(&self, done: impl Fn(&Session) -> bool) -> bool {
        let deadline = Instant::now() + SETTLE;
        while !done(self) {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// The names of the processes in the session's foreground group.
    pub(crate) fn group_names(&self) -> Vec<String> {
        let Ok(group) = tcgetpgrp(self.master.as_fd()) else { return Vec::new() };
        super::foreground::linux_scan()
            .into_iter()
            .filter(|p| p.pgrp == group.as_raw().unsigned_abs())
            .map(|p| p.comm)
            .collect()
    }

    /// The kept tail of the output, for failure messages.
    pub(crate) fn output_tail(&self) -> String {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let start = seen.tail.len().saturating_sub(400);
        String::from_utf8_lossy(&seen.tail[start..]).into_owned()
    }

    /// Whether the script itself is still running.
    pub(crate) fn running(&self) -> bool {
        proc_stat(self.pid()).is_some_and(|stat| !stat.is_dead())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(group) = tcgetpgrp(self.master.as_fd())
            && group.as_raw() > 0
        {
            let _ = killpg(group, Signal::SIGKILL);
        }
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! `opencode-pty attach ID` as the web terminal's baseline: the CLI started on a PTY the harness opened at
//! 80x24 (attach needs a terminal), its output read from the master side and, where a screen is awaited,
//! parsed by libghostty-vt as a terminal emulator would; keys written to the master as typed.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::pty::{Winsize, openpty};
use opencode_pty_vt::Terminal;

use crate::pty::READ_BYTES;

/// The size of the PTY attach runs on (and of the emulator its output is parsed by).
pub(super) const COLS: u16 = 80;
pub(super) const ROWS: u16 = 24;

/// History rows the emulator keeps (as many as the daemon's own terminals).
const SCROLLBACK_LINES: usize = super::ingest::DAEMON_SCROLLBACK_LINES;

/// How long attach may take to leave after the detach keys before it is killed.
const DETACH_TIMEOUT: Duration = Duration::from_secs(10);

/// Ctrl-\ twice: attach's detach keys.
const DETACH: &[u8] = b"\x1c\x1c";

/// How often a wait for attach's exit looks again.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// One `attach` on a PTY of its own; killed when dropped if it has not left.
pub(super) struct Attach {
    master: File,
    child: Child,
    /// What its output shows, for the waits on a screen.
    screen: Terminal,
    buffer: Vec<u8>,
}

impl Attach {
    /// Starts `binary attach ID` (`--observe` when `observe`) against the daemon `name` under `runtime_dir`.
    pub(super) fn start(binary: &Path, runtime_dir: &Path, name: &str, id: u64, observe: bool) -> Result<Attach> {
        let size = Winsize { ws_row: ROWS, ws_col: COLS, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = openpty(Some(&size), None).context("openpty")?;
        let slave = File::from(pty.slave);
        let mut command = Command::new(binary);
        command.arg("attach").arg("--runtime-dir").arg(runtime_dir).args(["--name", name]);
        if observe {
            command.arg("--observe");
        }
        let child = command
            .arg(id.to_string())
            .env("TERM", "xterm-256color")
            .stdin(slave.try_clone()?)
            .stdout(slave.try_clone()?)
            .stderr(Stdio::from(slave))
            .spawn()
            .context("starting opencode-pty attach")?;
        Ok(Attach {
            master: File::from(pty.master),
            child,
            screen: Terminal::new(COLS, ROWS, SCROLLBACK_LINES)?,
            buffer: vec![0u8; READ_BYTES],
        })
    }

    /// Reads what the master has, waiting until `deadline`; the number of bytes, in `self.buffer`.
    fn read(&mut self, deadline: Instant, what: &str) -> Result<usize> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!("{what}: not within the bound");
            }
            let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
            let mut fds = [PollFd::new(self.master.as_fd(), PollFlags::POLLIN)];
            if poll(&mut fds, timeout)? == 0 {
                continue;
            }
            match self.master.read(&mut self.buffer) {
                Ok(0) => bail!("{what}: attach closed its terminal"),
                Ok(n) => return Ok(n),
                Err(error) if error.raw_os_error() == Some(Errno::EIO as i32) => {
                    bail!("{what}: attach left (its terminal is closed)")
                }
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// Reads and parses the output until the visible rows (trailing blank ones trimmed) satisfy `check`, within
    /// `limit`.
    pub(super) fn until_screen(
        &mut self,
        what: &str,
        limit: Duration,
        check: impl Fn(&[String]) -> bool,
    ) -> Result<()> {
        let deadline = Instant::now() + limit;
        loop {
            if check(&self.rows()?) {
                return Ok(());
            }
            let n = self.read(deadline, what)?;
            self.screen.write(&self.buffer[..n]);
        }
    }

    /// The visible rows of the parsed output, without the blank ones at the bottom.
    pub(super) fn rows(&self) -> Result<Vec<String>> {
        let text = self.screen.plain_text()?;
        let mut rows: Vec<String> = text.split('\n').map(|row| row.trim_end().to_owned()).collect();
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        Ok(rows)
    }

    /// Reads until the output holds `needle`, within `limit`, parsing it as it comes when `parse`; the bytes
    /// read.
    pub(super) fn until_bytes(&mut self, needle: &[u8], parse: bool, limit: Duration) -> Result<u64> {
        let deadline = Instant::now() + limit;
        let what = format!("{} in attach's output", String::from_utf8_lossy(needle));
        let mut tail: Vec<u8> = Vec::with_capacity(2 * needle.len() + READ_BYTES);
        let mut total = 0u64;
        loop {
            let n = self.read(deadline, &what)?;
            total += n as u64;
            let chunk = &self.buffer[..n];
            if parse {
                self.screen.write(chunk);
            }
            // The end of the last chunk and this one: a needle split between two reads is found too.
            let keep = tail.len().saturating_sub(needle.len());
            tail.drain(..keep);
            tail.extend_from_slice(chunk);
            if tail.windows(needle.len()).any(|window| window == needle) {
                return Ok(total);
            }
        }
    }

    /// Types `keys` (written to the master as a terminal would send them).
    pub(super) fn type_keys(&mut self, keys: &[u8]) -> Result<()> {
        self.master.write_all(keys)?;
        Ok(())
    }

    /// Detaches (Ctrl-\ twice) and waits for attach to leave, killing it after a bound.
    pub(super) fn detach(mut self) -> Result<()> {
        self.type_keys(DETACH)?;
        let deadline = Instant::now() + DETACH_TIMEOUT;
        loop {
            // Drained meanwhile, so that a full PTY does not hold attach up.
            let mut fds = [PollFd::new(self.master.as_fd(), PollFlags::POLLIN)];
            if poll(&mut fds, PollTimeout::ZERO).unwrap_or(0) > 0 {
                let _ = self.master.read(&mut self.buffer);
            }
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("attach did not leave within {DETACH_TIMEOUT:?} of the detach keys; it is killed");
            }
            std::thread::sleep(EXIT_POLL);
        }
    }
}

impl Drop for Attach {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

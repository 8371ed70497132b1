//! The raw PTY limit: `cat FILE` writing into a pseudo-terminal that the harness opened itself, drained from
//! the master side with 64 KiB reads, with no socket and no emulator (or, for the ingest case's second
//! baseline, each read handed to one before the next). Both sides keep the kernel's default
//! terminal settings, as the daemon's PTYs do (so CRLF in the file reaches the reader as `\r\r\n`).

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::pty::{grantpt, posix_openpt, ptsname_r, unlockpt};

/// The size of each read from the master.
pub(crate) const READ_BYTES: usize = 64 << 10;

/// How long the master may stay silent before the drain gives up.
const SILENCE: Duration = Duration::from_secs(30);

/// Runs `cat file` on a fresh PTY and reads the master until the child's side closes; returns the bytes read
/// and the time from the spawn to the end.
pub(crate) fn drain_cat(file: &Path) -> Result<(u64, Duration)> {
    drain_cat_into(file, |_| {})
}

/// [`drain_cat`], handing every chunk read to `sink` before the next read.
pub(crate) fn drain_cat_into(file: &Path, mut sink: impl FnMut(&[u8])) -> Result<(u64, Duration)> {
    let mut master = posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY).context("posix_openpt")?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname_r(&master)?;
    let slave = OpenOptions::new().read(true).write(true).custom_flags(libc_o_noctty()).open(&name)?;
    let started = Instant::now();
    let mut child = Command::new("cat")
        .arg(file)
        .stdin(Stdio::null())
        .stdout(slave.try_clone()?)
        .stderr(Stdio::null())
        .spawn()
        .context("starting cat")?;
    drop(slave);
    let mut buffer = vec![0u8; READ_BYTES];
    let mut total = 0u64;
    let timeout = PollTimeout::try_from(SILENCE).unwrap_or(PollTimeout::MAX);
    loop {
        let mut fds = [PollFd::new(master.as_fd(), PollFlags::POLLIN)];
        if poll(&mut fds, timeout)? == 0 {
            let _ = child.kill();
            let _ = child.wait();
            bail!("the PTY stayed silent for {SILENCE:?}");
        }
        match master.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                sink(&buffer[..n]);
                total += n as u64;
            }
            // Linux reports the closed child side as EIO.
            Err(error) if error.raw_os_error() == Some(Errno::EIO as i32) => break,
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(error.into()),
        }
    }
    let elapsed = started.elapsed();
    child.wait()?;
    Ok((total, elapsed))
}

/// `O_NOCTTY` as the flag `OpenOptionsExt::custom_flags` takes: the harness must not gain a controlling
/// terminal.
fn libc_o_noctty() -> i32 {
    OFlag::O_NOCTTY.bits()
}

/// The echo floor: `stty raw -echo; cat` on a PTY the harness opened itself, one byte written to the master
/// and read back, with no daemon in between. The child is killed when this is dropped.
pub(crate) struct EchoPty {
    master: nix::pty::PtyMaster,
    child: std::process::Child,
}

impl EchoPty {
    /// Starts the child and waits until it is in raw mode (it prints `ready` once it is).
    pub(crate) fn start(ready: &[u8]) -> Result<EchoPty> {
        let master = posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY).context("posix_openpt")?;
        grantpt(&master)?;
        unlockpt(&master)?;
        let name = ptsname_r(&master)?;
        let slave = OpenOptions::new().read(true).write(true).custom_flags(libc_o_noctty()).open(&name)?;
        let command = format!("stty raw -echo; printf {}; exec cat", String::from_utf8_lossy(ready));
        let child = Command::new("sh")
            .args(["-c", &command])
            .stdin(slave.try_clone()?)
            .stdout(slave.try_clone()?)
            .stderr(Stdio::null())
            .spawn()
            .context("starting sh")?;
        drop(slave);
        let mut echo = EchoPty { master, child };
        let mut seen = Vec::new();
        while !seen.windows(ready.len()).any(|window| window == ready) {
            seen.extend_from_slice(&echo.read_some()?);
        }
        Ok(echo)
    }

    /// The master side, for a relay of its own (see `relay.rs`).
    pub(crate) fn master(&self) -> std::os::fd::BorrowedFd<'_> {
        self.master.as_fd()
    }

    /// Reads what the master has, waiting at most [`SILENCE`].
    fn read_some(&mut self) -> Result<Vec<u8>> {
        let timeout = PollTimeout::try_from(SILENCE).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(self.master.as_fd(), PollFlags::POLLIN)];
        if poll(&mut fds, timeout)? == 0 {
            bail!("the echo PTY stayed silent for {SILENCE:?}");
        }
        let mut buffer = [0u8; 4096];
        loop {
            match self.master.read(&mut buffer) {
                Ok(n) => return Ok(buffer[..n].to_vec()),
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// One round trip of `byte`; milliseconds.
    pub(crate) fn round_trip(&mut self, byte: u8) -> Result<f64> {
        use std::io::Write;
        let started = Instant::now();
        self.master.write_all(&[byte])?;
        loop {
            let got = self.read_some()?;
            if got.contains(&byte) {
                return Ok(started.elapsed().as_secs_f64() * 1e3);
            }
            if !got.is_empty() {
                bail!("unexpected output {got:?} while waiting for {byte}");
            }
        }
    }
}

impl Drop for EchoPty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

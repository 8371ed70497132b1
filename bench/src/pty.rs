//! The raw PTY limit: `cat FILE` writing into a pseudo-terminal that the harness opened itself, drained from
//! the master side with 64 KiB reads, with no emulator and no socket. Both sides keep the kernel's default
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
pub const READ_BYTES: usize = 64 << 10;

/// How long the master may stay silent before the drain gives up.
const SILENCE: Duration = Duration::from_secs(30);

/// Runs `cat file` on a fresh PTY and reads the master until the child's side closes; returns the bytes read
/// and the time from the spawn to the end.
pub fn drain_cat(file: &Path) -> Result<(u64, Duration)> {
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
            Ok(n) => total += n as u64,
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

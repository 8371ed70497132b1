//! Every `unsafe` call of the daemon outside `vt/`, in one place: starting a child with `posix_spawn`
//! ([`spawn`]: signal reset, `setsid` or a process group, the PTY as controlling terminal), the PTY's
//! `TIOCSWINSZ` resize, and the daemon's own SIGCHLD reset at startup. Each block says why it is sound.

#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, OwnedFd};

use nix::pty::Winsize;

pub(crate) mod spawn;

/// In the daemon, at startup: the default disposition for SIGCHLD. Were it ignored (inherited from whoever
/// started the daemon, which `exec` keeps), the kernel would reap children at once and the wait threads could
/// never learn how they exited.
pub(crate) fn default_sigchld() -> std::io::Result<()> {
    // Safety: setting SIGCHLD's disposition to SIG_DFL installs no handler; it runs before any child exists.
    if unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) } == libc::SIG_ERR {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Sets a PTY's window size through its master (the kernel sends SIGWINCH to its foreground process group).
pub(crate) fn set_window_size(master: &OwnedFd, cols: u16, rows: u16) -> std::io::Result<()> {
    let size = Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    // Safety: TIOCSWINSZ reads one winsize from the pointer, which points at a live local.
    if unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

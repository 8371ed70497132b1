//! Every `unsafe` call of the daemon outside `vt/`, in one place: the `pre_exec` hooks that set up a PTY child
//! and a pipe child between fork and exec (signal reset, `setsid`, `TIOCSCTTY`), the PTY's `TIOCSWINSZ`
//! resize, and the daemon's own SIGCHLD reset at startup. Each block says why it is sound.

#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use nix::pty::Winsize;

/// Makes a PTY child, between fork and exec, a session leader whose controlling terminal is its stdin (the PTY
/// slave, which the caller has set as stdin), with default signal dispositions and an empty signal mask.
pub(crate) fn setup_pty_child(command: &mut Command) {
    // Safety: the hook runs in the child between fork and exec and only calls async-signal-safe functions
    // (signal, sigprocmask, setsid, ioctl) on values it owns; it allocates nothing.
    unsafe {
        command.pre_exec(pty_child);
    }
}

/// Gives a pipe child, between fork and exec, default signal dispositions and an empty signal mask (the daemon
/// blocks SIGTERM, SIGINT and SIGHUP, and a mask survives `exec`).
pub(crate) fn setup_pipe_child(command: &mut Command) {
    // Safety: the hook runs in the child between fork and exec and only calls async-signal-safe functions
    // (signal, sigemptyset, sigprocmask) on values it owns; it allocates nothing.
    unsafe {
        command.pre_exec(reset_signals);
    }
}

/// In a PTY child: default signal dispositions, an empty signal mask (the daemon blocks SIGTERM, SIGINT and
/// SIGHUP), a new session, and the PTY (already on stdin) as the controlling terminal.
fn pty_child() -> std::io::Result<()> {
    reset_signals()?;
    // Safety: setsid takes no arguments and is async-signal-safe.
    if unsafe { libc::setsid() } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // Safety: TIOCSCTTY on stdin (the PTY slave) with argument 0 makes it the controlling terminal.
    if unsafe { libc::ioctl(0, libc::TIOCSCTTY as _, 0) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// In a child between fork and exec: every signal's disposition back to the default (an ignored one would
/// survive `exec`, whatever the daemon inherited or set), and an empty signal mask. Shared by PTY and pipe
/// children. Signals that cannot be changed (SIGKILL, SIGSTOP, and the C library's own) are left alone.
fn reset_signals() -> std::io::Result<()> {
    for signal in 1..=libc::SIGRTMAX() {
        // Safety: setting a disposition to SIG_DFL is async-signal-safe and affects only this child; a
        // signal that cannot be changed just fails, which is fine.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
    }
    // Safety: an all-zero sigset_t is a valid value to initialise; sigemptyset and sigprocmask are
    // async-signal-safe and the pointers are to locals.
    let result = unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut())
    };
    if result == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

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

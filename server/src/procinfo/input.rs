//! Whether a PTY's foreground process waits for input from it, and for what kind, derived from two facts and
//! nothing else (never the screen's text): the terminal's line discipline (`tcgetattr` on the master:
//! `ICANON`, `ECHO`) and whether a task of a process in the foreground process group is blocked waiting for
//! input from the terminal (`blocked.rs`: `/proc/PID/task/TID/syscall`, and for `poll`, `select` and epoll
//! the descriptors they wait on).
//!
//! A descriptor is the terminal when `/proc/PID/fd/N` links to the slave's path, or to `/dev/tty`: a member of
//! the terminal's foreground group is in the terminal's session, whose controlling terminal `/dev/tty` is.
//! At most [`MAX_INSPECTED_MEMBERS`] members and [`MAX_INSPECTED_TASKS`] tasks of each are looked at.

use std::os::fd::AsFd;
use std::path::Path;

use crate::procinfo::foreground::ForegroundGroup;

/// The most members of a foreground process group whose tasks are looked at (64; the chosen foreground
/// process first).
pub const MAX_INSPECTED_MEMBERS: usize = 64;

/// The most tasks (threads) of one process that are looked at (256).
pub const MAX_INSPECTED_TASKS: usize = 256;

/// What the foreground process waits for, when it is blocked reading the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputWait {
    /// Canonical mode with echo off: a line that is not shown (a password).
    Password,
    /// Canonical mode with echo on: a line.
    Line,
    /// Canonical mode off: keys one at a time (a pager, a menu, an editor, a line editor).
    Key,
}

/// The two flags of the terminal's line discipline that decide what is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineDiscipline {
    /// `ICANON`: input is read a line at a time.
    pub(crate) canonical: bool,
    /// `ECHO`: the terminal shows what is typed.
    pub(crate) echo: bool,
}

impl LineDiscipline {
    /// The line discipline of the PTY whose master is `master` (the kernel answers for the slave).
    #[cfg(target_os = "linux")]
    pub(crate) fn of(master: impl AsFd) -> Option<LineDiscipline> {
        use nix::sys::termios::LocalFlags;
        let termios = nix::sys::termios::tcgetattr(master).ok()?;
        let flags = termios.local_flags;
        Some(LineDiscipline { canonical: flags.contains(LocalFlags::ICANON), echo: flags.contains(LocalFlags::ECHO) })
    }

    /// What a reader of a terminal in this mode waits for.
    pub(crate) fn wait(self) -> InputWait {
        match self {
            LineDiscipline { canonical: false, .. } => InputWait::Key,
            LineDiscipline { canonical: true, echo: false } => InputWait::Password,
            LineDiscipline { canonical: true, echo: true } => InputWait::Line,
        }
    }
}

/// What the PTY's foreground process group waits for: `None` when no task of its members (as `group` found
/// them) is blocked waiting for input from the terminal at `tty`, or when that cannot be told (no terminal
/// path, the line discipline unreadable).
#[cfg(target_os = "linux")]
pub(crate) fn input_wait(master: impl AsFd, tty: Option<&Path>, group: &ForegroundGroup) -> Option<InputWait> {
    let tty = tty?;
    let reading = group.members.iter().take(MAX_INSPECTED_MEMBERS).any(|member| process_waits(member.pid, tty));
    // The mode is read after the tasks: a program sets it before it starts reading.
    reading.then(|| LineDiscipline::of(master)).flatten().map(LineDiscipline::wait)
}

/// What the PTY waits for; always `None` outside Linux.
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) fn input_wait<G>(
    _master: impl std::os::fd::AsFd,
    _tty: Option<&std::path::Path>,
    _group: &G,
) -> Option<InputWait> {
    None
}

/// Whether a task of process `pid` is blocked waiting for input from the terminal at `tty`.
#[cfg(target_os = "linux")]
fn process_waits(pid: u32, tty: &Path) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    let is_terminal = |fd: u64| {
        std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
            .is_ok_and(|target| target == tty || target == Path::new("/dev/tty"))
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| task.file_name().to_str()?.parse::<u32>().ok())
        .take(MAX_INSPECTED_TASKS)
        .any(|tid| super::blocked::waits_for_input(pid, tid, is_terminal))
}

#[cfg(test)]
mod tests;

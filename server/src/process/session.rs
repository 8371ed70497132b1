//! Ending everything a child started, not only its process group: a PTY child leads a session of its own, and a
//! job-control shell puts each job in a group of its own inside that session, so a terminal ends with a hangup
//! and then SIGKILL to every process of its session. The same look-up serves whoever ends a dead daemon's
//! children from its record (`daemon::recovery::leftovers`): processes are found in `/proc` by group or session, and a
//! process is only signalled once it is known to be ours (same session, started no earlier than the recorded
//! leader) and checked again just before its signal.

use std::collections::BTreeSet;
use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use crate::procinfo::stat::{ProcStat, proc_stat};

/// How long a hung-up terminal's processes have to exit on their own before every process left in its session
/// gets SIGKILL. The wait ends as soon as the session is empty, so only a session with a process that ignores
/// the hangup (`nohup`, a disowned job, a trap) waits it out; it is long enough for a job's SIGHUP trap to run on
/// a machine whose CPUs are all busy (250 ms was not, once, in the suite run beside `stress-ng --cpu 2`).
pub const HANGUP_GRACE: Duration = Duration::from_secs(1);

/// How often a hung-up terminal's session is looked at again, once its leader has exited, while jobs the
/// hangup reached may still be finishing (at most until [`HANGUP_GRACE`] is over).
pub(crate) const SESSION_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// How many times the members of a group or session are looked up and killed: a member may start a process
/// between the look-up and its own SIGKILL, which the next round finds. It stops early once a round finds
/// nobody new.
pub(crate) const MAX_MEMBER_ROUNDS: usize = 4;

/// How long [`end_members`] waits for the processes it killed to be dead (a SIGKILL takes effect only once the
/// process is scheduled again, which on a loaded machine is not at once), so that whoever answers after it (a
/// `terminate`, a stop) can say they are gone. Only a process stuck in an uninterruptible sleep (a hung network
/// file system) waits it out, and is then left to die on its own.
pub(crate) const KILLED_MEMBER_WAIT: Duration = Duration::from_secs(5);

/// Where a child's processes are: its group (the leader's pid), its session, and the leader's start time. A
/// PTY child leads its own session (`session == pgid`), so its whole session is its reach; a pipe child only
/// its group (its session is the daemon's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reach {
    /// The process group id, which is the leader's pid.
    pub(crate) pgid: u32,
    /// The leader's session id.
    pub(crate) session: u32,
    /// The leader's start time.
    pub(crate) start: u64,
}

impl Reach {
    /// Whether the leader leads its own session, which then belongs to it as a whole.
    pub(crate) fn leads_session(&self) -> bool {
        self.session == self.pgid
    }

    /// Whether process `stat` is in this reach's group or (when it leads one) its session.
    fn finds(&self, stat: &ProcStat) -> bool {
        stat.pgrp == self.pgid || (self.leads_session() && stat.session == self.session)
    }

    /// Whether a process it finds is ours: in the recorded session, and started no earlier than the leader
    /// (an older process there has a group or session id handed out anew, and is someone else's).
    fn owns(&self, stat: &ProcStat) -> bool {
        stat.session == self.session && stat.start >= self.start
    }
}

/// What ending the members of some reaches did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Members {
    /// Processes killed one by one.
    pub(crate) killed: usize,
    /// Processes found (by group or session id) but left alone: in another session, or older than the leader.
    pub(crate) spared: usize,
}

/// Every process of the system that one of `reaches` finds, zombies left out: one pass over `/proc`, whatever
/// the number of reaches. At most one entry per process of the system (the kernel's `pid_max` bounds it).
pub(crate) fn find(reaches: &[Reach]) -> Vec<(u32, ProcStat, Reach)> {
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, proc_stat(pid)?)))
        .filter(|(_, stat)| !stat.is_dead())
        .filter_map(|(pid, stat)| {
            let reach = *reaches.iter().find(|reach| reach.finds(&stat))?;
            Some((pid, stat, reach))
        })
        .collect()
}

/// Kills, one by one, every process one of `reaches` finds and owns (see [`Reach`]), each checked again just
/// before its SIGKILL (same start time, group and session); spares the others. Repeats (at most
/// [`MAX_MEMBER_ROUNDS`] times) while a round finds someone new, then waits (at most [`KILLED_MEMBER_WAIT`])
/// until every process it killed is dead, so none is still running when it returns.
pub(crate) fn end_members(reaches: &[Reach]) -> Members {
    let mut killed = BTreeSet::new();
    let mut spared = BTreeSet::new();
    let mut dying = Vec::new();
    if reaches.is_empty() {
        return Members::default();
    }
    for _ in 0..MAX_MEMBER_ROUNDS {
        let mut found_new = false;
        for (pid, stat, reach) in find(reaches) {
            if !reach.owns(&stat) {
                spared.insert((pid, stat.start));
                continue;
            }
            if !killed.insert((pid, stat.start)) {
                continue;
            }
            found_new = true;
            match kill_unchanged(pid, &stat) {
                Ok(pidfd) => dying.push(pidfd),
                Err(Errno::ESRCH) => {}
                Err(error) => tracing::warn!(pid, pgid = reach.pgid, %error, "cannot end a process of a child"),
            }
        }
        if !found_new {
            break;
        }
    }
    let left = wait_for_pidfds(dying, Instant::now() + KILLED_MEMBER_WAIT);
    if left > 0 {
        tracing::warn!(left, "processes of a child were killed but are not dead yet");
    }
    Members { killed: killed.len(), spared: spared.len() }
}

/// SIGKILL to `pid` if it is still the process `stat` described (as [`signal_unchanged`] checks), through a
/// pidfd opened before the check, so the signal reaches exactly the process checked even if its pid is reused
/// at once; returns the pidfd to wait for its death on.
fn kill_unchanged(pid: u32, stat: &ProcStat) -> Result<OwnedFd, Errno> {
    let raw = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw).ok_or(Errno::ESRCH)?;
    let pidfd = rustix::process::pidfd_open(raw, rustix::process::PidfdFlags::empty())
        .map_err(|error| Errno::from_raw(error.raw_os_error()))?;
    let unchanged = |now: ProcStat| (now.start, now.pgrp, now.session) == (stat.start, stat.pgrp, stat.session);
    if !proc_stat(pid).is_some_and(unchanged) {
        return Err(Errno::ESRCH);
    }
    rustix::process::pidfd_send_signal(&pidfd, rustix::process::Signal::KILL)
        .map_err(|error| Errno::from_raw(error.raw_os_error()))?;
    Ok(pidfd)
}

/// SIGHUP, then SIGCONT, to every process `leaders` own in their sessions (each checked again just before, as
/// [`end_members`] does). An interactive bash that takes the hangup while it runs a command (not at its prompt)
/// exits without passing it on to its jobs (seen in the suite beside `stress-ng`: the job, reparented, ran on
/// until the SIGKILL); a job that already had it from its shell gets it twice, which a hangup handler tolerates.
fn hang_up_members(leaders: &[Reach]) {
    for (pid, stat, reach) in find(leaders) {
        if !reach.owns(&stat) {
            continue;
        }
        let _ = signal_unchanged(pid, &stat, &[Signal::SIGHUP, Signal::SIGCONT]);
    }
}

/// Sends `signals`, in order, to `pid` if it is still the process `stat` described (same start time, group and
/// session, looked at again just before); a process that changed or is gone is left alone (`ESRCH`).
fn signal_unchanged(pid: u32, stat: &ProcStat, signals: &[Signal]) -> Result<(), Errno> {
    let unchanged = |now: ProcStat| (now.start, now.pgrp, now.session) == (stat.start, stat.pgrp, stat.session);
    let Ok(raw) = i32::try_from(pid) else { return Err(Errno::ESRCH) };
    if !proc_stat(pid).is_some_and(unchanged) {
        return Err(Errno::ESRCH);
    }
    signals.iter().try_for_each(|&signal| kill(Pid::from_raw(raw), signal))
}

/// The hangup a closed terminal window gives its session: SIGHUP, then SIGCONT (a stopped shell must run to
/// act on it), to the session leader `pid`. A job-control shell passes the hangup on to its jobs (stopped ones
/// get SIGCONT) and exits. The leader must not be reaped yet, so that its pid is still ours.
pub(crate) fn hang_up(pid: u32) {
    let Ok(raw) = i32::try_from(pid) else { return };
    let leader = Pid::from_raw(raw);
    let _ = kill(leader, Signal::SIGHUP);
    let _ = kill(leader, Signal::SIGCONT);
}

/// Waits until every one of `leaders` (children not reaped yet) has exited, or `deadline` passes, whichever
/// comes first. A leader whose pidfd cannot be opened counts as exited.
pub(crate) fn wait_for_exits(leaders: &[u32], deadline: Instant) {
    let pidfds: Vec<OwnedFd> = leaders
        .iter()
        .filter_map(|&pid| rustix::process::Pid::from_raw(i32::try_from(pid).ok()?))
        .filter_map(|pid| rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok())
        .collect();
    wait_for_pidfds(pidfds, deadline);
}

/// Waits until the process of every one of `pidfds` has exited (a zombie counts), or `deadline` passes; returns
/// how many had not exited by then.
fn wait_for_pidfds(mut pidfds: Vec<OwnedFd>, deadline: Instant) -> usize {
    while !pidfds.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return pidfds.len();
        }
        // Whole milliseconds, rounded up, so the wait never ends just before the deadline and spins.
        let millis = u16::try_from(left.as_millis() + 1).unwrap_or(u16::MAX);
        let ready: Vec<bool> = {
            let mut fds: Vec<PollFd> = pidfds.iter().map(|fd| PollFd::new(fd.as_fd(), PollFlags::POLLIN)).collect();
            match poll(&mut fds, PollTimeout::from(millis)) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(_) => return pidfds.len(),
            }
            fds.iter().map(|fd| fd.revents().is_some_and(|events| !events.is_empty())).collect()
        };
        let mut ready = ready.into_iter();
        pidfds.retain(|_| !ready.next().unwrap_or(true));
    }
    0
}

/// Ends the sessions of terminal children (not reaped yet) that were hung up ([`hang_up`]): waits until their
/// sessions are empty or `deadline` passes (for their leaders' exits, then, while the jobs the hangup reached
/// finish, looking again every [`SESSION_POLL_INTERVAL`]), then sends SIGKILL to each leader's group and
/// leader, and to every process left in their sessions. Once the leaders have exited, whatever is left in their
/// sessions is hung up too ([`hang_up_members`]), so the hangup reaches every job even when the shell did not
/// pass it on. Returns what the look-up of members did.
pub(crate) fn end_sessions(leaders: &[Reach], deadline: Instant) -> Members {
    if leaders.is_empty() {
        return Members::default();
    }
    let pids: Vec<u32> = leaders.iter().map(|reach| reach.pgid).collect();
    wait_for_exits(&pids, deadline);
    if Instant::now() < deadline {
        hang_up_members(leaders);
    }
    while Instant::now() < deadline && !find(leaders).is_empty() {
        std::thread::sleep(SESSION_POLL_INTERVAL.min(deadline.saturating_duration_since(Instant::now())));
    }
    for reach in leaders {
        if let Ok(raw) = i32::try_from(reach.pgid) {
            let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
            let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
        }
    }
    end_members(leaders)
}

#[cfg(test)]
mod tests;

//! Ending what a dead daemon's record of process groups lists (SPEC X5, X7) without signalling anyone else's
//! process, and forgetting the record afterwards so that nobody acts on it again.
//!
//! A group whose leader still runs with the recorded start time is ours and gets SIGKILL as a whole. A group
//! whose leader is gone may still have members (they keep its id from being handed out again), but once it
//! empties its id is free, and a later group may have it. So its members are looked up in `/proc` and killed one
//! by one, only those in the recorded session that started at or after the recorded leader, each checked again
//! just before its signal. A terminal's child leads a session of its own, whose jobs sit in groups of their
//! own: every process of that session is looked up and killed the same way (`process::session`).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use opencode_pty_protocol::LOCK_FILE;

use super::record::{GROUPS_FILE, Group, RecordError, RecordFile, read};
use crate::process::session::{self, Reach};
use crate::procinfo::stat::proc_stat;

/// What ending the groups of a record did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ended {
    /// Groups whose leader still ran with the recorded start time: the group got SIGKILL.
    pub signalled: usize,
    /// Groups left alone because their leader's pid now belongs to a process with another start time (or the
    /// recorded id is not one a group can have: 0, 1 or above `i32::MAX`).
    pub recycled: usize,
    /// Processes killed one by one: members of groups whose leader is gone, and the processes of a terminal's
    /// session (jobs in groups of their own) outside its leader's group.
    pub members: usize,
    /// Processes with a recorded group or session id left alone: in another session, or older than the
    /// recorded leader.
    pub spared: usize,
}

/// Ends every group of `record`: each group whose leader still runs with the recorded start time gets SIGKILL
/// as a whole (see [`end_group`]); then, in one look-up for all of them, the members of groups whose leader is
/// gone and every process of a recorded terminal session (a PTY child leads one, and a job-control shell puts
/// each job in a group of its own there) are killed one by one (`session::end_members`).
pub(crate) fn end_groups(record: &RecordFile) -> Ended {
    let mut ended = Ended::default();
    let reaches: Vec<Reach> = record.groups.iter().filter_map(|group| end_group(*group, &mut ended)).collect();
    let members = session::end_members(&reaches);
    ended.members += members.killed;
    ended.spared += members.spared;
    ended
}

/// Ends `group`'s leader and group where that is safe, adding what it did to `ended`, and returns what must
/// still be looked up member by member. If the leader's pid belongs to a process with another start time,
/// nothing is sent and nothing is looked up. If the leader runs (or is a zombie) with the recorded start time,
/// the group and the leader get SIGKILL, and a session it leads is looked up. If it is gone, its group (and
/// session) is looked up.
fn end_group(group: Group, ended: &mut Ended) -> Option<Reach> {
    let Ok(raw) = i32::try_from(group.pgid) else {
        ended.recycled += 1;
        return None;
    };
    if raw <= 1 {
        ended.recycled += 1;
        return None;
    }
    let pid = Pid::from_raw(raw);
    let reach = Reach { pgid: group.pgid, session: group.session, start: group.start };
    match proc_stat(group.pgid) {
        Some(stat) if stat.start != group.start => {
            ended.recycled += 1;
            None
        }
        Some(_) => {
            // The leader's pid is held, so the group id cannot have been handed out again.
            let _ = killpg(pid, Signal::SIGKILL);
            let _ = kill(pid, Signal::SIGKILL);
            ended.signalled += 1;
            reach.leads_session().then_some(reach)
        }
        None => Some(reach),
    }
}

/// Ends what the record in this daemon's own runtime directory lists, left by a dead predecessor (this daemon
/// holds the lock it held for its whole life, so it is gone). The caller then replaces the record with its own.
/// Returns `None` when there was nothing to do.
pub(crate) fn end_predecessor(path: &Path) -> Result<Option<Ended>, RecordError> {
    let Some(record) = read(path)? else { return Ok(None) };
    if record.groups.is_empty() {
        return Ok(None);
    }
    Ok(Some(end_groups(&record)))
}

/// What happened to a sibling's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sibling {
    /// No record with groups, or its daemon still runs: nothing to do.
    Nothing,
    /// The directory's lock is held (or there is no lock file): its holder handles its own leftovers.
    Locked,
    /// The groups were ended and the record removed.
    Ended(Ended),
}

/// Ends what the record in a sibling runtime directory `dir` lists if the daemon that wrote it is gone, holding
/// that directory's lock (taken without waiting), then removes the record so that nobody acts on it again.
pub(crate) fn end_sibling(dir: &Path) -> Result<Sibling, RecordError> {
    let path = dir.join(GROUPS_FILE);
    let worth_it = |record: &Option<RecordFile>| {
        record.as_ref().is_some_and(|record| !record.groups.is_empty() && record.daemon_is_gone())
    };
    // A first look without the lock, so that the lock is only taken when there is something to do.
    if !worth_it(&read(&path)?) {
        return Ok(Sibling::Nothing);
    }
    let Some(_lock) = try_lock(dir) else { return Ok(Sibling::Locked) };
    let record = read(&path)?;
    if !worth_it(&record) {
        return Ok(Sibling::Nothing);
    }
    let ended = record.as_ref().map(end_groups).unwrap_or_default();
    remove_record(&path)?;
    Ok(Sibling::Ended(ended))
}

/// The guardian's last act: removes the record at `path` if it still names daemon `instance_id`, holding the
/// directory's lock (taken without waiting). Returns whether it did; when the lock is held, a new daemon owns
/// the directory and replaces the record itself.
pub(crate) fn forget(path: &Path, instance_id: &str) -> Result<bool, RecordError> {
    let Some(dir) = path.parent() else { return Ok(false) };
    let Some(_lock) = lock_after_death(dir, path, instance_id) else { return Ok(false) };
    match read(path)? {
        Some(record) if record.instance_id == instance_id => {
            remove_record(path)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// How long the guardian waits for its daemon, killed a moment ago, to let go of the directory's lock: the kernel
/// closes a dying process's descriptors only once its last thread has exited, and its main thread shows as a
/// zombie before that (the suite beside `stress-ng` saw the lock still held after the main thread was a zombie,
/// and the record was left). The wait ends as soon as the lock is free or another daemon's record replaces it.
pub(crate) const FORGET_LOCK_WAIT: Duration = Duration::from_secs(5);

/// Takes `dir`'s lock for the guardian of daemon `instance_id`: at once, or as soon as the dying daemon lets go
/// of it, within [`FORGET_LOCK_WAIT`]. `None` when the record is no longer that daemon's (a new daemon holds
/// the directory and replaces the record itself) or the lock stays held that long.
fn lock_after_death(dir: &Path, path: &Path, instance_id: &str) -> Option<Flock<File>> {
    let deadline = Instant::now() + FORGET_LOCK_WAIT;
    loop {
        if let Some(lock) = try_lock(dir) {
            return Some(lock);
        }
        let ours = matches!(read(path), Ok(Some(record)) if record.instance_id == instance_id);
        if !ours || Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn remove_record(path: &Path) -> Result<(), RecordError> {
    match fs::remove_file(path) {
        Err(source) if source.kind() != io::ErrorKind::NotFound => {
            Err(RecordError::Io { action: "remove", path: path.to_owned(), cause: source })
        }
        _ => Ok(()),
    }
}

/// Takes the lock of runtime directory `dir` (`service.lock`) exclusively without waiting; `None` when someone
/// holds it, it cannot be opened, or the file locked is no longer the one at that path (a stopping daemon
/// removes its lock file, and a new daemon may have created another).
pub(crate) fn try_lock(dir: &Path) -> Option<Flock<File>> {
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(&path).ok()?;
    let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock).ok()?;
    let held = lock.metadata().ok()?;
    let current = fs::symlink_metadata(&path).ok()?;
    (held.dev() == current.dev() && held.ino() == current.ino()).then_some(lock)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::recovery::record::GroupRecord;
    use crate::service::ProcessHook;
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use tempfile::TempDir;

    use opencode_pty_testkit::Sleeper;

    /// The group a [`Sleeper`] leads, as a record lists it.
    fn group(sleeper: &Sleeper) -> Group {
        let stat = proc_stat(sleeper.pid()).unwrap();
        Group { pgid: sleeper.pid(), start: stat.start, session: stat.session }
    }

    /// A `sleep` left alone in the group of a shell that has exited and been reaped: a group whose leader is gone.
    /// The `sleep` is no child of the test; it is SIGKILLed on drop if it still runs.
    struct Orphan {
        /// The group as the record would list it (the shell's pid, start time and session).
        group: Group,
        pid: u32,
        start: u64,
    }

    impl Orphan {
        fn start() -> Orphan {
            Orphan::start_with("sleep 1000")
        }

        /// The same with `command` as the member left in the group.
        fn start_with(command: &str) -> Orphan {
            let mut shell = Command::new("sh")
                .args(["-c", &format!("{command} >/dev/null 2>&1 & echo $!; read _")])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .process_group(0)
                .spawn()
                .unwrap();
            let mut line = String::new();
            BufReader::new(shell.stdout.take().unwrap()).read_line(&mut line).unwrap();
            let pid: u32 = line.trim().parse().unwrap();
            let leader = proc_stat(shell.id()).unwrap();
            let start = proc_stat(pid).unwrap().start;
            drop(shell.stdin.take());
            shell.wait().unwrap();
            let group = Group { pgid: shell.id(), start: leader.start, session: leader.session };
            Orphan { group, pid, start }
        }

        fn running(&self) -> bool {
            proc_stat(self.pid).is_some_and(|stat| stat.start == self.start && !matches!(stat.state, 'Z' | 'X'))
        }

        /// Waits (bounded: 20 s) for it to be gone.
        fn wait_gone(&self) {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while self.running() {
                assert!(std::time::Instant::now() < deadline, "the orphan was not ended");
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }

    impl Drop for Orphan {
        fn drop(&mut self) {
            if self.running() {
                let _ = kill(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
            }
            // Whatever it started: the group's processes in this session not older than its leader.
            for (pid, stat) in processes_in_group(self.group.pgid) {
                if stat.session == self.group.session && stat.start >= self.group.start {
                    let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                }
            }
        }
    }

    fn record_of(groups: Vec<Group>) -> RecordFile {
        RecordFile { instance_id: "x".into(), daemon_pid: u32::MAX, daemon_start: 0, groups }
    }

    /// Every live process of group `pgid` (no group id is 0, so no session is looked up).
    fn processes_in_group(pgid: u32) -> Vec<(u32, crate::procinfo::stat::ProcStat)> {
        session::find(&[Reach { pgid, session: 0, start: 0 }]).into_iter().map(|(pid, stat, _)| (pid, stat)).collect()
    }

    /// A recorded terminal child (a shell leading its own session) with a job in a group of its own: the job is
    /// ended with the session, whether the leader still runs (the group is signalled, the session looked up)
    /// or has exited (both looked up).
    #[test]
    fn a_recorded_session_is_ended_whole_with_its_jobs_in_other_groups() {
        for leader_exits in [false, true] {
            // `setsid` (no group leader here, so it does not fork) makes the shell lead a session; the job moves
            // to a group of its own as job control would put it.
            let script = "python3 -c 'import os, sys; os.setpgid(0, 0); os.execvp(\"sleep\", [\"sleep\", \"1005\"])' \
                          & echo $!; read _";
            let mut shell = Command::new("setsid")
                .args(["sh", "-c", script])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut line = String::new();
            BufReader::new(shell.stdout.take().unwrap()).read_line(&mut line).unwrap();
            let job: u32 = line.trim().parse().unwrap();
            let leader = proc_stat(shell.id()).unwrap();
            let group = Group { pgid: shell.id(), start: leader.start, session: leader.session };
            assert_eq!(group.session, group.pgid, "the shell leads its session");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while proc_stat(job).is_none_or(|stat| stat.pgrp != job) {
                assert!(std::time::Instant::now() < deadline, "the job never moved to a group of its own");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            if leader_exits {
                drop(shell.stdin.take());
                shell.wait().unwrap();
            }
            let ended = end_groups(&record_of(vec![group]));
            assert!(ended.members >= 1, "the job was looked up in the session: {ended:?}");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while proc_stat(job).is_some_and(|stat| !stat.is_dead()) {
                assert!(std::time::Instant::now() < deadline, "the job outlived its recorded session");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            let _ = shell.kill();
            let _ = shell.wait();
        }
    }

    #[test]
    fn a_matching_group_is_ended_and_a_recycled_one_is_not() {
        let (mut matching, mut recycled) = (Sleeper::start(), Sleeper::start());
        let wrong = Group { start: group(&recycled).start + 1, ..group(&recycled) };
        let ended = end_groups(&record_of(vec![group(&matching), wrong]));
        assert_eq!(ended, Ended { signalled: 1, recycled: 1, ..Ended::default() });
        let status = matching.wait();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9));
        assert!(recycled.running(), "a group whose start time does not match is never signalled");
    }

    #[test]
    fn a_leaderless_group_is_ended_member_by_member_sparing_older_processes_and_other_sessions() {
        let orphan = Orphan::start();
        assert!(proc_stat(orphan.group.pgid).is_none(), "the leader is gone");
        // The same group id recorded for a leader that started after the live member: a group id handed out anew.
        let later = Group { start: orphan.start + 1, ..orphan.group };
        let ended = end_groups(&record_of(vec![later]));
        assert!(orphan.running(), "a process older than the recorded leader was signalled");
        assert_eq!(ended, Ended { spared: 1, ..Ended::default() });
        let elsewhere = Group { session: orphan.group.session.wrapping_add(1), ..orphan.group };
        let ended = end_groups(&record_of(vec![elsewhere]));
        assert!(orphan.running(), "a process in another session was signalled");
        assert_eq!(ended, Ended { spared: 1, ..Ended::default() });

        let ended = end_groups(&record_of(vec![orphan.group]));
        assert_eq!(ended, Ended { members: 1, ..Ended::default() });
        orphan.wait_gone();
    }

    #[test]
    fn members_started_while_the_members_are_ended_are_ended_too() {
        // A member that starts processes as fast as it can: some start between the first look-up and its own
        // SIGKILL, and only a later look-up finds them.
        let orphan = Orphan::start_with("while :; do sleep 1000 & done");
        // Once the loop runs (it has started a member of its own), it goes on starting them during the end.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while processes_in_group(orphan.group.pgid).len() < 2 {
            assert!(std::time::Instant::now() < deadline, "the loop never started a process");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let ended = end_groups(&record_of(vec![orphan.group]));
        assert!(ended.members > 1, "{ended:?}");
        orphan.wait_gone();
        // A killed process may take a moment to become a zombie.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let left = processes_in_group(orphan.group.pgid);
            if left.is_empty() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "processes outlived their group's end: {left:?}");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// A sibling runtime directory with a lock file and the record of a dead daemon listing `groups`.
    fn sibling(groups: Vec<Group>) -> TempDir {
        let dir = TempDir::new().unwrap();
        fs::write(dir.path().join(LOCK_FILE), "").unwrap();
        let mut gone = Command::new("true").spawn().unwrap();
        let daemon_pid = gone.id();
        gone.wait().unwrap();
        let record = RecordFile { daemon_pid, daemon_start: 1, ..record_of(groups) };
        fs::write(dir.path().join(GROUPS_FILE), serde_json::to_vec(&record).unwrap()).unwrap();
        dir
    }

    #[test]
    fn a_siblings_record_is_acted_on_once_then_removed() {
        let mut sleeper = Sleeper::start();
        let dir = sibling(vec![group(&sleeper)]);
        let ended = end_sibling(dir.path()).unwrap();
        assert_eq!(ended, Sibling::Ended(Ended { signalled: 1, ..Ended::default() }));
        sleeper.wait();
        assert!(!dir.path().join(GROUPS_FILE).exists(), "the record is removed");
        assert_eq!(end_sibling(dir.path()).unwrap(), Sibling::Nothing, "a second sweep signals nothing");
    }

    #[test]
    fn a_siblings_record_is_left_to_the_holder_of_its_lock() {
        let mut sleeper = Sleeper::start();
        let dir = sibling(vec![group(&sleeper)]);
        let held = try_lock(dir.path()).expect("the lock is free");
        assert_eq!(end_sibling(dir.path()).unwrap(), Sibling::Locked);
        assert!(sleeper.running(), "a record whose directory's lock is held was acted on");
        assert!(dir.path().join(GROUPS_FILE).exists());
        drop(held);
        fs::remove_file(dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(end_sibling(dir.path()).unwrap(), Sibling::Locked, "without a lock file nothing is proven");
        assert!(sleeper.running());
    }

    #[test]
    fn a_live_siblings_record_is_kept() {
        let mut sleeper = Sleeper::start();
        let dir = TempDir::new().unwrap();
        fs::write(dir.path().join(LOCK_FILE), "").unwrap();
        let record = GroupRecord::create(dir.path(), "abc").unwrap();
        record.started(1, sleeper.pid()).unwrap();
        assert_eq!(end_sibling(dir.path()).unwrap(), Sibling::Nothing, "this daemon lives");
        assert!(sleeper.running());
        assert_eq!(end_predecessor(record.path()).unwrap(), Some(Ended { signalled: 1, ..Ended::default() }));
        sleeper.wait();
    }

    #[test]
    fn the_guardian_forgets_only_its_own_record_and_only_holding_the_lock() {
        let dir = TempDir::new().unwrap();
        fs::write(dir.path().join(LOCK_FILE), "").unwrap();
        let record = GroupRecord::create(dir.path(), "abc").unwrap();
        assert!(!forget(record.path(), "another").unwrap(), "the record of another daemon is kept");
        let held = try_lock(dir.path()).unwrap();
        assert!(!forget(record.path(), "abc").unwrap(), "a lock holder replaces the record itself");
        drop(held);
        assert!(forget(record.path(), "abc").unwrap());
        assert!(read(record.path()).unwrap().is_none());
    }

    /// A dying daemon's lock goes only once its last thread has exited, which may be after its pipe closed and
    /// its main thread turned zombie: the guardian waits for it rather than leaving the record.
    #[test]
    fn the_guardian_takes_the_lock_a_dying_daemon_lets_go_of_late() {
        let dir = TempDir::new().unwrap();
        fs::write(dir.path().join(LOCK_FILE), "").unwrap();
        let record = GroupRecord::create(dir.path(), "abc").unwrap();
        let held = try_lock(dir.path()).unwrap();
        let dying = std::thread::spawn(move || {
            std::thread::sleep(FORGET_LOCK_WAIT / 5);
            drop(held);
        });
        assert!(forget(record.path(), "abc").unwrap(), "the lock let go of within the wait was taken");
        assert!(read(record.path()).unwrap().is_none());
        dying.join().unwrap();
    }
}

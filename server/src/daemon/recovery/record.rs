//! The record of a daemon's process groups, kept in its runtime directory (`service.groups`) so that whoever
//! outlives the daemon (its guardian, the next daemon in that directory, a sibling's sweep) can end them
//! (`daemon::recovery::leftovers`). Each group is listed with its leader's start time and session, which are checked
//! before any signal.
//!
//! The file is private (0600, in the 0700 runtime directory) and replaced atomically (a temp file renamed over
//! it) on every start and reap, so a reader sees one whole version; while the daemon stops, reaps are no longer
//! written (the file then lists more than what runs, never less) and the stop removes it once at the end. It is
//! not synced: it only matters while the machine runs, and a daemon killed after the rename has still left the
//! full text in the page cache. It holds one entry per child not yet reaped, so it is bounded by the daemon's
//! live processes; readers refuse a file over [`MAX_RECORD_BYTES`]. A start that cannot be written (a full
//! disk, a removed directory) refuses the child: the service stops it and answers the error, since nothing
//! would end it if the daemon died.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::daemon::files::{TEMP_PREFIX, TEMP_SUFFIX};
use crate::error::ServiceError;
use crate::procinfo::stat::proc_stat;
use crate::service::ProcessHook;

/// The record's file name inside a runtime directory.
pub const GROUPS_FILE: &str = "service.groups";

/// The largest record a reader accepts: about 150 000 groups, far more than a daemon can run (each child
/// costs it two to four threads and as many descriptors).
pub(crate) const MAX_RECORD_BYTES: u64 = 8 * 1024 * 1024;

/// Permissions of the record and its temp file.
const RECORD_MODE: u32 = 0o600;

/// One process group a daemon started: its id (the leader's pid), the leader's start time and its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// The process group id, which is the leader's pid.
    pub pgid: u32,
    /// The leader's start time (`/proc/<pid>/stat` field 22).
    pub start: u64,
    /// The leader's session id (field 6): its own pid for a PTY child, the daemon's session for a pipe child.
    pub session: u32,
}

/// What a record file holds: whose it is, and its groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordFile {
    /// The writing daemon's instance id (its registration's).
    pub instance_id: String,
    /// The writing daemon's pid ...
    pub daemon_pid: u32,
    /// ... and start time, so a reader can tell whether it still runs.
    pub daemon_start: u64,
    /// Every group whose leader the daemon has not reaped yet.
    pub groups: Vec<Group>,
}

impl RecordFile {
    /// Whether the daemon that wrote this record has exited: no process has its pid, another one does (a
    /// different start time), or it is a zombie.
    pub fn daemon_is_gone(&self) -> bool {
        match proc_stat(self.daemon_pid) {
            Some(stat) => stat.start != self.daemon_start || stat.is_dead(),
            None => true,
        }
    }
}

/// Why a record could not be written or read; each message names the file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordError {
    /// Reading, writing or renaming the file failed.
    #[error("cannot {action} {}: {cause}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why, from the operating system.
        cause: io::Error,
    },
    /// The file is not a record.
    #[error("{} is not a process group record: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The daemon's own start time cannot be read from `/proc`.
    #[error("cannot read this daemon's start time from /proc/{0}/stat")]
    NoStartTime(u32),
}

/// Reads the record at `path`: `Ok(None)` when there is none. Refuses a symbolic link, anything but a regular
/// file, and a file over [`MAX_RECORD_BYTES`].
pub(crate) fn read(path: &Path) -> Result<Option<RecordFile>, RecordError> {
    let io_error = |action, source| RecordError::Io { action, path: path.to_owned(), cause: source };
    let invalid = |reason: String| RecordError::Invalid { path: path.to_owned(), reason };
    let file = match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("open", e)),
    };
    let meta = file.metadata().map_err(|e| io_error("inspect", e))?;
    if !meta.is_file() {
        return Err(invalid("it is not a regular file".into()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_RECORD_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io_error("read", e))?;
    if bytes.len() as u64 > MAX_RECORD_BYTES {
        return Err(invalid(format!("it is over {MAX_RECORD_BYTES} bytes")));
    }
    serde_json::from_slice(&bytes).map(Some).map_err(|e| invalid(e.to_string()))
}

/// The live record of this daemon: the groups of its children not reaped yet, written through to
/// `dir/service.groups` on each change. It is the service's [`ProcessHook`].
#[derive(Debug)]
pub(crate) struct GroupRecord {
    path: PathBuf,
    temp: PathBuf,
    state: Mutex<RecordState>,
}

/// What the record holds and whether it may still be written, under its lock.
#[derive(Debug)]
struct RecordState {
    file: RecordFile,
    /// Each service id's group; the file lists them in id order.
    groups: BTreeMap<u64, Group>,
    /// Set by [`GroupRecord::remove`]: the file is gone for good.
    removed: bool,
    /// Set by [`GroupRecord::stopping`]: reaps are no longer written.
    stopping: bool,
    /// Set by [`GroupRecord::resumed`] until [`GroupRecord::rewrite`]: changes are not written, so the file an
    /// upgrade's predecessor left (listing every group) stays until the restored groups are all in.
    deferred: bool,
}

/// What a change of the record is: a reap is not written once the stop begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// A child started: its group is added.
    Start,
    /// A child was reaped: its group is removed.
    Reap,
}

impl GroupRecord {
    /// Starts the record of this daemon (`instance_id`, this process) in `dir`, replacing any record there,
    /// and writes it with no groups.
    #[cfg(test)]
    pub(crate) fn create(dir: &Path, instance_id: &str) -> Result<GroupRecord, RecordError> {
        let record = GroupRecord::new(dir, instance_id)?;
        record.rewrite()?;
        Ok(record)
    }

    /// The record of this daemon (`instance_id`, this process) in `dir`, not written yet ([`Self::rewrite`]).
    /// Fails only without `/proc` (no start time to record).
    pub(crate) fn new(dir: &Path, instance_id: &str) -> Result<GroupRecord, RecordError> {
        let daemon_pid = std::process::id();
        let daemon_start = proc_stat(daemon_pid).ok_or(RecordError::NoStartTime(daemon_pid))?.start;
        let file = RecordFile { instance_id: instance_id.to_owned(), daemon_pid, daemon_start, groups: Vec::new() };
        let record = GroupRecord {
            path: dir.join(GROUPS_FILE),
            temp: dir.join(format!("{TEMP_PREFIX}{instance_id}.groups{TEMP_SUFFIX}")),
            state: Mutex::new(RecordState {
                file,
                groups: BTreeMap::new(),
                removed: false,
                stopping: false,
                deferred: false,
            }),
        };
        Ok(record)
    }

    /// The record of this daemon after an in-place upgrade (same instance, same process, the same file): the
    /// file its predecessor wrote stays as it is until [`Self::rewrite`], once the restored children are in,
    /// so the guardian never reads a record missing one of them.
    pub(crate) fn resumed(dir: &Path, instance_id: &str) -> Result<GroupRecord, RecordError> {
        let record = GroupRecord::new(dir, instance_id)?;
        record.lock().deferred = true;
        Ok(record)
    }

    /// Writes the record as it stands (at the start, replacing any record there, and whenever the file went
    /// missing, as when its runtime directory was removed and recreated), unless it was removed for good.
    pub(crate) fn rewrite(&self) -> Result<(), RecordError> {
        let mut state = self.lock();
        if state.removed {
            return Ok(());
        }
        state.deferred = false;
        self.write(&state)
    }

    /// The record's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RecordState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes the temp file and renames it over the record.
    fn write(&self, state: &RecordState) -> Result<(), RecordError> {
        let mut file = state.file.clone();
        file.groups = state.groups.values().copied().collect();
        let io_error = |action, path: &Path, source| RecordError::Io { action, path: path.to_owned(), cause: source };
        let json = serde_json::to_vec(&file).map_err(|e| io_error("encode", &self.path, e.into()))?;
        let written = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(RECORD_MODE)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.temp)
            .and_then(|mut temp| temp.write_all(&json))
            .map_err(|e| io_error("write", &self.temp, e))
            .and_then(|()| fs::rename(&self.temp, &self.path).map_err(|e| io_error("replace", &self.path, e)));
        if written.is_err() {
            let _ = fs::remove_file(&self.temp);
        }
        written
    }

    /// Applies `change` and writes the record, unless it was removed, or this is a reap while stopping. A
    /// failed start is undone and returned (the caller stops that child); a failed reap is logged, and the file
    /// keeps listing the group (more than what runs, never less).
    fn update(&self, kind: Change, id: u64, change: impl FnOnce(&mut BTreeMap<u64, Group>)) -> Result<(), RecordError> {
        let mut state = self.lock();
        if state.removed {
            return Ok(());
        }
        change(&mut state.groups);
        if state.deferred || (state.stopping && kind == Change::Reap) {
            return Ok(());
        }
        let written = self.write(&state);
        if let Err(error) = &written {
            crate::daemon::log_limit::limited_warn!(crate::daemon::log_limit::RECORD_WRITES, %error,
                "cannot update the record of process groups");
            if kind == Change::Start {
                state.groups.remove(&id);
            }
        }
        written
    }

    /// The orderly stop begins: from now on a reap is not written, so stopping N processes does not rewrite the
    /// file N times; it keeps listing them until [`GroupRecord::remove`]. A start is still written (a child
    /// started while the stop begins runs until the stop ends it).
    pub(crate) fn stopping(&self) {
        self.lock().stopping = true;
    }

    /// Removes the record for good (an orderly stop, once every child is reaped); later changes are ignored.
    pub(crate) fn remove(&self) {
        let mut state = self.lock();
        state.removed = true;
        for path in [&self.path, &self.temp] {
            if let Err(error) = fs::remove_file(path)
                && error.kind() != io::ErrorKind::NotFound
            {
                tracing::warn!(path = %path.display(), %error, "cannot remove the record of process groups");
            }
        }
    }
}

impl ProcessHook for GroupRecord {
    /// Adds the child's group to the file; refuses the child when that cannot be done, since nothing would
    /// end it if the daemon died.
    fn started(&self, id: u64, pid: u32) -> Result<(), ServiceError> {
        // The child is not reaped before `reaped`, so this is its own start time.
        let Some(stat) = proc_stat(pid) else {
            return Err(ServiceError::Unrecorded(format!("cannot read the start time of pid {pid} from /proc")));
        };
        self.update(Change::Start, id, |groups| {
            groups.insert(id, Group { pgid: pid, start: stat.start, session: stat.session });
        })
        .map_err(|error| ServiceError::Unrecorded(error.to_string()))
    }

    fn reaped(&self, id: u64) {
        // A failure is logged by `update`; the file keeps listing the group.
        let _ = self.update(Change::Reap, id, |groups| {
            groups.remove(&id);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencode_pty_testkit::Sleeper;
    use std::process::Command;
    use tempfile::TempDir;

    /// The group a [`Sleeper`] leads, as the record lists it.
    fn group(sleeper: &Sleeper) -> Group {
        let stat = proc_stat(sleeper.pid()).unwrap();
        Group { pgid: sleeper.pid(), start: stat.start, session: stat.session }
    }

    fn record_of(groups: Vec<Group>) -> RecordFile {
        RecordFile { instance_id: "x".into(), daemon_pid: u32::MAX, daemon_start: 0, groups }
    }

    #[test]
    fn the_live_record_follows_starts_and_reaps() {
        let dir = TempDir::new().unwrap();
        let record = GroupRecord::create(dir.path(), "abc").unwrap();
        let read_back = || read(record.path()).unwrap().unwrap();
        assert_eq!(read_back().groups, []);
        assert_eq!(read_back().daemon_pid, std::process::id());
        assert!(!read_back().daemon_is_gone());
        let (a, b) = (Sleeper::start(), Sleeper::start());
        record.started(7, a.pid()).unwrap();
        record.started(3, b.pid()).unwrap();
        assert_eq!(read_back().groups, [group(&b), group(&a)], "in id order");
        record.reaped(3);
        assert_eq!(read_back().groups, [group(&a)]);
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [GROUPS_FILE], "no temp file is left");
        let mode = fs::metadata(record.path()).unwrap().permissions();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777, RECORD_MODE);
        record.remove();
        record.started(8, a.pid()).unwrap();
        assert!(read(record.path()).unwrap().is_none(), "nothing is written after remove");
    }

    #[test]
    fn while_stopping_reaps_are_not_written_but_starts_are() {
        let dir = TempDir::new().unwrap();
        let record = GroupRecord::create(dir.path(), "abc").unwrap();
        let read_back = || read(record.path()).unwrap().unwrap().groups;
        let (a, b, c) = (Sleeper::start(), Sleeper::start(), Sleeper::start());
        record.started(1, a.pid()).unwrap();
        record.started(2, b.pid()).unwrap();
        record.stopping();
        record.reaped(1);
        record.reaped(2);
        assert_eq!(read_back(), [group(&a), group(&b)], "the file lists more than what runs, never less");
        record.started(3, c.pid()).unwrap();
        assert_eq!(read_back(), [group(&c)], "a start is written, and with it what the reaps left");
        record.remove();
        assert!(read(record.path()).unwrap().is_none());
    }

    #[test]
    fn a_resumed_record_leaves_the_predecessors_file_until_every_restored_group_is_in() {
        let dir = TempDir::new().unwrap();
        let (a, b) = (Sleeper::start(), Sleeper::start());
        let predecessor = GroupRecord::create(dir.path(), "abc").unwrap();
        predecessor.started(1, a.pid()).unwrap();
        predecessor.started(2, b.pid()).unwrap();
        let left = read(predecessor.path()).unwrap().unwrap();
        let record = GroupRecord::resumed(dir.path(), "abc").unwrap();
        record.started(1, a.pid()).unwrap();
        assert_eq!(read(record.path()).unwrap().unwrap(), left, "not written while the groups are restored");
        record.started(2, b.pid()).unwrap();
        record.rewrite().unwrap();
        assert_eq!(read(record.path()).unwrap().unwrap(), left, "the same process, instance and groups");
        record.reaped(1);
        assert_eq!(read(record.path()).unwrap().unwrap().groups, [group(&b)], "written as usual from then on");
        record.remove();
    }

    #[test]
    fn a_start_that_cannot_be_written_is_refused_and_undone() {
        let dir = TempDir::new().unwrap();
        let record = GroupRecord::create(dir.path(), "abc").unwrap();
        let (a, b) = (Sleeper::start(), Sleeper::start());
        record.started(1, a.pid()).unwrap();
        // A directory where the temp file goes: every write fails, as on a full disk (and even as root).
        fs::create_dir(&record.temp).unwrap();
        let refused = record.started(2, b.pid()).unwrap_err().to_string();
        assert!(refused.starts_with("process not started: the daemon cannot record its process group"), "{refused}");
        assert!(refused.contains(&record.temp.display().to_string()), "{refused}");
        assert_eq!(read(record.path()).unwrap().unwrap().groups, [group(&a)], "the file is as it was");
        fs::remove_dir(&record.temp).unwrap();
        record.reaped(2);
        record.started(3, b.pid()).unwrap();
        assert_eq!(read(record.path()).unwrap().unwrap().groups, [group(&a), group(&b)], "the refused one is not kept");
    }

    #[test]
    fn a_dead_daemon_is_recognised() {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let dead = RecordFile { daemon_pid: pid, ..record_of(Vec::new()) };
        assert!(dead.daemon_is_gone());
        let start = proc_stat(std::process::id()).unwrap().start;
        let other = RecordFile { daemon_pid: std::process::id(), daemon_start: start + 1, ..dead.clone() };
        assert!(other.daemon_is_gone(), "the pid now belongs to another process");
    }

    #[test]
    fn bad_records_are_refused() {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join(GROUPS_FILE);
        assert!(read(&path).unwrap().is_none());
        fs::write(&path, "{}").unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("is not a process group record"));
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &path).unwrap();
        assert!(read(&path).is_err(), "a symbolic link is never followed");
        fs::remove_file(&path).unwrap();
        fs::create_dir(&path).unwrap();
        assert!(read(&path).is_err());
        fs::remove_dir(&path).unwrap();
        let big = fs::File::create(&path).unwrap();
        big.set_len(MAX_RECORD_BYTES + 1).unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("over"));
    }
}

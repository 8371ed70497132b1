//! The startup sweep: ends the process groups that dead daemons' records list in sibling runtime directories,
//! removes the directories (and their sockets) that dead daemons left behind, and keeps everything it cannot
//! prove dead.

use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use opencode_pty_protocol::{LOCK_FILE, REGISTRATION_FILE};

use super::leftovers::{Sibling, end_sibling, try_lock};
use super::record::GROUPS_FILE;
use crate::daemon::files::{TEMP_PREFIX, TEMP_SUFFIX, read_registration};
use crate::daemon::lock::socket_answers;
use crate::daemon::socket::socket_file_name;

/// A sibling directory is only considered once it has not been modified for this long, so a daemon that is
/// just starting (and has not taken its lock yet) is never swept.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// What a sweep did with each sibling entry of the runtime root.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct SweepReport {
    /// Directories of dead daemons, removed with their sockets.
    pub removed: Vec<PathBuf>,
    /// Entries left alone: alive, fresh, foreign, without evidence, or failed to remove.
    pub kept: Vec<PathBuf>,
    /// Problems met on the way, each naming its path; none stops the sweep.
    pub errors: Vec<String>,
}

/// Sweeps the siblings of `own_dir` in `root`, as of now. See [`sweep_siblings_at`].
pub(crate) fn sweep_siblings(root: &Path, own_dir: &Path) -> SweepReport {
    sweep_siblings_at(root, own_dir, SystemTime::now())
}

/// In every entry of `root` other than `own_dir` that is a directory (not a symbolic link), ends the process
/// groups its record lists if the daemon that wrote the record is gone and the directory's lock is free
/// (whatever the directory's age), and removes that record (see [`end_sibling`]). Then removes every such
/// directory unmodified for [`STALE_AFTER`] before `now`, holding only a lock file, a registration, a record
/// and temp files, whose daemon is provably dead: its lock file can be locked, or, without a lock file, its
/// registration names a process that does not exist. Its socket goes first, the lock file last, then the
/// directory.
pub(crate) fn sweep_siblings_at(root: &Path, own_dir: &Path, now: SystemTime) -> SweepReport {
    let mut report = SweepReport::default();
    let own = fs::canonicalize(own_dir).ok();
    // Where this daemon's sockets are: a sibling that used the same place has its socket there.
    let own_sockets = read_registration(own_dir).ok().and_then(|r| Path::new(&r.socket).parent().map(Path::to_owned));
    let entries = match fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) => {
            report.errors.push(format!("cannot list {}: {e}", root.display()));
            return report;
        }
    };
    for entry in entries {
        let path = match entry {
            Ok(entry) => entry.path(),
            Err(e) => {
                report.errors.push(format!("cannot list {}: {e}", root.display()));
                continue;
            }
        };
        if path == own_dir || (own.is_some() && fs::canonicalize(&path).ok() == own) {
            continue;
        }
        match sweep_one(&path, now, own_sockets.as_deref()) {
            Ok(true) => report.removed.push(path),
            Ok(false) => report.kept.push(path),
            Err(message) => {
                report.errors.push(message);
                report.kept.push(path);
            }
        }
    }
    report
}

/// Sweeps one entry: `Ok(true)` when it was removed, `Ok(false)` when it is kept.
fn sweep_one(dir: &Path, now: SystemTime, own_sockets: Option<&Path>) -> Result<bool, String> {
    let meta = fs::symlink_metadata(dir).map_err(|e| format!("cannot inspect {}: {e}", dir.display()))?;
    // A symbolic link's own type is never a directory.
    if !meta.file_type().is_dir() {
        return Ok(false);
    }
    match end_sibling(dir) {
        Ok(Sibling::Ended(ended)) => tracing::warn!(
            dir = %dir.display(),
            signalled = ended.signalled,
            recycled = ended.recycled,
            members = ended.members,
            spared = ended.spared,
            "ended the process groups a dead daemon left, and removed its record"
        ),
        Ok(Sibling::Locked) => {
            tracing::debug!(dir = %dir.display(), "a dead daemon's record is left to the directory's lock holder")
        }
        Ok(Sibling::Nothing) => {}
        Err(error) => tracing::warn!(%error, "cannot end what a dead daemon left"),
    }
    let stale = meta.modified().ok().and_then(|mtime| now.duration_since(mtime).ok());
    if stale.is_none_or(|age| age < STALE_AFTER) {
        return Ok(false);
    }
    let Some(names) = leftover_names(dir)? else {
        return Ok(false);
    };
    let has_lock = names.iter().any(|name| name == LOCK_FILE);
    let lock = if has_lock {
        match try_lock(dir) {
            Some(lock) => Some(lock),
            None => return Ok(false),
        }
    } else if names.iter().any(|name| name == REGISTRATION_FILE) && registered_pid_is_gone(dir) {
        None
    } else {
        return Ok(false);
    };

    for socket in stale_sockets(dir, own_sockets) {
        if fs::symlink_metadata(&socket).is_ok_and(|meta| meta.file_type().is_socket()) && !socket_answers(&socket) {
            remove_file(&socket)?;
        }
    }
    for name in names.iter().filter(|name| *name != LOCK_FILE) {
        remove_file(&dir.join(name))?;
    }
    if has_lock {
        remove_file(&dir.join(LOCK_FILE))?;
    }
    drop(lock);
    fs::remove_dir(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    Ok(true)
}

/// Where the socket of a dead daemon in `dir` can be: the path its registration names, and the one in
/// `own_sockets` (this daemon's socket directory); each only with the name `dir`'s path hashes to, so nothing
/// else is ever removed.
fn stale_sockets(dir: &Path, own_sockets: Option<&Path>) -> Vec<PathBuf> {
    let Ok(canonical) = fs::canonicalize(dir) else { return Vec::new() };
    let name = socket_file_name(&canonical);
    let registered = read_registration(dir).ok().map(|registration| PathBuf::from(registration.socket));
    let mut found: Vec<PathBuf> = own_sockets.map(|sockets| sockets.join(&name)).into_iter().collect();
    if let Some(path) = registered.filter(|path| path.file_name().is_some_and(|file| *file == *name))
        && !found.contains(&path)
    {
        found.push(path);
    }
    found
}

/// The names in `dir` when all are regular files a daemon leaves behind (`service.lock`, `service.json`,
/// `service.groups`, `service.*.tmp`); `None` when anything else is there.
fn leftover_names(dir: &Path) -> Result<Option<Vec<String>>, String> {
    let listing_error = |e: io::Error| format!("cannot list {}: {e}", dir.display());
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(listing_error)? {
        let entry = entry.map_err(listing_error)?;
        let Ok(name) = entry.file_name().into_string() else {
            return Ok(None);
        };
        let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
        if !is_file || !is_leftover_name(&name) {
            return Ok(None);
        }
        names.push(name);
    }
    Ok(Some(names))
}

/// Whether `name` is one a daemon writes into its runtime directory.
fn is_leftover_name(name: &str) -> bool {
    let is_temp = name.len() > TEMP_PREFIX.len() + TEMP_SUFFIX.len()
        && name.starts_with(TEMP_PREFIX)
        && name.ends_with(TEMP_SUFFIX);
    name == LOCK_FILE || name == REGISTRATION_FILE || name == GROUPS_FILE || is_temp
}

/// Whether `dir/service.json` is a registration naming a process that does not exist.
fn registered_pid_is_gone(dir: &Path) -> bool {
    read_registration(dir).is_ok_and(|registration| pid_is_gone(registration.pid))
}

/// Whether no process has id `pid`. Ids that are not a single positive process id (0 and those that would
/// name process groups) prove nothing.
fn pid_is_gone(pid: u32) -> bool {
    match i32::try_from(pid) {
        Ok(pid) if pid > 0 => kill(Pid::from_raw(pid), None) == Err(Errno::ESRCH),
        _ => false,
    }
}

/// Removes a file; a file already gone is fine.
fn remove_file(path: &Path) -> Result<(), String> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(format!("cannot remove {}: {e}", path.display())),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::socket::socket_path_in;
    use nix::fcntl::{Flock, FlockArg};
    use opencode_pty_protocol::{PROTOCOL_VERSION, Registration};
    use std::fs::File;
    use std::os::unix::fs::symlink;
    use std::os::unix::net::UnixListener;
    use std::process::Command;
    use tempfile::TempDir;

    /// A moment at which every directory created by the test is stale.
    fn later() -> SystemTime {
        SystemTime::now() + STALE_AFTER + Duration::from_secs(60)
    }

    fn registration(pid: u32) -> String {
        let registration = Registration {
            instance_id: "0".repeat(32),
            pid,
            protocol: PROTOCOL_VERSION,
            features: Vec::new(),
            socket: "/nowhere.sock".into(),
            token: "1".repeat(32),
        };
        serde_json::to_string(&registration).unwrap()
    }

    /// A pid that no process has: a child that has been reaped.
    fn dead_pid() -> u32 {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    /// Creates `root/name` holding `files` (name, contents).
    fn make_dir(root: &Path, name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = root.join(name);
        fs::create_dir(&dir).unwrap();
        for (file, contents) in files {
            fs::write(dir.join(file), contents).unwrap();
        }
        dir
    }

    /// A root with the sweeping daemon's own directory in it.
    fn root_with_own() -> (TempDir, PathBuf) {
        let root = TempDir::new().unwrap();
        let own = make_dir(root.path(), "own", &[(LOCK_FILE, "")]);
        (root, own)
    }

    #[test]
    fn removes_dir_with_free_lock() {
        let (root, own) = root_with_own();
        let dead = make_dir(root.path(), "dead", &[(LOCK_FILE, ""), (REGISTRATION_FILE, "{}"), ("service.x.tmp", "")]);
        let report = sweep_siblings_at(root.path(), &own, later());
        assert_eq!(report.removed, vec![dead.clone()]);
        assert!(report.kept.is_empty() && report.errors.is_empty(), "{report:?}");
        assert!(!dead.exists());
    }

    #[test]
    fn removes_dir_holding_a_record_of_process_groups() {
        let (root, own) = root_with_own();
        let dead = make_dir(root.path(), "dead", &[(LOCK_FILE, ""), (GROUPS_FILE, "{}"), ("service.x.groups.tmp", "")]);
        let report = sweep_siblings_at(root.path(), &own, later());
        assert_eq!(report.removed, vec![dead.clone()], "{report:?}");
        assert!(!dead.exists());
    }

    #[test]
    fn removes_dir_whose_registered_pid_is_gone() {
        let (root, own) = root_with_own();
        let dead = make_dir(root.path(), "dead", &[(REGISTRATION_FILE, &registration(dead_pid()))]);
        let report = sweep_siblings_at(root.path(), &own, later());
        assert_eq!(report.removed, vec![dead.clone()], "{report:?}");
        assert!(!dead.exists());
    }

    #[test]
    fn removes_stale_socket_of_removed_dir() {
        let (root, own) = root_with_own();
        let dead = make_dir(root.path(), "dead", &[(LOCK_FILE, "")]);
        let sockets = root.path().join("sockets");
        fs::create_dir(&sockets).unwrap();
        let socket = socket_path_in(&sockets, &dead).unwrap();
        let mut registered = serde_json::from_str::<Registration>(&registration(dead_pid())).unwrap();
        registered.socket = socket.to_string_lossy().into_owned();
        fs::write(dead.join(REGISTRATION_FILE), serde_json::to_vec(&registered).unwrap()).unwrap();
        drop(UnixListener::bind(&socket).unwrap());
        assert!(socket.exists());
        let report = sweep_siblings_at(root.path(), &own, later());
        assert_eq!(report.removed, vec![dead], "{report:?}");
        assert!(fs::symlink_metadata(&socket).is_err());
    }

    #[test]
    fn keeps_dir_whose_lock_is_held() {
        let (root, own) = root_with_own();
        let alive = make_dir(root.path(), "alive", &[(LOCK_FILE, ""), (REGISTRATION_FILE, &registration(dead_pid()))]);
        let file = File::open(alive.join(LOCK_FILE)).unwrap();
        let held = Flock::lock(file, FlockArg::LockExclusive).unwrap();
        let report = sweep_siblings_at(root.path(), &own, later());
        assert_eq!(report.kept, vec![alive.clone()]);
        assert!(report.removed.is_empty());
        assert!(alive.join(LOCK_FILE).exists() && alive.join(REGISTRATION_FILE).exists());
        drop(held);
    }

    #[test]
    fn keeps_dirs_without_evidence_of_death() {
        let (root, own) = root_with_own();
        let kept = [
            make_dir(root.path(), "empty", &[]),
            make_dir(root.path(), "foreign", &[(LOCK_FILE, ""), ("notes.txt", "mine")]),
            make_dir(root.path(), "not-ours", &[(REGISTRATION_FILE, r#"{"not":"ours"}"#)]),
            make_dir(root.path(), "lone-temp", &[("service.important.tmp", "")]),
            make_dir(root.path(), "live-pid", &[(REGISTRATION_FILE, &registration(std::process::id()))]),
            make_dir(root.path(), "pid-zero", &[(REGISTRATION_FILE, &registration(0))]),
            make_dir(root.path(), "group-pid", &[(REGISTRATION_FILE, &registration(u32::MAX))]),
        ];
        let nested = make_dir(root.path(), "nested", &[(LOCK_FILE, "")]);
        fs::create_dir(nested.join("sub")).unwrap();
        let report = sweep_siblings_at(root.path(), &own, later());
        assert!(report.removed.is_empty(), "{report:?}");
        for dir in kept.iter().chain([&nested]) {
            assert!(report.kept.contains(dir), "{} in {report:?}", dir.display());
            assert!(dir.exists());
        }
        assert!(nested.join(LOCK_FILE).exists());
    }

    #[test]
    fn keeps_symlinks_and_regular_files() {
        let (root, own) = root_with_own();
        let elsewhere = TempDir::new().unwrap();
        let target = make_dir(elsewhere.path(), "dead", &[(LOCK_FILE, "")]);
        let link = root.path().join("link");
        symlink(&target, &link).unwrap();
        let file = root.path().join("file");
        fs::write(&file, "").unwrap();
        let mut report = sweep_siblings_at(root.path(), &own, later());
        report.kept.sort();
        assert_eq!(report.kept, vec![file, link.clone()]);
        assert!(report.removed.is_empty());
        assert!(target.join(LOCK_FILE).exists() && link.exists());
    }

    #[test]
    fn keeps_fresh_dirs() {
        let (root, own) = root_with_own();
        let fresh = make_dir(root.path(), "fresh", &[(LOCK_FILE, "")]);
        let report = sweep_siblings_at(root.path(), &own, SystemTime::now());
        assert_eq!(report.kept, vec![fresh.clone()]);
        assert!(fresh.join(LOCK_FILE).exists());
        assert!(sweep_siblings(root.path(), &own).removed.is_empty());
    }

    #[test]
    fn never_touches_own_dir() {
        let (root, own) = root_with_own();
        let report = sweep_siblings_at(root.path(), &own, later());
        assert_eq!(report, SweepReport::default());
        assert!(own.join(LOCK_FILE).exists());
        let report = sweep_siblings_at(root.path(), &root.path().join(".").join("own"), later());
        assert_eq!(report, SweepReport::default());
        assert!(own.join(LOCK_FILE).exists());
    }

    #[test]
    fn missing_root_is_reported_not_fatal() {
        let root = TempDir::new().unwrap();
        let missing = root.path().join("missing");
        let report = sweep_siblings_at(&missing, &missing.join("own"), later());
        assert!(report.removed.is_empty() && report.kept.is_empty());
        assert_eq!(report.errors.len(), 1);
    }
}

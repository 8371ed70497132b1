//! The runtime directory's service lock (`service.lock`): created private, locked exclusively, and checked to
//! be the file now at that path. A lock held by a live daemon (its registered socket answers) is refused at
//! once; any other holder (a dead daemon's guardian or a sibling's sweep, which hold it for milliseconds, or a
//! daemon still starting) is waited for, at most [`LOCK_WAIT`]. A lock file that is not a regular file (a
//! planted symbolic link, a FIFO) is refused with what was found.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use nix::unistd::geteuid;
use opencode_pty_protocol::LOCK_FILE;

use super::error::RuntimeError;
use super::files::{PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, check_private_dir, kind_of, read_registration, set_mode};

/// How many times taking the service lock starts over when the lock file it locked was removed meanwhile (by a
/// daemon finishing its cleanup, or by a sweep) and so no longer guards the directory.
pub(crate) const LOCK_ATTEMPTS: usize = 8;

/// How long a starting daemon waits for a service lock that no live daemon holds: a dead daemon's guardian
/// (X6) or a sibling's sweep (X7) holds it for the few milliseconds a read and a removal take, and a daemon
/// killed a moment ago may still be letting go. Far more than that, so a restart right after a kill succeeds;
/// short enough that a lock nobody gives back is reported soon.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// How often the lock is tried again while waiting for it.
const LOCK_RETRY: Duration = Duration::from_millis(5);

/// Whether to refuse at once a lock held by the daemon the registration names when its socket answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LiveHolder {
    /// A new daemon: a live registered daemon holds the lock, so another one already runs here.
    RefuseAtOnce,
    /// The runtime directory's own daemon taking its lock anew (the registration may still be its own).
    Wait,
}

/// Creates `dir` (0700) and takes its service lock, exclusively; waits for it (at most [`LOCK_WAIT`]) unless
/// `live` says to refuse a live daemon's lock at once. Starts over when the lock file was unlinked between
/// opening and locking it, since a lock on an unlinked file guards nothing.
pub(crate) fn lock_runtime_dir(dir: &Path, live: LiveHolder) -> Result<Flock<File>, RuntimeError> {
    lock_waiting(dir, live, || {
        tracing::warn!(dir = %dir.display(), bound = ?LOCK_WAIT,
            "the service lock is held, but no live daemon answers on the registered socket: \
             waiting for its holder (a dead daemon's guardian, a sweep or a starting daemon)");
    })
}

/// [`lock_runtime_dir`], calling `waiting` once when it starts to wait for the lock.
fn lock_waiting(dir: &Path, live: LiveHolder, waiting: impl FnOnce()) -> Result<Flock<File>, RuntimeError> {
    let mut waiting = Some(waiting);
    let path = dir.join(LOCK_FILE);
    let deadline = Instant::now() + LOCK_WAIT;
    let mut said = false;
    for _ in 0..LOCK_ATTEMPTS {
        fs::create_dir_all(dir).map_err(|e| RuntimeError::io("create runtime directory", dir, e))?;
        // Never follow a symbolic link planted where the runtime directory should be.
        check_private_dir(dir, geteuid().as_raw(), "runtime directory")?;
        set_mode(dir, PRIVATE_DIR_MODE, "set permissions of runtime directory")?;
        let mut file = match open_lock_file(&path)? {
            Some(file) => file,
            // The directory was removed since we created it: start over.
            None => continue,
        };
        let lock = loop {
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => break lock,
                Err((back, errno)) if errno == Errno::EWOULDBLOCK => {
                    if live == LiveHolder::RefuseAtOnce && registered_daemon_answers(dir) {
                        return Err(RuntimeError::Locked { dir: dir.to_owned() });
                    }
                    if Instant::now() >= deadline {
                        return Err(RuntimeError::Locked { dir: dir.to_owned() });
                    }
                    if let Some(waiting) = waiting.take() {
                        said = true;
                        waiting();
                    }
                    std::thread::sleep(LOCK_RETRY);
                    file = back;
                }
                Err((_, errno)) => return Err(RuntimeError::io("lock", &path, errno.into())),
            }
        };
        if still_linked(&lock, &path) {
            if said {
                tracing::warn!(dir = %dir.display(), "took the service lock after waiting for it");
            }
            return Ok(lock);
        }
    }
    Err(RuntimeError::io("lock", &path, io::Error::other("the lock file kept being removed while we locked it")))
}

/// Opens (creating it 0600) the lock file at `path`, never following a symbolic link; `None` when the
/// directory is gone. Refuses anything but a regular file, saying what it found (and where a link points).
fn open_lock_file(path: &Path) -> Result<Option<File>, RuntimeError> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(PRIVATE_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(match not_a_lock_file(path) {
                Some(reason) => RuntimeError::UnsafeLock { path: path.to_owned(), reason },
                None => RuntimeError::io("open service lock", path, e),
            });
        }
    };
    let meta = file.metadata().map_err(|e| RuntimeError::io("inspect", path, e))?;
    if !meta.is_file() {
        let reason = describe(&meta.file_type());
        return Err(RuntimeError::UnsafeLock { path: path.to_owned(), reason });
    }
    Ok(Some(file))
}

/// What is at `path` when it is not a regular file (a symbolic link and its target, a FIFO, ...).
fn not_a_lock_file(path: &Path) -> Option<String> {
    let meta = fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        let target = fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_else(|e| format!("? ({e})"));
        return Some(format!("a symbolic link to {target} was found there (never followed)"));
    }
    (!meta.is_file()).then(|| describe(&meta.file_type()))
}

/// Words for a file type that is not a regular file.
fn describe(kind: &fs::FileType) -> String {
    format!("{} was found there, not a regular file", kind_of(kind))
}

/// Whether the daemon that `dir`'s registration names listens on its socket: a live listener accepts the
/// connection (and sees it close at once, without a request); a dead daemon's socket refuses it.
pub(crate) fn registered_daemon_answers(dir: &Path) -> bool {
    read_registration(dir).is_ok_and(|registration| socket_answers(Path::new(&registration.socket)))
}

/// Whether a live listener is bound at `socket`.
pub(crate) fn socket_answers(socket: &Path) -> bool {
    UnixStream::connect(socket).is_ok()
}

/// Whether `path` still names the file `file` has open.
pub(crate) fn still_linked(file: &File, path: &Path) -> bool {
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => (open.dev(), open.ino()) == (named.dev(), named.ino()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::runtime::Runtime;
    use tempfile::TempDir;

    /// The lock of `dir` held through another open file description, as another process would hold it.
    fn hold(dir: &Path) -> Flock<File> {
        fs::create_dir_all(dir).unwrap();
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(dir.join(LOCK_FILE));
        Flock::lock(file.unwrap(), FlockArg::LockExclusiveNonblock).unwrap()
    }

    #[test]
    fn a_lock_held_by_no_live_daemon_is_waited_for() {
        let root = TempDir::new().unwrap();
        let dir = root.path().join("d");
        let held = hold(&dir);
        let (waits, waiting) = std::sync::mpsc::channel();
        let releaser = std::thread::spawn(move || {
            // Once the locker says it waits, the holder lets go.
            waiting.recv().unwrap();
            drop(held);
        });
        let since = Instant::now();
        let lock = lock_waiting(&dir, LiveHolder::RefuseAtOnce, move || waits.send(()).unwrap())
            .expect("taken once the holder lets go");
        assert!(since.elapsed() < LOCK_WAIT);
        assert!(still_linked(&lock, &dir.join(LOCK_FILE)));
        releaser.join().unwrap();
    }

    #[test]
    fn a_lock_held_longer_than_the_bound_is_refused_with_the_usual_message() {
        let root = TempDir::new().unwrap();
        let dir = root.path().join("d");
        let _held = hold(&dir);
        let since = Instant::now();
        let error = lock_runtime_dir(&dir, LiveHolder::RefuseAtOnce).unwrap_err();
        assert!(since.elapsed() >= LOCK_WAIT, "it waited the whole bound");
        assert_eq!(error.to_string(), format!("another opencode-pty daemon already runs in {}", dir.display()));
    }

    #[test]
    fn a_live_daemons_lock_is_refused_at_once() {
        let root = TempDir::new().unwrap();
        let sockets = root.path().join("sockets");
        fs::create_dir(&sockets).unwrap();
        let first = Runtime::bind(root.path(), "live", &sockets).unwrap();
        let since = Instant::now();
        let error = lock_runtime_dir(first.dir(), LiveHolder::RefuseAtOnce).unwrap_err();
        assert!(matches!(error, RuntimeError::Locked { .. }), "{error}");
        assert!(since.elapsed() < LOCK_WAIT, "no wait for a live daemon: {:?}", since.elapsed());
        first.cleanup();
    }

    #[test]
    fn a_planted_lock_symlink_or_fifo_is_named() {
        let root = TempDir::new().unwrap();
        let dir = root.path().join("d");
        fs::create_dir(&dir).unwrap();
        let elsewhere = root.path().join("elsewhere");
        fs::write(&elsewhere, "").unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.join(LOCK_FILE)).unwrap();
        let error = lock_runtime_dir(&dir, LiveHolder::RefuseAtOnce).unwrap_err().to_string();
        let expected = format!(
            "refusing service lock {}: a symbolic link to {} was found there (never followed)",
            dir.join(LOCK_FILE).display(),
            elsewhere.display()
        );
        assert_eq!(error, expected);
        fs::remove_file(dir.join(LOCK_FILE)).unwrap();
        nix::unistd::mkfifo(&dir.join(LOCK_FILE), nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let error = lock_runtime_dir(&dir, LiveHolder::RefuseAtOnce).unwrap_err().to_string();
        assert!(error.ends_with("a FIFO was found there, not a regular file"), "{error}");
    }
}

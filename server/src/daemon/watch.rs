//! The runtime directory's watch: every [`RUNTIME_CHECK_INTERVAL`] a thread checks that the runtime directory,
//! its lock file and the registration are still this daemon's (`Runtime::check`: same device and inode, same
//! instance), and that the record of process groups is there. What was removed or replaced (`rm -r` of the
//! directory while the daemon runs) is recreated: the directory, the lock taken anew on a new file, the
//! registration and the record, so that the guardian, the next daemon and clients find them again. When
//! another daemon holds the new lock (it started in the directory meanwhile), this daemon stops in order.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};

use super::recovery::record::GroupRecord;
use super::runtime::{Checked, Runtime};
use super::serving::state::DaemonState;
use crate::process::thread::join_reporting;

/// How often the runtime directory is checked. A removed directory (and with it the record the guardian
/// reads) is missing at most this long; each check is a few `stat` calls and a read of the registration.
pub const RUNTIME_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// The watch thread, stopped by [`RuntimeWatch::stop`].
#[derive(Debug)]
pub(crate) struct RuntimeWatch {
    /// Dropped to wake the thread and end it.
    stop: Sender<()>,
    thread: JoinHandle<()>,
}

impl RuntimeWatch {
    /// Starts watching `runtime` (and `record`, kept in it); asks `state` to stop when the directory is lost.
    pub(crate) fn start(
        runtime: Arc<Mutex<Runtime>>,
        record: Option<Arc<GroupRecord>>,
        state: Arc<DaemonState>,
    ) -> io::Result<RuntimeWatch> {
        let (stop, stopped) = bounded::<()>(0);
        let thread = std::thread::Builder::new()
            .name("opencode-pty-watch".into())
            .spawn(move || watch(&runtime, record.as_deref(), &state, &stopped))?;
        Ok(RuntimeWatch { stop, thread })
    }

    /// Ends the watch (at once, or once a check under way is done) and joins it.
    pub(crate) fn stop(self) {
        drop(self.stop);
        join_reporting(self.thread);
    }
}

/// Locks the runtime, whatever a panicking holder left.
pub(crate) fn lock(runtime: &Mutex<Runtime>) -> MutexGuard<'_, Runtime> {
    runtime.lock().unwrap_or_else(|e| e.into_inner())
}

/// The watch thread's loop.
fn watch(runtime: &Mutex<Runtime>, record: Option<&GroupRecord>, state: &DaemonState, stop: &Receiver<()>) {
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(RUNTIME_CHECK_INTERVAL) {
        let checked = lock(runtime).check();
        match checked {
            Checked::Intact => {
                tracing::debug!("the runtime directory is intact");
                // Its file may be missing on its own (removed by hand, or never written on a full disk).
                if let Some(record) = record
                    && !record.path().exists()
                {
                    rewrite(record);
                }
            }
            Checked::Repaired(what) => {
                let dir = lock(runtime).dir().display().to_string();
                tracing::warn!(%dir, what, "the daemon's {what} was removed or replaced; recreated what it owns");
                if let Some(record) = record {
                    rewrite(record);
                }
            }
            Checked::Lost(error) => {
                tracing::error!(%error, "the runtime directory was removed and another daemon took it; stopping");
                state.stop();
                return;
            }
            Checked::Failed(error) => {
                super::log_limit::limited_warn!(super::log_limit::RECORD_WRITES, %error,
                    "cannot recreate the runtime directory's files; trying again");
            }
        }
    }
}

/// Writes the record again, logging a failure (creates are refused meanwhile, as the record cannot be written).
fn rewrite(record: &GroupRecord) {
    if let Err(error) = record.rewrite() {
        super::log_limit::limited_warn!(super::log_limit::RECORD_WRITES, %error,
            "cannot write the record of process groups");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::serving::connection::FIRST_REQUEST_TIMEOUT;
    use crate::service::ProcessService;
    use crate::terminal::TerminalConfig;
    use nix::fcntl::{Flock, FlockArg};
    use opencode_pty_protocol::{HANDOFF_TTL, LOCK_FILE, REGISTRATION_FILE};
    use std::fs;
    use std::path::Path;
    use std::time::Instant;

    /// Polls files (state no event tells) until `done`, for at most 20 s.
    fn until(what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(Instant::now() < deadline, "{what}: not within 20 s");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A bound runtime in `root`, its record and a daemon state, watched.
    fn watched(root: &Path) -> (Arc<Mutex<Runtime>>, Arc<GroupRecord>, Arc<DaemonState>, RuntimeWatch) {
        let tmp = root.join("tmp");
        fs::create_dir(&tmp).unwrap();
        let runtime = Runtime::bind(root, "w", &tmp).unwrap();
        let registration = runtime.registration().clone();
        let record = Arc::new(GroupRecord::new(runtime.dir(), &registration.instance_id).unwrap());
        record.rewrite().unwrap();
        let service = ProcessService::new(TerminalConfig::default());
        let state = DaemonState::new(service, registration, HANDOFF_TTL, FIRST_REQUEST_TIMEOUT);
        let runtime = Arc::new(Mutex::new(runtime));
        let watch = RuntimeWatch::start(runtime.clone(), Some(record.clone()), state.clone()).unwrap();
        (runtime, record, state, watch)
    }

    fn give_back(runtime: Arc<Mutex<Runtime>>) {
        let runtime = Arc::try_unwrap(runtime).expect("the watch was joined");
        runtime.into_inner().unwrap().cleanup();
    }

    #[test]
    fn a_removed_directory_comes_back_with_its_registration_and_record() {
        let root = tempfile::TempDir::new().unwrap();
        let (runtime, record, state, watch) = watched(root.path());
        let dir = lock(&runtime).dir().to_owned();
        fs::remove_dir_all(&dir).unwrap();
        until("the registration and the record back", || {
            dir.join(REGISTRATION_FILE).exists() && record.path().exists() && dir.join(LOCK_FILE).exists()
        });
        // The record alone removed comes back too.
        fs::remove_file(record.path()).unwrap();
        until("the record back", || record.path().exists());
        assert!(!state.is_stopping());
        watch.stop();
        record.remove();
        give_back(runtime);
        assert!(!dir.exists());
    }

    #[test]
    fn a_directory_another_daemon_took_stops_this_one() {
        let root = tempfile::TempDir::new().unwrap();
        let (runtime, _record, state, watch) = watched(root.path());
        let dir = lock(&runtime).dir().to_owned();
        let _other = {
            let runtime = lock(&runtime);
            fs::remove_dir_all(&dir).unwrap();
            fs::create_dir(&dir).unwrap();
            let file = fs::File::create(dir.join(LOCK_FILE)).unwrap();
            drop(runtime);
            Flock::lock(file, FlockArg::LockExclusiveNonblock).unwrap()
        };
        until("the daemon to be told to stop", || state.is_stopping());
        watch.stop();
        give_back(runtime);
        assert!(dir.join(LOCK_FILE).exists(), "the other daemon's lock file is left alone");
    }
}

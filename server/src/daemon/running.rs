//! A daemon that serves: its parts (the shared state, the runtime directory, the record of process groups and
//! the guardian, the accept loop, the runtime watch, the sweep), the main thread's loop, which waits for the
//! stop and carries out the in-place upgrades the owner asks for (`daemon/upgrading`), and the orderly stop,
//! with a watchdog so a stuck child cannot keep the daemon alive. A daemon gets here from `run` (started) or
//! from `resume` (after an upgrade).

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use opencode_pty_protocol::REGISTRATION_FILE;

use super::recovery::guardian::Guardian;
use super::recovery::record::GroupRecord;
use super::recovery::sweep::SweepReport;
use super::run::{CLEANUP_WATCHDOG, CONNECTION_DRAIN, DaemonError, DaemonOptions};
use super::runtime::Runtime;
use super::serving::server::accept_loop;
use super::serving::state::{DaemonState, Wakeup};
use super::watch::RuntimeWatch;
use crate::process::session::HANGUP_GRACE;
use crate::process::thread::{Parked, join_reporting};

/// The accept loop's thread and what stops it.
#[derive(Debug)]
pub(crate) struct Acceptor {
    thread: JoinHandle<Option<Option<UnixListener>>>,
    /// Dropping it wakes the accept loop to stop.
    stop: OwnedFd,
}

/// The accept loop's thread and its stop pipe, made and waiting for the listener ([`Acceptor::prepare`]).
#[derive(Debug)]
pub(crate) struct PreparedAcceptor {
    thread: Parked<Option<UnixListener>>,
    stop_read: OwnedFd,
    stop: OwnedFd,
}

impl Acceptor {
    /// Starts accepting on `listener` for `state` (connection threads linger `linger` between connections).
    pub(crate) fn start(
        state: &Arc<DaemonState>,
        listener: UnixListener,
        linger: std::time::Duration,
    ) -> std::io::Result<Acceptor> {
        Ok(Acceptor::prepare()?.start(state, listener, linger))
    }

    /// Makes what the accept loop needs (its thread, its stop pipe), accepting nothing yet: every step that can
    /// fail (a resuming image does this before it commits to the upgrade's state).
    pub(crate) fn prepare() -> std::io::Result<PreparedAcceptor> {
        let (stop_read, stop) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let thread = Parked::spawn("opencode-pty-accept")?;
        Ok(PreparedAcceptor { thread, stop_read, stop })
    }

    /// Stops accepting and returns the listener, with the connections waiting in its backlog (`None` when it
    /// failed and was closed).
    pub(crate) fn stop(self) -> Option<UnixListener> {
        drop(self.stop);
        join_reporting(self.thread).flatten().flatten()
    }
}

impl PreparedAcceptor {
    /// Accepts on `listener` for `state` from now on.
    pub(crate) fn start(
        self,
        state: &Arc<DaemonState>,
        listener: UnixListener,
        linger: std::time::Duration,
    ) -> Acceptor {
        let PreparedAcceptor { thread, stop_read, stop } = self;
        let state = state.clone();
        let thread = thread.run(move || accept_loop(state, listener, stop_read, linger));
        Acceptor { thread, stop }
    }
}

/// A serving daemon's parts.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) options: DaemonOptions,
    pub(crate) state: Arc<DaemonState>,
    pub(crate) runtime: Arc<Mutex<Runtime>>,
    pub(crate) record: Option<Arc<GroupRecord>>,
    pub(crate) guardian: Option<Guardian>,
    /// Absent while an upgrade has stopped it.
    pub(crate) acceptor: Option<Acceptor>,
    /// Absent while an upgrade has stopped it, or when it could not start.
    pub(crate) watch: Option<RuntimeWatch>,
    /// The sweep of sibling runtime directories a started daemon runs once (a resumed one does not).
    pub(crate) sweeper: Option<JoinHandle<SweepReport>>,
}

impl Running {
    /// Starts the runtime directory's watch (a failure is only logged: the daemon runs unwatched).
    pub(crate) fn watch_runtime(&mut self) {
        self.watch = RuntimeWatch::start(self.runtime.clone(), self.record.clone(), self.state.clone())
            .inspect_err(|error| tracing::warn!(%error, "cannot watch the runtime directory"))
            .ok();
    }

    /// Serves until the daemon must stop, carrying out each upgrade the owner asks for (one that succeeds
    /// never returns: the new image serves on), then stops in order. `Ok` means an orderly stop.
    pub(crate) fn serve(mut self) -> Result<(), DaemonError> {
        loop {
            match self.state.wait_for_event() {
                Wakeup::Stop => break,
                Wakeup::Upgrade(pending) => super::upgrading::handover::carry_out(&mut self, pending),
            }
        }
        self.stop()
    }

    /// The orderly stop: every process stopped and reaped, the connections closed, the record and the guardian
    /// given back, the runtime directory cleaned up; a watchdog exits with status 1 if that takes too long.
    fn stop(self) -> Result<(), DaemonError> {
        let Running { options, state, runtime, record, guardian, acceptor, watch, sweeper } = self;
        let (done, finished) = crossbeam_channel::bounded::<()>(1);
        let (dir, instance) = {
            let runtime = super::watch::lock(&runtime);
            (runtime.dir().to_path_buf(), runtime.registration().instance_id.clone())
        };
        // A longer hangup grace than the default (a test's) lengthens the stop by as much.
        let bound = CLEANUP_WATCHDOG + options.config.hangup_grace.saturating_sub(HANGUP_GRACE);
        let watchdog = std::thread::Builder::new().name("opencode-pty-watchdog".into()).spawn(move || {
            if finished.recv_timeout(bound).is_err() {
                tracing::error!(?bound, "stopping took too long; exiting anyway");
                remove_registration_if_ours(&dir, &instance);
                std::process::exit(1);
            }
        });
        if let Err(error) = watchdog {
            tracing::warn!(%error, "cannot start the stop's watchdog; stopping without its bound");
        }
        if !options.stop_stall.is_zero() {
            std::thread::sleep(options.stop_stall);
        }
        // Under the watchdog: a check under way may wait for a lock (at most `LOCK_WAIT`).
        if let Some(watch) = watch {
            watch.stop();
        }
        // The watch, the runtime's only other holder, has been joined.
        let runtime = Arc::try_unwrap(runtime).map(|runtime| runtime.into_inner().unwrap_or_else(|e| e.into_inner()));
        // The listener is closed at once: nobody connects to a stopping daemon.
        drop(acceptor.and_then(Acceptor::stop));
        state.close_connections();
        if let Some(record) = &record {
            // Each reap would rewrite the record: it is removed once, after every child is reaped.
            record.stopping();
        }
        state.service.shutdown();
        state.wait_connections(CONNECTION_DRAIN);
        if let Some(report) = sweeper.and_then(join_reporting) {
            for error in report.errors {
                tracing::warn!(%error, "sweeping stale runtime directories");
            }
        }
        super::run::unprotect(record.as_deref(), guardian);
        super::log_limit::report_suppressed();
        match runtime {
            Ok(runtime) => runtime.cleanup(),
            Err(_) => {
                tracing::error!("the runtime directory is still shared at the stop; its files are left to a sweep")
            }
        }
        let _ = done.send(());
        if state.never_claimed() {
            return Err(DaemonError::NeverClaimed);
        }
        Ok(())
    }
}

/// Removes `dir`'s registration if it still names `instance` (the watchdog's last act).
fn remove_registration_if_ours(dir: &Path, instance: &str) {
    let path = dir.join(REGISTRATION_FILE);
    let ours = std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<opencode_pty_protocol::Registration>(&bytes).ok())
        .is_some_and(|registration| registration.instance_id == instance);
    if ours {
        let _ = std::fs::remove_file(path);
    }
}

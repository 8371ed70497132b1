//! The `daemon` command from start to exit: bind the runtime directory, publish the registration, serve
//! until told to stop (shutdown, a signal, owner loss or an ownership deadline), then stop every process and
//! clean up, with a watchdog so a stuck child cannot keep the daemon alive.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use opencode_pty_protocol::{OWNER_DEADLINE, REGISTRATION_FILE};

use super::recovery::guardian::Guardian;
use super::recovery::record::{GROUPS_FILE, GroupRecord};
use super::recovery::sweep::SweepReport;
use super::runtime::{Runtime, RuntimeError};
use super::serving::server::accept_loop;
use super::serving::state::DaemonState;
use super::watch::RuntimeWatch;
use crate::process::session::HANGUP_GRACE;
use crate::process::thread::join_reporting;
use crate::service::{ProcessHook, ProcessService};
use crate::terminal::{SHELL_DIR, TerminalConfig};

/// How long the orderly stop may take before the watchdog removes the registration and exits with status 1.
pub(crate) const CLEANUP_WATCHDOG: Duration = Duration::from_secs(5);

/// How long the stop waits for connection handlers after closing their sockets.
pub(crate) const CONNECTION_DRAIN: Duration = Duration::from_secs(2);

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The runtime directory, lock, socket or registration.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A thread, pipe or signal mask the daemon needs.
    #[error("cannot start the daemon: {0}")]
    Start(String),
    /// Nobody claimed the daemon in time, so it stopped (in order, with nothing left behind).
    #[error(
        "no owner claimed the daemon within {} s, so it stopped: a daemon is started by the program that owns \
         it (OpenCode, or `opencode-pty play`), which claims it at once",
        OWNER_DEADLINE.as_secs()
    )]
    NeverClaimed,
}

/// Where and how the daemon runs.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// The parent of runtime directories (`--runtime-dir`).
    pub root: PathBuf,
    /// The runtime directory's name (`--name`).
    pub name: String,
    /// Buffer sizes of each terminal.
    pub config: TerminalConfig,
    /// How long a handoff ticket lasts: `HANDOFF_TTL`, except in tests of its expiry.
    pub handoff_ttl: Duration,
    /// How long a new connection may take to send its first request: `FIRST_REQUEST_TIMEOUT`, except in tests of
    /// what that deadline must not cut.
    pub first_request_timeout: Duration,
    /// A pause at the start of the orderly stop, zero except in tests of the watchdog (a stop that hangs).
    pub stop_stall: Duration,
    /// How long a finished connection thread waits to accept the next connection: `IDLE_WORKER_LINGER`, except in
    /// tests of what it must not cut.
    pub worker_linger: Duration,
    /// Where the usual socket directory `opencode-pty-<euid>` is made without `$XDG_RUNTIME_DIR`:
    /// `DEFAULT_SOCKET_TMP` (`/tmp`), except in tests of a squatted one.
    pub socket_tmp: PathBuf,
}

/// The threads and handles of a started daemon.
struct Started {
    state: Arc<DaemonState>,
    acceptor: JoinHandle<()>,
    sweeper: JoinHandle<SweepReport>,
    /// Dropping it wakes the accept loop to stop.
    stop_accepting: OwnedFd,
}

/// Runs the daemon until it stops; `Ok` means an orderly stop (exit status 0).
pub fn run(options: DaemonOptions) -> Result<(), DaemonError> {
    super::signals::block().map_err(|e| DaemonError::Start(format!("blocking SIGTERM, SIGINT and SIGHUP: {e}")))?;
    crate::process::sys::default_sigchld().map_err(|e| DaemonError::Start(format!("resetting SIGCHLD: {e}")))?;
    raise_descriptor_limit();
    let mut runtime = Runtime::bind(&options.root, &options.name, &options.socket_tmp)?;
    let (record, guardian) = protect(&runtime);
    let hook = record.clone().map(|record| record as Arc<dyn ProcessHook>);
    let started = match start(&options, &mut runtime, hook) {
        Ok(started) => started,
        Err(error) => {
            // Nothing is served: leave no registration or socket behind for clients to find.
            unprotect(record.as_deref(), guardian);
            runtime.cleanup();
            return Err(error);
        }
    };
    // Said at once, so that someone who started it by hand does not wait in silence for the deadline's message.
    tracing::info!(
        pid = std::process::id(),
        dir = %runtime.dir().display(),
        "the daemon is ready and waits for an owner: the program that started it must claim it with `own` within {} s \
         (OpenCode and `opencode-pty play` do at once), or it stops",
        OWNER_DEADLINE.as_secs()
    );
    let Started { state, acceptor, sweeper, stop_accepting } = started;
    let runtime = Arc::new(Mutex::new(runtime));
    let watch = RuntimeWatch::start(runtime.clone(), record.clone(), state.clone())
        .inspect_err(|error| tracing::warn!(%error, "cannot watch the runtime directory"))
        .ok();

    state.wait_for_stop();

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
    // The accept loop owns the listener and closes it as it returns: nobody connects to a stopping daemon.
    drop(stop_accepting);
    join_reporting(acceptor);
    state.close_connections();
    if let Some(record) = &record {
        // Each reap would rewrite the record: it is removed once, after every child is reaped.
        record.stopping();
    }
    state.service.shutdown();
    state.wait_connections(CONNECTION_DRAIN);
    if let Some(report) = join_reporting(sweeper) {
        for error in report.errors {
            tracing::warn!(%error, "sweeping stale runtime directories");
        }
    }
    unprotect(record.as_deref(), guardian);
    super::log_limit::report_suppressed();
    match runtime {
        Ok(runtime) => runtime.cleanup(),
        Err(_) => tracing::error!("the runtime directory is still shared at the stop; its files are left to a sweep"),
    }
    let _ = done.send(());
    if state.never_claimed() {
        return Err(DaemonError::NeverClaimed);
    }
    Ok(())
}

/// Ends what a dead predecessor in this runtime directory left running (its record: we hold the lock it held
/// for its whole life, so it is gone), then starts this daemon's record of process groups and its guardian.
/// Without `/proc` there is no record, and a guardian that cannot start is only logged: the daemon runs without
/// that protection. A record that cannot be written yet is logged, and creates are refused until it can be
/// (the runtime watch writes it again).
fn protect(runtime: &Runtime) -> (Option<Arc<GroupRecord>>, Option<Guardian>) {
    let path = runtime.dir().join(GROUPS_FILE);
    match super::recovery::leftovers::end_predecessor(&path) {
        Ok(Some(ended)) => tracing::warn!(
            signalled = ended.signalled,
            recycled = ended.recycled,
            members = ended.members,
            spared = ended.spared,
            "ended the process groups a dead daemon left in this runtime directory"
        ),
        Ok(None) => {}
        Err(error) => tracing::warn!(%error, "cannot end what a dead daemon left in this runtime directory"),
    }
    let instance = &runtime.registration().instance_id;
    let record = match GroupRecord::new(runtime.dir(), instance) {
        Ok(record) => Arc::new(record),
        Err(error) => {
            tracing::warn!(%error, "no record of process groups: they would outlive a daemon that dies");
            // The predecessor's groups were ended: its record must not be acted on again.
            let _ = std::fs::remove_file(&path);
            return (None, None);
        }
    };
    if let Err(error) = record.rewrite() {
        // Creates are refused while it cannot be written; the watch writes it again once it can.
        tracing::warn!(%error, "cannot write the record of process groups; no process can be created until it can");
        let _ = std::fs::remove_file(&path);
    }
    let guardian = Guardian::start(record.path(), instance)
        .inspect_err(|error| {
            tracing::warn!(%error, "no guardian: only the next daemon or a sweep would end what a dead daemon left")
        })
        .ok();
    (Some(record), guardian)
}

/// After every child is reaped: removes the record, then lets the guardian see the daemon leave and reaps it.
fn unprotect(record: Option<&GroupRecord>, guardian: Option<Guardian>) {
    if let Some(record) = record {
        record.remove();
    }
    if let Some(guardian) = guardian {
        guardian.stop();
    }
}

/// Starts the sweep, the signal thread and the accept loop; the service tells `hook` of its children.
fn start(
    options: &DaemonOptions,
    runtime: &mut Runtime,
    hook: Option<Arc<dyn ProcessHook>>,
) -> Result<Started, DaemonError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| DaemonError::Start(format!("{what}: {e}"));
    let (root, own_dir) = (options.root.clone(), runtime.dir().to_path_buf());
    let protected = own_dir.clone();
    let sweeper = std::thread::Builder::new()
        .name("opencode-pty-sweep".into())
        .spawn(move || super::recovery::sweep::sweep_siblings(&root, &own_dir))
        .map_err(|e| fail("starting the sweep", &e))?;
    // Shell integration scripts live in the runtime directory, and go with it.
    let config = TerminalConfig { shell_dir: Some(runtime.dir().join(SHELL_DIR)), ..options.config.clone() };
    let service = match hook {
        Some(hook) => ProcessService::with_hook(config, hook),
        None => ProcessService::new(config),
    }
    .protecting(protected);
    let state =
        DaemonState::new(service, runtime.registration().clone(), options.handoff_ttl, options.first_request_timeout);
    super::signals::spawn_handler(state.clone()).map_err(|e| fail("starting the signal thread", &e))?;
    let listener = runtime.take_listener().ok_or_else(|| fail("serving the socket", &"it was already taken"))?;
    let (stop_read, stop_accepting) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| fail("creating a pipe", &e))?;
    let worker_linger = options.worker_linger;
    let accept_state = state.clone();
    let acceptor = std::thread::Builder::new()
        .name("opencode-pty-accept".into())
        .spawn(move || accept_loop(accept_state, listener, stop_read, worker_linger))
        .map_err(|e| fail("starting the accept thread", &e))?;
    Ok(Started { state, acceptor, sweeper, stop_accepting })
}

/// Raises the soft limit on open descriptors to the hard limit: every terminal and connection needs some.
fn raise_descriptor_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
        && let Err(error) = setrlimit(Resource::RLIMIT_NOFILE, hard, hard)
    {
        tracing::warn!(soft, hard, %error, "cannot raise the open-file limit");
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

//! The `daemon` command's start: bind the runtime directory, publish the registration, end what a dead
//! predecessor left and start the record of process groups and the guardian, start the service, the signal
//! thread, the sweep and the accept loop; then serve until told to stop (`running.rs`: shutdown, a signal,
//! owner loss or an ownership deadline; and the in-place upgrades the owner asks for).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use opencode_pty_protocol::OWNER_DEADLINE;

use super::recovery::guardian::Guardian;
use super::recovery::record::{GROUPS_FILE, GroupRecord};
use super::recovery::sweep::SweepReport;
use super::running::{Acceptor, Running};
use super::runtime::{Runtime, RuntimeError};
use super::serving::state::DaemonState;
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
    /// Whether the daemon sends itself SIGTERM just before an upgrade's `execve` (once it decided to go on) and
    /// waits until its signal thread took it: false except in tests of a signal in that window.
    pub signal_at_exec: bool,
    /// How long a finished connection thread waits to accept the next connection: `IDLE_WORKER_LINGER`, except in
    /// tests of what it must not cut.
    pub worker_linger: Duration,
    /// Where the usual socket directory `opencode-pty-<euid>` is made without `$XDG_RUNTIME_DIR`:
    /// `DEFAULT_SOCKET_TMP` (`/tmp`), except in tests of a squatted one.
    pub socket_tmp: PathBuf,
}

/// Runs the daemon until it stops; `Ok` means an orderly stop (exit status 0).
pub fn run(options: DaemonOptions) -> Result<(), DaemonError> {
    prepare_process()?;
    let mut runtime = Runtime::bind(&options.root, &options.name, &options.socket_tmp)?;
    let (record, guardian) = protect(&runtime);
    let hook = record.clone().map(|record| record as Arc<dyn ProcessHook>);
    let (state, sweeper, acceptor) = match start(&options, &mut runtime, hook) {
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
    let mut running = Running {
        options,
        state,
        runtime: Arc::new(Mutex::new(runtime)),
        record,
        guardian,
        acceptor: Some(acceptor),
        watch: None,
        sweeper: Some(sweeper),
    };
    running.watch_runtime();
    running.serve()
}

/// What every daemon process sets up first, started or resumed after an upgrade: SIGTERM, SIGINT and SIGHUP
/// blocked (taken by the signal thread), SIGCHLD's default disposition, the descriptor limit raised.
pub(crate) fn prepare_process() -> Result<(), DaemonError> {
    super::signals::block().map_err(|e| DaemonError::Start(format!("blocking SIGTERM, SIGINT and SIGHUP: {e}")))?;
    crate::process::sys::default_sigchld().map_err(|e| DaemonError::Start(format!("resetting SIGCHLD: {e}")))?;
    raise_descriptor_limit();
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
pub(crate) fn unprotect(record: Option<&GroupRecord>, guardian: Option<Guardian>) {
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
) -> Result<(Arc<DaemonState>, JoinHandle<SweepReport>, Acceptor), DaemonError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| DaemonError::Start(format!("{what}: {e}"));
    let (root, own_dir) = (options.root.clone(), runtime.dir().to_path_buf());
    let protected = own_dir.clone();
    let sweeper = std::thread::Builder::new()
        .name("opencode-pty-sweep".into())
        .spawn(move || super::recovery::sweep::sweep_siblings(&root, &own_dir))
        .map_err(|e| fail("starting the sweep", &e))?;
    let service = service(options, runtime, hook).protecting(protected);
    let state =
        DaemonState::new(service, runtime.registration().clone(), options.handoff_ttl, options.first_request_timeout);
    super::signals::spawn_handler(state.clone()).map_err(|e| fail("starting the signal thread", &e))?;
    let listener = runtime.take_listener().ok_or_else(|| fail("serving the socket", &"it was already taken"))?;
    let acceptor =
        Acceptor::start(&state, listener, options.worker_linger).map_err(|e| fail("starting the accept thread", &e))?;
    Ok((state, sweeper, acceptor))
}

/// The process service of a daemon in `runtime` (not yet protecting its directory from `create_pipe`'s output
/// paths), telling `hook` of its children.
pub(crate) fn service(
    options: &DaemonOptions,
    runtime: &Runtime,
    hook: Option<Arc<dyn ProcessHook>>,
) -> ProcessService {
    // Shell integration scripts live in the runtime directory, and go with it.
    let config = TerminalConfig { shell_dir: Some(runtime.dir().join(SHELL_DIR)), ..options.config.clone() };
    match hook {
        Some(hook) => ProcessService::with_hook(config, hook),
        None => ProcessService::new(config),
    }
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

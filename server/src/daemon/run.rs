//! The `daemon` command from start to exit: bind the runtime directory, publish the registration, serve
//! until told to stop (shutdown, a signal, owner loss or an ownership deadline), then stop every process and
//! clean up, with a watchdog so a stuck child cannot keep the daemon alive.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::runtime::{REGISTRATION_FILE, Runtime, RuntimeError};
use super::server::{Shared, accept_loop};
use crate::service::TerminalService;
use crate::terminal::TerminalConfig;

/// How long the orderly stop may take before the watchdog removes the registration and exits with status 1.
pub const CLEANUP_WATCHDOG: Duration = Duration::from_secs(5);

/// How long the stop waits for connection handlers after closing their sockets.
pub const CONNECTION_DRAIN: Duration = Duration::from_secs(2);

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The runtime directory, lock, socket or registration.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A thread, pipe or signal mask the daemon needs.
    #[error("cannot start the daemon: {0}")]
    Start(String),
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
}

/// Runs the daemon until it stops; `Ok` means an orderly stop (exit status 0).
pub fn run(options: DaemonOptions) -> Result<(), DaemonError> {
    let start = |what: &str, e: &dyn std::fmt::Display| DaemonError::Start(format!("{what}: {e}"));
    super::signals::block().map_err(|e| start("blocking SIGTERM and SIGINT", &e))?;
    let runtime = Runtime::bind(&options.root, &options.name)?;
    let root = options.root.clone();
    let own_dir = runtime.dir().to_path_buf();
    let sweeper = std::thread::Builder::new()
        .name("opencode-pty-sweep".into())
        .spawn(move || super::sweep::sweep_siblings(&root, &own_dir))
        .map_err(|e| start("starting the sweep", &e))?;
    let shared = Shared::new(TerminalService::new(options.config), runtime.registration().clone(), options.handoff_ttl);
    super::signals::spawn_handler(shared.clone()).map_err(|e| start("starting the signal thread", &e))?;
    let listener = runtime.listener().try_clone().map_err(|e| start("duplicating the socket", &e))?;
    let (stop_read, stop_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| start("creating a pipe", &e))?;
    let accept_shared = shared.clone();
    let acceptor = std::thread::Builder::new()
        .name("opencode-pty-accept".into())
        .spawn(move || accept_loop(accept_shared, listener, stop_read))
        .map_err(|e| start("starting the accept thread", &e))?;

    shared.wait_for_stop();

    let (done, finished) = crossbeam_channel::bounded::<()>(1);
    let dir = runtime.dir().to_path_buf();
    let instance = runtime.registration().instance_id.clone();
    let _ = std::thread::Builder::new().name("opencode-pty-watchdog".into()).spawn(move || {
        if finished.recv_timeout(CLEANUP_WATCHDOG).is_err() {
            eprintln!("opencode-pty: stopping took over {CLEANUP_WATCHDOG:?}; exiting anyway");
            remove_registration_if_ours(&dir, &instance);
            std::process::exit(1);
        }
    });
    drop(stop_write);
    let _ = acceptor.join();
    shared.close_connections();
    shared.service.shutdown();
    shared.wait_connections(CONNECTION_DRAIN);
    let _ = sweeper.join();
    runtime.cleanup();
    let _ = done.send(());
    Ok(())
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

//! SIGTERM, SIGINT and SIGHUP as an orderly shutdown: the daemon blocks them in every thread (the mask is
//! inherited by threads started later, so this runs first) and one thread takes them with `sigwait`. (SIGHUP:
//! a daemon started from a terminal that closes stops cleanly, instead of dying with its children left.) Children start with
//! an empty mask and default dispositions (see `terminal/spawn.rs`), so signals still reach them normally.

use std::sync::Arc;

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

use super::serving::state::DaemonState;

/// The signals handled as a shutdown request.
pub(crate) fn termination_signals() -> SigSet {
    let mut set = SigSet::empty();
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGINT);
    set.add(Signal::SIGHUP);
    set
}

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and every thread it starts afterwards.
pub(crate) fn block() -> Result<(), nix::errno::Errno> {
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&termination_signals()), None)
}

/// Starts the thread that turns SIGTERM, SIGINT or SIGHUP into [`DaemonState::stop`]. It lives as long as the process.
pub(crate) fn spawn_handler(state: Arc<DaemonState>) -> std::io::Result<()> {
    std::thread::Builder::new().name("opencode-pty-signals".into()).spawn(move || {
        let set = termination_signals();
        loop {
            match set.wait() {
                Ok(signal) => {
                    tracing::info!(signal = signal.as_str(), "signal received, shutting down");
                    state.stop();
                }
                Err(nix::errno::Errno::EINTR) => {}
                Err(error) => {
                    tracing::error!(%error, "waiting for signals failed");
                    return;
                }
            }
        }
    })?;
    Ok(())
}

//! The accept loop: each accepted connection is checked (another user's process gets nothing), registered in
//! the daemon's state or refused (one too many, or the daemon stopping), and served on the thread that
//! accepted it (`pool.rs`, then `connection.rs`).

use std::os::fd::OwnedFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::time::Duration;

use super::pool::{Admission, Pool};
use super::state::DaemonState;
use crate::daemon::log_limit::FOREIGN_PEERS;

/// Accepts connections until the stop pipe closes, each served on the connection thread that accepted it (see
/// `pool.rs`), and returns the listener (the caller closes it, or an upgrade passes it on); connections still
/// open are the caller's to close.
pub(crate) fn accept_loop(
    state: Arc<DaemonState>,
    listener: UnixListener,
    stop: OwnedFd,
    linger: Duration,
) -> Option<UnixListener> {
    let serve = Arc::new(move |stream: UnixStream, admission: Admission| serve_accepted(&state, stream, admission));
    Pool::accept_until_stopped(listener, stop, "opencode-pty-conn", linger, serve)
}

/// Serves one accepted connection on this thread: refuses another user's process without a word, answers one
/// connection too many (or one arriving while the daemon stops) with an error, and serves the rest. The
/// connection is admitted once registered (or refused): an upgrade that stops accepting then finds it among
/// the connections it quiesces, so it is answered like the others and never closed unanswered by the `execve`.
fn serve_accepted(state: &DaemonState, stream: UnixStream, admission: Admission) {
    // Another user's process gets nothing at all, not even a refusal.
    if let Err(refused) = crate::daemon::runtime::check_peer(&stream) {
        crate::daemon::log_limit::limited_warn!(FOREIGN_PEERS, %refused, "connection refused");
        return;
    }
    let stream = Arc::new(stream);
    // Unregistered when the guard drops, so a handler that panics still frees its slot.
    let registered = state.register(&stream);
    drop(admission);
    let registered = match registered {
        Ok(registered) => registered,
        Err(reason) => {
            super::frames::refuse(&stream, reason);
            return;
        }
    };
    super::connection::serve(state, stream, &registered);
}

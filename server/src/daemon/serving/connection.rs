//! One connection's life: its first request, read within [`FIRST_REQUEST_TIMEOUT`] (`frames.rs` reads and
//! authenticates each frame), handed to the router (`router.rs`), and its outcome carried out: a response
//! written, a subscription streamed or a wait held (`subscription.rs`), the owner channel read on, the daemon
//! stopped.

use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use opencode_pty_protocol::{Request, Response};

use super::frames::{Deadline, Incoming, read_frame, send};
use super::intake::Kind;
use super::router::{Channel, Outcome, OwnerClaim, route};
use super::state::{DaemonState, Registered, TOO_MANY_HELD};
use crate::daemon::log_limit::HELD_CAP;

/// How long a new connection may take to send its whole first request before it is closed. It bounds only
/// that request: once it is read, the socket has no read deadline, so a subscription, a `wait` or the owner
/// channel lives as long as its process, its client and the daemon do (SPEC N8).
pub const FIRST_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How many connections the daemon has served: numbers each one's `connection` span.
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

/// Serves one accepted connection (its peer already checked, `registered` in the daemon's state) until it is
/// done: its first request, within the first-request deadline, and whatever that request turns the connection
/// into.
pub(crate) fn serve(state: &DaemonState, stream: Arc<UnixStream>, registered: &Registered<'_>) {
    // Every connection's log lines carry its number and, once read, its first request's op.
    let span = tracing::info_span!(
        parent: None,
        "connection",
        n = CONNECTIONS.fetch_add(1, Ordering::Relaxed),
        op = tracing::field::Empty
    );
    let _entered = span.enter();
    let first =
        read_frame(state, &mut Deadline::new(&stream, Some(state.first_request_timeout)), Kind::Unauthenticated);
    // The first-request deadline ends here; whatever the connection does next has no read deadline.
    if stream.set_read_timeout(None).is_err() {
        return;
    }
    let Some(mut incoming) = first else { return };
    if let Incoming::Request(request) = &incoming {
        span.record("op", request.op());
    }
    // A subscription or a wait holds its connection (and two threads) for as long as it lasts: counted, and
    // refused past the cap, so the reserve stays for requests answered at once (SPEC N11).
    let mut held = None;
    if matches!(
        incoming,
        Incoming::Request(
            Request::Subscribe { .. } | Request::Wait { .. } | Request::Run { .. } | Request::WaitCommand { .. }
        )
    ) {
        held = state.hold();
        if held.is_none() {
            crate::daemon::log_limit::limited_warn!(HELD_CAP, "refusing a subscription or wait: too many are held");
            incoming = Incoming::Refused(TOO_MANY_HELD.into());
        }
    }
    let outcome = route(state, incoming, Channel::Ordinary);
    if matches!(outcome, Outcome::Stream { .. }) {
        registered.streams_subscription();
    }
    carry_out(state, &stream, outcome);
    drop(held);
}

/// Serves the owner connection an upgrade's predecessor handed on (registered in the daemon's state), as the
/// owner channel of `generation`: its first frame is `answer` to the `upgrade` it sent the predecessor (`ok`,
/// or why the new image could not take the state), then its requests as before.
pub(crate) fn serve_resumed_owner(state: &DaemonState, stream: &Arc<UnixStream>, generation: u64, answer: &Response) {
    let _span =
        tracing::info_span!(parent: None, "connection", n = CONNECTIONS.fetch_add(1, Ordering::Relaxed), op = "own")
            .entered();
    let claim = OwnerClaim::resumed(state, generation);
    if send(stream, answer) {
        serve_owner_channel(state, stream, &claim);
    }
    // Dropping the claim here gives the ownership up (unless it was superseded).
}

/// Whether a connection reads another request after an outcome.
#[derive(Debug, PartialEq, Eq)]
enum Then {
    /// The owner channel goes on: read its next request.
    ReadNext,
    /// The connection is done.
    Close,
}

/// Carries out one outcome of the router on `stream`.
fn carry_out(state: &DaemonState, stream: &Arc<UnixStream>, outcome: Outcome<'_>) -> Then {
    match outcome {
        Outcome::Reply(response) => {
            send(stream, &response);
            Then::Close
        }
        Outcome::ReplyAndRead(response) => {
            if send(stream, &response) {
                Then::ReadNext
            } else {
                Then::Close
            }
        }
        Outcome::Stream { id, subscription } => {
            super::subscription::serve_subscription(state, stream.clone(), id, subscription);
            Then::Close
        }
        Outcome::Hold { id, waiter } => {
            super::subscription::hold_wait(state, stream.clone(), id, waiter);
            Then::Close
        }
        Outcome::OwnerChannel(claim) => {
            if send(stream, &Response::Owned) {
                serve_owner_channel(state, stream, &claim);
            }
            // Dropping the claim here gives the ownership up (unless it was superseded).
            Then::Close
        }
        Outcome::Stop => {
            send(stream, &Response::Ok);
            state.stop();
            Then::Close
        }
        Outcome::Upgrade { generation, program } => {
            // Returns only when this image serves on: with `ok`, the new image answers instead.
            let refused = crate::daemon::upgrading::ask(state, stream, generation, program);
            if send(stream, &Response::Error { message: refused }) { Then::ReadNext } else { Then::Close }
        }
    }
}

/// The owner channel: requests until it closes, is superseded, or stops the daemon. It has no read deadline: an
/// owner may stay silent for the daemon's whole life.
fn serve_owner_channel(state: &DaemonState, stream: &Arc<UnixStream>, claim: &OwnerClaim<'_>) {
    loop {
        let Some(incoming) = read_frame(state, &mut Deadline::new(stream, None), Kind::Authenticated) else { return };
        if carry_out(state, stream, route(state, incoming, claim.channel())) == Then::Close {
            return;
        }
    }
}

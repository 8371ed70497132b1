//! The connections that stay open: a subscription (`attached` with the replay, then JSON events and binary
//! output frames in the order the process published them, until `exited`, after which the daemon half-closes
//! and waits, bounded, for the client to close) and a pipe process's `wait` (held until one `exited`). A
//! client that goes away ends either at once, detaching its subscription or removing its waiter. The router
//! has attached the subscription or registered the waiter; this is the I/O that follows.

use std::io::{ErrorKind, IoSlice, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, bounded, select};
use opencode_pty_protocol::Response;

use super::frames::send;
use super::state::DaemonState;
use crate::pipe::PipeWait;
use crate::process::Event;
use crate::process::thread::join_reporting;
use crate::service::ProcessSubscription;

/// How long the daemon waits for the client to close after the final frame of a subscription.
pub(crate) const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// How often a write blocked on a client that does not read looks up whether it should give up: when the
/// daemon stops or the terminal has dropped the subscriber (an observer that fell too far behind). A
/// controller is never given up on: its blocked writes are its backpressure.
pub const STALLED_WRITE_CHECK: Duration = Duration::from_secs(1);

/// What a subscription's thread writes with one call at most: the events already queued for it are taken
/// together up to this size (the actor gathers its direct writes the same way, `DIRECT_WRITE_BATCH_BYTES`).
pub const WRITE_BATCH_BYTES: usize = 64 * 1024;

/// Writes `frames` in order, however long the client takes, unless the subscription is given up; false then.
/// The socket's write timeout is [`STALLED_WRITE_CHECK`] (set once by [`serve_subscription`]), so a blocked
/// write returns that often to look.
fn write_frames(
    state: &DaemonState,
    stream: &UnixStream,
    attached: &ProcessSubscription,
    gone: &Receiver<()>,
    frames: &[&[u8]],
) -> bool {
    let mut slices: Vec<IoSlice<'_>> = frames.iter().map(|frame| IoSlice::new(frame)).collect();
    let mut rest = &mut slices[..];
    let mut writer = stream;
    while !rest.is_empty() {
        match writer.write_vectored(rest) {
            Ok(0) => return false,
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                // Also give up once the client closed its side: it will never read this.
                let client_left = matches!(gone.try_recv(), Err(crossbeam_channel::TryRecvError::Disconnected));
                if state.is_stopping() || attached.is_ended() || client_left {
                    return false;
                }
            }
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

/// Whether `event` is the last of its subscription.
fn is_last(event: &Event) -> bool {
    // A pipe subscription ends with `error` instead when waiting for the child failed.
    matches!(event, Event::Message(message)
        if matches!(message.response(), Response::Exited { .. } | Response::Error { .. }))
}

/// `first` and whatever else is queued behind it now, up to [`WRITE_BATCH_BYTES`] and never past the last
/// event.
fn take_batch(attached: &ProcessSubscription, first: Event) -> Vec<Event> {
    let mut size = first.frame().len();
    let mut batch = vec![first];
    while size < WRITE_BATCH_BYTES && !batch.last().is_some_and(is_last) {
        let Ok(event) = attached.receiver().try_recv() else { break };
        size += event.frame().len();
        batch.push(event);
    }
    batch
}

/// Starts a thread that reads (and discards) whatever the client sends; the returned channel disconnects when
/// the client closes its side or the socket is shut down.
fn watch_close(stream: &Arc<UnixStream>, id: u64) -> Option<(Receiver<()>, JoinHandle<()>)> {
    let (gone_tx, gone) = bounded::<()>(1);
    let watched = stream.clone();
    let watcher = std::thread::Builder::new().name(format!("opencode-pty-peer-{id}")).spawn(move || {
        let mut sink = [0u8; 256];
        let mut reader: &UnixStream = &watched;
        loop {
            match reader.read(&mut sink) {
                Ok(n) if n > 0 => {}
                // A timeout is not the client leaving (the socket has none, but never take one for a departure).
                Err(error)
                    if matches!(error.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                }
                _ => break,
            }
        }
        drop(gone_tx);
    });
    match watcher {
        Ok(watcher) => Some((gone, watcher)),
        Err(error) => {
            super::log_limit::limited_warn!(super::log_limit::CONNECTION_THREADS, %error, id, "cannot start a subscriber's watcher; closing it");
            None
        }
    }
}

/// Streams one subscription (attached by the router) until the process exits, the client leaves or the daemon
/// stops.
pub(crate) fn serve_subscription(state: &DaemonState, stream: Arc<UnixStream>, id: u64, attached: ProcessSubscription) {
    let Some((gone, watcher)) = watch_close(&stream, id) else { return };
    // Once for the whole subscription (a system call per frame otherwise).
    let _ = stream.set_write_timeout(Some(STALLED_WRITE_CHECK));
    // The actor may write output to the socket itself while this thread has nothing left to write: counted
    // below, so the two never interleave.
    attached.offer_socket(stream.clone());
    let mut finished = false;
    loop {
        let event = select! {
            recv(attached.receiver()) -> event => event,
            recv(gone) -> _ => break,
        };
        // Disconnected: the process ended this subscription (terminated, or an observer fell behind).
        let Ok(event) = event else { break };
        let batch = take_batch(&attached, event);
        // Each frame was encoded once for every subscriber; this writes the shared bytes.
        let frames: Vec<&[u8]> = batch.iter().map(Event::frame).collect();
        if !write_frames(state, &stream, &attached, &gone, &frames) {
            break;
        }
        for _ in &batch {
            attached.written();
        }
        if batch.last().is_some_and(is_last) {
            finished = true;
            break;
        }
    }
    drop(attached);
    if finished {
        // Half-close after the final frame, then give the client a bounded time to read it and close.
        let _ = stream.shutdown(Shutdown::Write);
        let _ = gone.recv_timeout(CLOSE_GRACE);
    }
    let _ = stream.shutdown(Shutdown::Both);
    join_reporting(watcher);
}

/// `wait`, its waiter registered by the router: answers one `exited` when pipe process `id` exits (at once if
/// it has), `error` `terminated` if it is terminated first (or the failure when waiting for the child failed),
/// and nothing (the connection just closes) if the daemon stops or the client leaves. The waiter is held until
/// the connection ends, and removed then.
pub(crate) fn hold_wait(state: &DaemonState, stream: Arc<UnixStream>, id: u64, waiter: PipeWait) {
    let Some((gone, watcher)) = watch_close(&stream, id) else { return };
    let answer = select! {
        recv(waiter.receiver()) -> answer => answer.ok(),
        recv(gone) -> _ => None,
    };
    match answer {
        Some(Ok(exited)) => {
            send(&stream, &exited);
        }
        Some(Err(error)) if !state.is_stopping() => {
            send(&stream, &Response::Error { message: error.to_string() });
        }
        _ => {}
    }
    drop(waiter);
    let _ = stream.shutdown(Shutdown::Both);
    join_reporting(watcher);
}

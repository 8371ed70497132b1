//! The connections that stay open: a subscription (`attached` with the replay, then JSON events and binary
//! output frames in the order the process published them, until `exited`, after which the daemon half-closes
//! and waits, bounded, for the client to close) and a pipe process's `wait` (held until one `exited`). A
//! client that goes away ends either at once, detaching its subscription or removing its waiter. The router
//! has attached the subscription or registered the waiter; this is the I/O that follows.
//!
//! This is the one owner of a subscription socket's writes: the blocking ones of the connection's thread, and
//! the socket as the sink of the subscription's delivery ([`SocketSink`]), which the process's actor writes to
//! itself, without waiting, while this thread has nothing left to write (`process::delivery`).

use std::io::{ErrorKind, IoSlice, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, bounded, select};
use nix::sys::socket::{MsgFlags, sendmsg};
use opencode_pty_protocol::Response;

use super::frames::send;
use super::state::DaemonState;
use crate::error::ServiceError;
use crate::pipe::PipeWait;
use crate::terminal::CommandWait;

/// What a held connection waits for.
#[derive(Debug)]
pub(crate) enum Held {
    /// A pipe process's exit (`wait`).
    Exit(PipeWait),
    /// A terminal's command (`run`, `wait_command`).
    Command(CommandWait),
}
use crate::process::ProcessSubscription;
use crate::process::delivery::{Sink, write_while_taken};
use crate::process::thread::join_reporting;

/// How long the daemon waits for the client to close after the final frame of a subscription.
pub(crate) const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// How often a write blocked on a client that does not read looks up whether it should give up: when the
/// daemon stops or the terminal has dropped the subscriber (an observer that fell too far behind). A
/// controller is never given up on: its blocked writes are its backpressure.
pub const STALLED_WRITE_CHECK: Duration = Duration::from_secs(1);

/// What a subscription's thread writes with one call at most: the events already queued for it are taken
/// together up to this size (the actor gathers its direct writes the same way, `DIRECT_WRITE_BATCH_BYTES`).
pub const WRITE_BATCH_BYTES: usize = 64 * 1024;

/// A subscription's socket as the sink of its delivery: what the actor writes to it itself.
#[derive(Debug)]
pub(crate) struct SocketSink(pub(crate) Arc<UnixStream>);

impl Sink for SocketSink {
    /// One vectored `sendmsg` that does not wait (and raises no SIGPIPE), repeated while it takes everything.
    fn write_now(&self, slices: &mut [IoSlice<'_>]) -> usize {
        let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
        write_while_taken(slices, |rest| sendmsg::<()>(self.0.as_raw_fd(), rest, &[], flags, None))
    }
}

/// Writes `slices` in order, however long the client takes, unless the subscription is given up; false then.
/// The socket's write timeout is [`STALLED_WRITE_CHECK`] (set once by [`serve_subscription`]), so a blocked
/// write returns that often to look.
fn write_frames(
    state: &DaemonState,
    stream: &UnixStream,
    attached: &ProcessSubscription,
    gone: &Receiver<()>,
    slices: &mut [IoSlice<'_>],
) -> bool {
    let mut rest = slices;
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
            crate::daemon::log_limit::limited_warn!(crate::daemon::log_limit::CONNECTION_THREADS, %error, id, "cannot start a subscriber's watcher; closing it");
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
    attached.offer(Arc::new(SocketSink(stream.clone())));
    let mut finished = false;
    loop {
        let event = select! {
            recv(attached.receiver()) -> event => event,
            recv(gone) -> _ => break,
        };
        // Disconnected: the process ended this subscription (terminated, or an observer fell behind).
        let Ok(event) = event else { break };
        // Never past the last event (`exited`, or a pipe subscription's `error` when waiting for the child
        // failed).
        let batch = attached.batch(event, WRITE_BATCH_BYTES);
        // Each frame was encoded once for every subscriber; this writes the shared bytes.
        if !write_frames(state, &stream, &attached, &gone, &mut batch.slices()) {
            break;
        }
        attached.written(&batch);
        if batch.is_last() {
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
pub(crate) fn hold_wait(state: &DaemonState, stream: Arc<UnixStream>, id: u64, waiter: Held) {
    let Some((gone, watcher)) = watch_close(&stream, id) else { return };
    let receiver = match &waiter {
        Held::Exit(wait) => wait.receiver(),
        Held::Command(wait) => wait.receiver(),
    };
    let answer = select! {
        recv(receiver) -> answer => match (answer, &waiter) {
            (Ok(answer), _) => Some(answer),
            // The terminal stopped without an answer: terminated, or the daemon is stopping.
            (Err(_), Held::Command(_)) => Some(Err(ServiceError::Shell {
                id,
                message: "it was terminated while the command was waited for".into(),
            })),
            (Err(_), Held::Exit(_)) => None,
        },
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

#[cfg(test)]
mod tests;

//! A subscription connection: `attached` (with the replay), then JSON events and binary output frames in the
//! order the terminal published them, until `exited`. The daemon then half-closes and waits (bounded) for the
//! client to close. A client that goes away detaches its subscription at once.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crossbeam_channel::{bounded, select};
use opencode_pty_protocol::{Response, Role, encode_output};

use super::connection::{response_frame, send};
use super::server::Shared;
use crate::terminal::Event;

/// How long the daemon waits for the client to close after the final frame of a subscription.
pub const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Streams one subscription until the process exits, the client leaves or the daemon stops.
pub fn serve(
    shared: &Shared,
    mut stream: UnixStream,
    id: u64,
    offset: u64,
    attachment: String,
    role: Role,
    takeover: bool,
) {
    let subscribed = shared.service.get_handle(id).and_then(|h| h.subscribe(offset, attachment, role, takeover));
    let subscription = match subscribed {
        Ok(subscription) => subscription,
        Err(refused) => {
            send(&mut stream, &Response::Error { message: refused.to_string() });
            return;
        }
    };
    // A watcher notices the client closing (its read returns 0) while this thread waits for events.
    let (gone_tx, gone) = bounded::<()>(1);
    let Ok(mut watched) = stream.try_clone() else { return };
    let watcher = std::thread::Builder::new().name(format!("opencode-pty-sub-{id}")).spawn(move || {
        let mut sink = [0u8; 256];
        while matches!(watched.read(&mut sink), Ok(n) if n > 0) {}
        let _ = gone_tx.send(());
    });
    let Ok(watcher) = watcher else { return };
    let mut finished = false;
    loop {
        let event = select! {
            recv(subscription.receiver()) -> event => event,
            recv(gone) -> _ => break,
        };
        // Disconnected: the terminal ended this subscription (it was terminated, or the observer fell behind).
        let Ok(event) = event else { break };
        let (frame, last) = match &event {
            Event::Output { start, bytes } => (encode_output(*start, bytes).ok(), false),
            Event::Message(message) => {
                (Some(response_frame(message)), matches!(message.as_ref(), Response::Exited { .. }))
            }
        };
        let Some(frame) = frame else { break };
        if stream.write_all(&frame).is_err() {
            break;
        }
        if last {
            finished = true;
            break;
        }
    }
    drop(subscription);
    if finished {
        // Half-close after the final frame, then give the client a bounded time to read it and close.
        let _ = stream.shutdown(Shutdown::Write);
        let _ = gone.recv_timeout(CLOSE_GRACE);
    }
    let _ = stream.shutdown(Shutdown::Both);
    let _ = watcher.join();
}

//! [`Subscription`]: an open `subscribe` connection. It holds the `attached` answer and yields, in order, the
//! live output frames and events that follow, up to `exited` (SPEC §5.3, D11).
//!
//! Output must be contiguous: the first frame starts at `attached`'s `end_offset` and each later one where the
//! previous ended, so every byte is seen exactly once. A gap or an overlap means the daemon is broken, and is
//! reported as a protocol error.

use opencode_pty_protocol::{Frame, Response};

use crate::conn::{Connection, decode_response};
use crate::error::ClientError;
use crate::types::{Attached, Event};

/// A live subscription to one process. Dropping it closes the connection, which ends the attachment.
#[derive(Debug)]
pub struct Subscription {
    /// The connection `attached` was read from.
    connection: Connection,
    /// The first answer.
    attached: Attached,
    /// Where the next output frame must start.
    next_offset: u64,
    /// Set once `exited` or an error was yielded: nothing more is read.
    finished: bool,
}

impl Subscription {
    /// Wraps the connection on which `attached` was read.
    pub(crate) fn new(connection: Connection, attached: Attached) -> Subscription {
        let next_offset = attached.end_offset;
        Subscription { connection, attached, next_offset, finished: false }
    }

    /// The `attached` answer: the process, the role obtained and the decoded replay.
    pub fn attached(&self) -> &Attached {
        &self.attached
    }

    /// The offset the next output frame must start at: the end of all output seen so far. Resubscribing from
    /// here continues without a gap.
    pub fn next_offset(&self) -> u64 {
        self.next_offset
    }

    /// The next output chunk or event. After [`Response::Exited`] has been yielded, or after any error, it returns
    /// `None`. If the daemon closes the connection before `exited` (it disconnects an observer that falls too far
    /// behind, say), it yields [`ClientError::Closed`] once.
    ///
    /// Cancel safe: a frame partly read when the future is dropped is kept for the next call, so it can be used
    /// in `select!`.
    pub async fn next(&mut self) -> Option<Result<Event, ClientError>> {
        if self.finished {
            return None;
        }
        let event = self.read_event().await;
        self.finished = match &event {
            Ok(Event::Message(message)) => matches!(**message, Response::Exited { .. }),
            Ok(Event::Output { .. }) => false,
            Err(_) => true,
        };
        Some(event)
    }

    /// Reads and checks one frame.
    async fn read_event(&mut self) -> Result<Event, ClientError> {
        match self.connection.read_frame().await? {
            None => Err(ClientError::Closed),
            Some(Frame::Output { start, bytes }) => self.output(start, bytes),
            Some(Frame::Control(map)) => match decode_response(map)? {
                Response::Error { message } => Err(ClientError::Daemon { message }),
                event if event.is_event() => Ok(Event::Message(Box::new(event))),
                other => Err(ClientError::Protocol(format!(
                    "a subscription carried a `{}`, which is not an event",
                    other.type_tag()
                ))),
            },
        }
    }

    /// Checks that an output frame continues where the output seen so far ended.
    fn output(&mut self, start: u64, bytes: Vec<u8>) -> Result<Event, ClientError> {
        if start != self.next_offset {
            return Err(ClientError::Protocol(format!(
                "output frame starts at offset {start}, but the output so far ends at {}",
                self.next_offset
            )));
        }
        // The decoder checked that `start + len` is the frame's end offset, which is a u64.
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        self.next_offset = start.saturating_add(len);
        Ok(Event::Output { start, bytes })
    }
}

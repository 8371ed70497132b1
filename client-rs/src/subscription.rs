//! [`Subscription`]: an open `subscribe` connection. It holds the `attached` answer and yields, in order, the
//! live output frames and events that follow, up to `exited` (SPEC §5.3, D11).
//!
//! Output must be contiguous: the first frame starts at `attached`'s `end_offset` and each later one where the
//! previous ended, so every byte is seen exactly once. A gap or an overlap means the daemon is broken, and is
//! reported as a protocol error.
//!
//! Across an in-place upgrade (`resume.rs`) a subscription goes on by itself: when the daemon closes the
//! connection before `exited`, it subscribes again, on a new connection to the same instance, from the offset
//! where output stopped, with the same attachment id and events, and yields [`Event::Resumed`] before the
//! output that follows. The role it asks for is the one it last had: a controller (by `attached` or the latest
//! `controller_changed`) asks to be the controller without taking over, so it is the controller again when
//! nobody else took control during the break, and an observer otherwise; anything else asks as an observer.
//! The daemon takes the controller's `input`, `control`, `write` and `resize` as soon as it serves again, before
//! its subscription has resumed (SPEC U4), so typing need not wait for [`Event::Resumed`].
//! The client cannot tell an upgrade's close from another: an observer the daemon dropped for falling behind
//! (D13) goes on the same way while the daemon still keeps the bytes from its offset, and ends as before once
//! it does not; a process terminated meanwhile ends it as before.

use opencode_pty_protocol::{Frame, Mode, OptIn, Response, Role};

use crate::client::{Client, bounded};
use crate::conn::{Connection, decode_response};
use crate::error::ClientError;
use crate::resume::{Backoff, NotResumed, connection_lost};
use crate::types::{Attached, Event, Resumed};

/// What a subscription needs to subscribe again after its connection was lost.
#[derive(Debug)]
pub(crate) struct Resume {
    /// The client it was made with (registration, timeouts, resume window).
    pub(crate) client: Client,
    /// The process.
    pub(crate) id: u64,
    /// The attachment id, kept across connections.
    pub(crate) attachment_id: String,
    /// The features whose events it carries.
    pub(crate) events: Vec<OptIn>,
}

/// A live subscription to one process. Dropping it closes the connection, which ends the attachment.
#[derive(Debug)]
pub struct Subscription {
    /// The connection `attached` (or the latest resumption) was read from.
    connection: Connection,
    /// The first answer.
    attached: Attached,
    /// Where the next output frame must start.
    next_offset: u64,
    /// Set once `exited` or an error was yielded: nothing more is read.
    finished: bool,
    /// Whether this attachment is the controller, as `attached` and the latest `controller_changed` said.
    controller: bool,
    /// How to subscribe again, when the daemon resumes lost connections (`Client::resumes`).
    resume: Option<Resume>,
    /// The replay of a resumption (its start and bytes), yielded as output after [`Event::Resumed`].
    pending: Option<(u64, Vec<u8>)>,
}

impl Subscription {
    /// Wraps the connection on which `attached` was read; `resume` when it may go on after a lost connection.
    pub(crate) fn new(connection: Connection, attached: Attached, resume: Option<Resume>) -> Subscription {
        let next_offset = attached.end_offset;
        let controller = attached.role == Role::Controller;
        Subscription { connection, attached, next_offset, finished: false, controller, resume, pending: None }
    }

    /// The `attached` answer: the process, the role obtained and the decoded replay. After a resumption it is
    /// still the first answer; [`Event::Resumed`] carries what the daemon said then.
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
    /// behind, say), it yields [`ClientError::Closed`] once, unless the subscription resumes (a daemon with the
    /// `upgrade` feature: see the module's text), when it yields [`Event::Resumed`] and goes on.
    ///
    /// Cancel safe: a frame partly read when the future is dropped is kept for the next call, so it can be used
    /// in `select!`. A resumption in progress when the future is dropped starts again at the next call.
    pub async fn next(&mut self) -> Option<Result<Event, ClientError>> {
        if self.finished {
            return None;
        }
        let read = match self.pending.take() {
            // The bytes kept after a resumption's offset, taken as an output frame.
            Some((start, bytes)) => self.output(start, bytes),
            None => self.read_event().await,
        };
        let event = match read {
            Err(lost) if connection_lost(&lost) && self.resume.is_some() => self.resume(lost).await,
            event => event,
        };
        self.finished = match &event {
            Ok(Event::Message(message)) => matches!(**message, Response::Exited { .. }),
            Ok(Event::Output { .. } | Event::Resumed(_)) => false,
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
                Response::ControllerChanged { attachment_id, generation } => {
                    self.controller =
                        self.resume.as_ref().is_some_and(|r| attachment_id.as_ref() == Some(&r.attachment_id));
                    Ok(Event::Message(Box::new(Response::ControllerChanged { attachment_id, generation })))
                }
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

    /// Subscribes again after the connection was `lost`, within the client's resume window; `lost` itself when
    /// the subscription cannot go on (no daemon left, another instance, the process gone, bytes no longer
    /// kept).
    async fn resume(&mut self, lost: ClientError) -> Result<Event, ClientError> {
        let Some(resume) = &self.resume else { return Err(lost) };
        let client = resume.client.clone();
        let mut backoff = Backoff::new(client.resume_window());
        loop {
            match client.reach_same_instance(&mut backoff).await {
                Ok(()) => {}
                Err(NotResumed::Gone) => return Err(lost),
                Err(NotResumed::Ends(error)) => return Err(error),
            }
            let resubscribed = self.resubscribe(&client, &backoff).await;
            let refused_controller = self.controller && matches!(resubscribed, Err(ClientError::Daemon { .. }));
            match resubscribed {
                Ok((connection, attached)) => return self.resumed(connection, attached, backoff.attempts(), lost),
                // Another attachment took control during the break: go on as an observer, as a controller
                // that was taken over does.
                Err(_) if refused_controller => self.controller = false,
                Err(ClientError::Daemon { .. }) => return Err(lost),
                Err(error) if connection_lost(&error) || matches!(error, ClientError::Timeout { .. }) => {
                    if !backoff.pause().await {
                        return Err(lost);
                    }
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// One `subscribe` from where output stopped, as the role last held, within the window.
    async fn resubscribe(&self, client: &Client, backoff: &Backoff) -> Result<(Connection, Attached), ClientError> {
        let Some(resume) = &self.resume else { return Err(ClientError::Closed) };
        let role = if self.controller { Role::Controller } else { Role::Observer };
        let limit = backoff.remaining().min(client.request_timeout());
        let subscribe =
            client.open_subscription(resume.id, self.next_offset, &resume.attachment_id, role, false, &resume.events);
        bounded(limit, "subscribe request".to_owned(), subscribe).await
    }

    /// Goes on on `connection`, whose `attached` must hold every byte from where output stopped (a pipe
    /// process keeps none, and sends none).
    fn resumed(
        &mut self,
        connection: Connection,
        attached: Attached,
        attempts: u32,
        lost: ClientError,
    ) -> Result<Event, ClientError> {
        let offset = self.next_offset;
        let pty = attached.process.mode == Mode::Pty;
        // The bytes the daemon keeps from `offset` on (all of them after an upgrade); `None` when it no longer
        // keeps them all.
        let kept = offset
            .checked_sub(attached.available_offset)
            .and_then(|skip| usize::try_from(skip).ok())
            .and_then(|skip| attached.replay.get(skip..));
        let rest = match kept {
            Some(rest) => rest.to_vec(),
            // Going on would skip bytes the daemon no longer keeps.
            None if pty => return Err(lost),
            None => Vec::new(),
        };
        self.connection = connection;
        self.controller = attached.role == Role::Controller;
        if !pty {
            // A pipe process sends no output: its offsets only say how far it wrote.
            self.next_offset = attached.end_offset;
        } else if !rest.is_empty() {
            // Yielded next, as an output frame, so the offset moves only when they are read.
            self.pending = Some((offset, rest));
        }
        let Attached { process, role, generation, .. } = attached;
        Ok(Event::Resumed(Box::new(Resumed { offset, process, role, generation, attempts })))
    }
}

//! A connection's frames: one frame read from a client and authenticated (the envelope's token checked, in
//! constant time, before anything else) into an [`Incoming`], the router's input; and whole responses written
//! within a deadline ([`send`]), by the connection and by the held connections of `subscription.rs`.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use opencode_pty_protocol::{
    AUTHENTICATION_FAILED, FrameError, OUTPUT_TAG, Request, RequestEnvelope, Response, decode_payload,
};

use super::intake::{self, IntakeError, Kind};
use super::ownership::constant_time_eq;
use super::state::DaemonState;
use crate::daemon::log_limit::{MALFORMED_FRAMES, SHORT_OF_ROOM};
use crate::process::response_frame;

/// How long writing one whole response may take before the client counts as gone.
pub(crate) const RESPONSE_WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A socket whose reads (or writes) all end by one deadline (a per-call timeout would restart with every
/// byte, so a client sending one byte at a time could hold a connection for ever). Reading arms only the read
/// timeout and writing only the write timeout, so a deadline for one direction never outlives its use in the
/// other: a subscription's close watcher reads with no timeout while its frames are written.
#[derive(Debug)]
pub(crate) struct Deadline<'a> {
    stream: &'a UnixStream,
    deadline: Option<Instant>,
}

impl<'a> Deadline<'a> {
    /// Reads or writes on `stream` that must finish within `bound` from now (`None`: no bound).
    pub(crate) fn new(stream: &'a UnixStream, bound: Option<Duration>) -> Deadline<'a> {
        Deadline { stream, deadline: bound.map(|b| Instant::now() + b) }
    }

    /// What is left of the deadline (`None`: unbounded); fails once nothing is.
    fn left(&self) -> std::io::Result<Option<Duration>> {
        match self.deadline {
            None => Ok(None),
            Some(deadline) => match deadline.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => Ok(Some(left)),
                _ => Err(std::io::ErrorKind::TimedOut.into()),
            },
        }
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream.set_read_timeout(self.left()?)?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

impl Write for Deadline<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream.set_write_timeout(self.left()?)?;
        let mut stream = self.stream;
        stream.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes one response within [`RESPONSE_WRITE_TIMEOUT`]; false when the client is gone or too slow.
pub(crate) fn send(stream: &UnixStream, response: &Response) -> bool {
    Deadline::new(stream, Some(RESPONSE_WRITE_TIMEOUT)).write_all(&response_frame(response)).is_ok()
}

/// Answers a connection the daemon will not serve, and closes it.
pub(crate) fn refuse(stream: &UnixStream, message: &str) {
    send(stream, &Response::Error { message: message.into() });
}

/// What one frame from a client turned out to be.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// Authenticated and decoded.
    Request(Request),
    /// A well-formed output frame where a request envelope belongs.
    OutputFrame,
    /// An envelope that is not a request this daemon can carry out (a wrong token, an unknown op, a bad
    /// field): the message says why.
    Refused(String),
}

/// Reads one frame from `reader`, drawing on the budget of `kind` (`intake.rs`), and authenticates it: `None`
/// when the connection ended, broke, or sent a malformed frame (which is never answered, SPEC F11). The token is
/// checked before anything else of the request is looked at, and without building a JSON tree of it (SPEC
/// E6b), so a frame with a wrong token costs little more than its own bytes.
pub(crate) fn read_frame(state: &DaemonState, reader: &mut impl Read, kind: Kind) -> Option<Incoming> {
    let payload = match intake::read_payload(reader, state.budget(kind)) {
        Ok(payload) => payload,
        Err(IntakeError::Ended | IntakeError::Frame(FrameError::Io(_))) => return None,
        Err(IntakeError::ShortOfRoom) => {
            crate::daemon::log_limit::limited_warn!(SHORT_OF_ROOM, ?kind, "refusing a frame: its budget is spent");
            return Some(Incoming::Refused(intake::short_of_room(kind)));
        }
        Err(IntakeError::Frame(frame_error)) => return malformed(&frame_error),
    };
    let payload = payload.bytes();
    if payload.first() == Some(&OUTPUT_TAG) {
        return match decode_payload(payload) {
            Ok(_) => Some(Incoming::OutputFrame),
            Err(frame_error) => malformed(&frame_error),
        };
    }
    let envelope = match RequestEnvelope::parse(payload) {
        Ok(envelope) => envelope,
        Err(frame_error) => return malformed(&frame_error),
    };
    // A token longer than ours could be written (every character escaped) is wrong: refused without a copy.
    if envelope.token_text_len() > max_token_text(&state.registration.token) {
        return Some(Incoming::Refused(AUTHENTICATION_FAILED.into()));
    }
    match envelope.token() {
        Ok(token) if constant_time_eq(token.as_bytes(), state.registration.token.as_bytes()) => {}
        Ok(_) => return Some(Incoming::Refused(AUTHENTICATION_FAILED.into())),
        Err(error) => return Some(Incoming::Refused(error.to_string())),
    }
    match envelope.decode() {
        Ok(request) => Some(Incoming::Request(request)),
        Err(error) => Some(Incoming::Refused(error.to_string())),
    }
}

/// The longest JSON text of a string equal to `token`: its quotes, and each character as a `\uXXXX` escape.
fn max_token_text(token: &str) -> usize {
    2 + 6 * token.len()
}

/// Logs (rate-limited) a malformed frame; the connection is closed without an answer.
fn malformed(frame_error: &FrameError) -> Option<Incoming> {
    crate::daemon::log_limit::limited_warn!(MALFORMED_FRAMES, error = %frame_error, "closing a connection that sent a malformed frame");
    None
}

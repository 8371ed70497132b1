//! One connection: the envelope's token is checked (in constant time) before anything else, then the request
//! is decoded and answered. Ordinary requests get one response and the connection closes; `own` turns the
//! connection into the owner channel; `subscribe` and `wait` stay open (see `subscription.rs`).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use opencode_pty_protocol::{
    FrameError, OUTPUT_TAG, PROTOCOL_VERSION, Request, RequestEnvelope, Response, decode_payload, encode_control,
};

use super::log_limit::MALFORMED_FRAMES;

use super::ownership::{OwnershipError, constant_time_eq};
use super::server::DaemonState;

/// How long a new connection may take to send its whole first request before it is closed. It bounds only
/// that request: once it is read, the socket has no read deadline, so a subscription, a `wait` or the owner
/// channel lives as long as its process, its client and the daemon do (SPEC N8).
pub const FIRST_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long writing one whole response may take before the client counts as gone.
pub const RESPONSE_WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A socket whose reads (or writes) all end by one deadline (a per-call timeout would restart with every
/// byte, so a client sending one byte at a time could hold a connection for ever). Reading arms only the read
/// timeout and writing only the write timeout, so a deadline for one direction never outlives its use in the
/// other: a subscription's close watcher reads with no timeout while its frames are written.
#[derive(Debug)]
pub struct Deadline<'a> {
    stream: &'a UnixStream,
    deadline: Option<Instant>,
}

impl<'a> Deadline<'a> {
    /// Reads or writes on `stream` that must finish within `bound` from now (`None`: no bound).
    pub fn new(stream: &'a UnixStream, bound: Option<Duration>) -> Deadline<'a> {
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

/// Encodes a response as a control frame.
pub fn response_frame(response: &Response) -> Vec<u8> {
    let encoded = match serde_json::to_value(response) {
        Ok(serde_json::Value::Object(map)) => encode_control(&map).map_err(|e| e.to_string()),
        Ok(_) => Err("it is not a JSON object".to_owned()),
        Err(e) => Err(e.to_string()),
    };
    encoded.unwrap_or_else(|reason| {
        // Only an oversized answer can fail here in practice; say so instead.
        let mut map = serde_json::Map::new();
        map.insert("type".into(), "error".into());
        map.insert("message".into(), format!("the response cannot be sent: {reason}").into());
        encode_control(&map).unwrap_or_default()
    })
}

/// Writes one response within [`RESPONSE_WRITE_TIMEOUT`]; false when the client is gone or too slow.
pub fn send(stream: &UnixStream, response: &Response) -> bool {
    Deadline::new(stream, Some(RESPONSE_WRITE_TIMEOUT)).write_all(&response_frame(response)).is_ok()
}

fn error(message: impl Into<String>) -> Response {
    Response::Error { message: message.into() }
}

/// Answers a connection the daemon will not serve, and closes it.
pub fn refuse(stream: &UnixStream, message: &str) {
    send(stream, &error(message));
}

/// What one frame from a client turned out to be.
enum Incoming {
    /// Authenticated and decoded.
    Request(Request),
    /// Not a request this daemon can carry out; the error message, and whether the connection may go on.
    Refused { message: String, keep: bool },
}

/// Reads one frame from `reader` and authenticates it: `None` when the connection ended, broke, or sent a
/// malformed frame (which is never answered, SPEC F11). The token is checked before anything else of the request
/// is looked at, and without building a JSON tree of it (SPEC E6b), so a frame with a wrong token costs little
/// more than its own bytes. A refused envelope keeps an ordinary connection only on the owner channel
/// (`owner_channel`); an output frame never does.
fn read_envelope(shared: &DaemonState, reader: &mut impl Read, owner_channel: bool) -> Option<Incoming> {
    let payload = match opencode_pty_protocol::read_payload(reader) {
        Ok(Some(payload)) => payload,
        Ok(None) | Err(FrameError::Io(_)) => return None,
        Err(frame_error) => return malformed(&frame_error),
    };
    if payload.first() == Some(&OUTPUT_TAG) {
        return match decode_payload(&payload) {
            Ok(_) => Some(Incoming::Refused {
                message: "expected a request envelope, got an output frame".into(),
                keep: false,
            }),
            Err(frame_error) => malformed(&frame_error),
        };
    }
    let envelope = match RequestEnvelope::parse(&payload) {
        Ok(envelope) => envelope,
        Err(frame_error) => return malformed(&frame_error),
    };
    let refused = |message: String| Some(Incoming::Refused { message, keep: owner_channel });
    match envelope.token() {
        Ok(token) if constant_time_eq(token.as_bytes(), shared.registration.token.as_bytes()) => {}
        Ok(_) => return refused("authentication failed".into()),
        Err(error) => return refused(error.to_string()),
    }
    match envelope.decode() {
        Ok(request) => Some(Incoming::Request(request)),
        Err(error) => refused(error.to_string()),
    }
}

/// Logs (rate-limited) a malformed frame; the connection is closed without an answer.
fn malformed(frame_error: &FrameError) -> Option<Incoming> {
    crate::limited_warn!(MALFORMED_FRAMES, error = %frame_error, "closing a connection that sent a malformed frame");
    None
}

/// Serves one accepted connection (its peer already checked) until it is done.
pub fn handle(shared: &DaemonState, stream: Arc<UnixStream>) {
    let first = read_envelope(shared, &mut Deadline::new(&stream, Some(shared.first_request_timeout)), false);
    // The first-request deadline ends here; whatever the connection does next has no read deadline.
    if stream.set_read_timeout(None).is_err() {
        return;
    }
    let request = match first {
        Some(Incoming::Request(request)) => request,
        Some(Incoming::Refused { message, .. }) => {
            send(&stream, &error(message));
            return;
        }
        None => return,
    };
    match request {
        Request::Ping => {
            let registration = &shared.registration;
            let pong = Response::Pong {
                features: registration.features.clone(),
                instance_id: registration.instance_id.clone(),
                pid: registration.pid,
                protocol: PROTOCOL_VERSION,
            };
            send(&stream, &pong);
        }
        Request::Own { instance_id, ticket } => own(shared, &stream, &instance_id, ticket.as_deref()),
        Request::PrepareHandoff => {
            send(&stream, &error(OwnershipError::NotOwner.to_string()));
        }
        Request::Shutdown => {
            send(&stream, &Response::Ok);
            shared.stop();
        }
        Request::Subscribe { id, offset, attachment_id, role, takeover } => {
            super::subscription::serve(shared, stream, id, offset, attachment_id, role, takeover);
        }
        Request::Wait { id } => super::subscription::wait(shared, stream, id),
        other => {
            let response = super::dispatch::dispatch(&shared.service, other);
            send(&stream, &response);
        }
    }
}

/// `own`: claims the daemon and, once `owned` is sent, serves the owner channel until it closes.
fn own(shared: &DaemonState, stream: &UnixStream, instance_id: &str, ticket: Option<&str>) {
    if instance_id != shared.registration.instance_id {
        send(stream, &error("daemon instance_id mismatch"));
        return;
    }
    if shared.is_stopping() {
        send(stream, &error("daemon is stopping"));
        return;
    }
    let claimed = shared.ownership().claim(ticket, Instant::now());
    shared.notify();
    let generation = match claimed {
        Ok(generation) => generation,
        Err(refused) => {
            send(stream, &error(refused.to_string()));
            return;
        }
    };
    if send(stream, &Response::Owned) {
        owner_channel(shared, stream, generation);
    }
    shared.ownership().disconnect(generation);
    shared.notify();
}

/// The owner channel: `prepare_handoff` and `shutdown`, until it closes or is superseded. It has no read
/// deadline: an owner may stay silent for the daemon's whole life.
fn owner_channel(shared: &DaemonState, stream: &UnixStream, generation: u64) {
    loop {
        let Some(envelope) = read_envelope(shared, &mut Deadline::new(stream, None), true) else { return };
        // A superseded channel gets this one answer, whatever it sent.
        if !shared.ownership().is_owner(generation) {
            send(stream, &error("owner connection has been superseded"));
            return;
        }
        let request = match envelope {
            Incoming::Request(request) => request,
            Incoming::Refused { message, keep } => {
                if send(stream, &error(message)) && keep {
                    continue;
                }
                return;
            }
        };
        let answer = match request {
            Request::PrepareHandoff => {
                let prepared = shared.ownership().prepare(generation, Instant::now(), crate::now_ms(), random_hex);
                shared.notify();
                match prepared {
                    Ok(handoff) => Response::Handoff { ticket: handoff.ticket, expires_at: handoff.expires_at },
                    Err(refused) => error(refused.to_string()),
                }
            }
            Request::Shutdown => {
                // Decided under the ownership lock, so a claim cannot slip in between `ok` and the stop.
                let stopping = {
                    let mut ownership = shared.ownership();
                    let owner = ownership.is_owner(generation);
                    if owner {
                        ownership.stop();
                    }
                    owner
                };
                if !stopping {
                    send(stream, &error("owner connection has been superseded"));
                    return;
                }
                send(stream, &Response::Ok);
                shared.stop();
                return;
            }
            _ => error("owner connection only accepts prepare_handoff or shutdown"),
        };
        if !send(stream, &answer) {
            return;
        }
    }
}

/// 32 lowercase hex characters from a random 128-bit value.
pub fn random_hex() -> String {
    format!("{:032x}", rand::random::<u128>())
}

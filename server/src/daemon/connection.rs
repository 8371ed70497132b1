//! One connection: the envelope's token is checked (in constant time) before anything else, then the request
//! is decoded and answered. Ordinary requests get one response and the connection closes; `own` turns the
//! connection into the owner channel; `subscribe` streams (see `subscription.rs`).

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use opencode_pty_protocol::{
    Frame, FrameError, PROTOCOL_VERSION, Request, RequestEnvelope, Response, encode_control, read_frame,
};

use super::ownership::{OwnershipError, constant_time_eq};
use super::server::Shared;

/// How long a new connection may take to send its request before it is closed.
pub const FIRST_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long writing one response may take before the client counts as gone.
pub const RESPONSE_WRITE_TIMEOUT: Duration = Duration::from_secs(10);

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

/// Writes one response; false when the client is gone.
pub fn send(stream: &mut UnixStream, response: &Response) -> bool {
    stream.write_all(&response_frame(response)).is_ok()
}

fn error(message: impl Into<String>) -> Response {
    Response::Error { message: message.into() }
}

/// Answers a connection the daemon will not serve, and closes it.
pub fn refuse(mut stream: UnixStream, message: &str) {
    let _ = stream.set_write_timeout(Some(RESPONSE_WRITE_TIMEOUT));
    send(&mut stream, &error(message));
}

/// What one envelope turned out to be.
enum Envelope {
    /// Authenticated and decoded.
    Request(Request),
    /// Answered already (bad token, unknown op, bad fields); whether to keep the connection.
    Answered { keep: bool },
    /// The connection ended or broke.
    Closed,
}

/// Reads one envelope and authenticates it. A wrong token ends an ordinary connection; on the owner
/// channel (`keep_on_bad_token`) it is answered and the channel stays.
fn read_envelope(shared: &Shared, stream: &mut UnixStream, keep_on_bad_token: bool) -> Envelope {
    let map = match read_frame(stream) {
        Ok(Some(Frame::Control(map))) => map,
        Ok(Some(Frame::Output { .. })) => {
            send(stream, &error("expected a request envelope, got an output frame"));
            return Envelope::Answered { keep: false };
        }
        Ok(None) => return Envelope::Closed,
        Err(FrameError::Io(_)) => return Envelope::Closed,
        Err(frame_error) => {
            send(stream, &error(format!("invalid frame: {frame_error}")));
            return Envelope::Answered { keep: false };
        }
    };
    let envelope = match RequestEnvelope::from_frame(map) {
        Ok(envelope) if constant_time_eq(envelope.token.as_bytes(), shared.registration.token.as_bytes()) => envelope,
        _ => {
            send(stream, &error("authentication failed"));
            return Envelope::Answered { keep: keep_on_bad_token };
        }
    };
    match envelope.decode() {
        Ok(request) => Envelope::Request(request),
        Err(decode_error) => {
            let keep = send(stream, &error(decode_error.to_string()));
            Envelope::Answered { keep: keep && keep_on_bad_token }
        }
    }
}

/// Serves one accepted connection until it is done.
pub fn handle(shared: &Shared, mut stream: UnixStream) {
    if let Err(refused) = super::runtime::check_peer(&stream) {
        eprintln!("opencode-pty: {refused}");
        return;
    }
    let _ = stream.set_read_timeout(Some(FIRST_REQUEST_TIMEOUT));
    let _ = stream.set_write_timeout(Some(RESPONSE_WRITE_TIMEOUT));
    let Envelope::Request(request) = read_envelope(shared, &mut stream, false) else { return };
    let _ = stream.set_read_timeout(None);
    match request {
        Request::Ping => {
            let registration = &shared.registration;
            send(
                &mut stream,
                &Response::Pong {
                    features: registration.features.clone(),
                    instance_id: registration.instance_id.clone(),
                    pid: registration.pid,
                    protocol: PROTOCOL_VERSION,
                },
            );
        }
        Request::Own { instance_id, ticket } => own(shared, stream, &instance_id, ticket.as_deref()),
        Request::PrepareHandoff => {
            send(&mut stream, &error(OwnershipError::NotOwner.to_string()));
        }
        Request::Shutdown => {
            send(&mut stream, &Response::Ok);
            shared.stop();
        }
        Request::Subscribe { id, offset, attachment_id, role, takeover } => {
            // Writes to a controller that does not read block on purpose: that is its backpressure.
            let _ = stream.set_write_timeout(None);
            super::subscription::serve(shared, stream, id, offset, attachment_id, role, takeover);
        }
        Request::Wait { id } => super::subscription::wait(shared, stream, id),
        other => {
            let response = super::dispatch::dispatch(&shared.service, other);
            send(&mut stream, &response);
        }
    }
}

/// `own`: claims the daemon and, once `owned` is sent, serves the owner channel until it closes.
fn own(shared: &Shared, mut stream: UnixStream, instance_id: &str, ticket: Option<&str>) {
    if instance_id != shared.registration.instance_id {
        send(&mut stream, &error("daemon instance_id mismatch"));
        return;
    }
    if shared.is_stopping() {
        send(&mut stream, &error("daemon is stopping"));
        return;
    }
    let claimed = shared.ownership().claim(ticket, Instant::now());
    shared.notify();
    let generation = match claimed {
        Ok(generation) => generation,
        Err(refused) => {
            send(&mut stream, &error(refused.to_string()));
            return;
        }
    };
    let _ = stream.set_write_timeout(Some(RESPONSE_WRITE_TIMEOUT));
    if send(&mut stream, &Response::Owned) {
        owner_channel(shared, &mut stream, generation);
    }
    shared.ownership().disconnect(generation);
    shared.notify();
}

/// The owner channel: `prepare_handoff` and `shutdown`, until it closes or is superseded.
fn owner_channel(shared: &Shared, stream: &mut UnixStream, generation: u64) {
    loop {
        let envelope = read_envelope(shared, stream, true);
        if !shared.ownership().is_owner(generation) {
            if !matches!(envelope, Envelope::Closed) {
                send(stream, &error("owner connection has been superseded"));
            }
            return;
        }
        let request = match envelope {
            Envelope::Request(request) => request,
            Envelope::Answered { keep: true } => continue,
            Envelope::Answered { keep: false } | Envelope::Closed => return,
        };
        match request {
            Request::PrepareHandoff => {
                let prepared = shared.ownership().prepare(generation, Instant::now(), crate::now_ms(), random_hex);
                shared.notify();
                let response = match prepared {
                    Ok(handoff) => Response::Handoff { ticket: handoff.ticket, expires_at: handoff.expires_at },
                    Err(refused) => error(refused.to_string()),
                };
                if !send(stream, &response) {
                    return;
                }
            }
            Request::Shutdown => {
                send(stream, &Response::Ok);
                if shared.ownership().is_owner(generation) {
                    shared.stop();
                }
                return;
            }
            _ => {
                if !send(stream, &error("owner connection only accepts prepare_handoff or shutdown")) {
                    return;
                }
            }
        }
    }
}

/// 32 lowercase hex characters from a random 128-bit value.
pub fn random_hex() -> String {
    format!("{:032x}", rand::random::<u128>())
}

//! The typed values the client returns: one struct per response that carries more than a process, with base64
//! members already decoded, and the [`Event`]s a subscription yields. Each is built from the generated
//! [`Response`] by a `from_response` that turns `error` into [`ClientError::Daemon`] and any other type into
//! [`ClientError::Unexpected`].
//!
//! The generated responses are variants of one enum, so they cannot be returned as types of their own; these
//! structs are their named counterparts. Each `from_response` names every member of its variant, never `..`, so
//! a member the schema adds, removes or renames stops this module from compiling until the struct follows.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use opencode_pty_protocol::{ProcessInfo, Response, Role};

use crate::conn::refuse;
use crate::error::ClientError;

/// The answer to `ping`: who the daemon is and what it speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pong {
    /// The daemon's instance id, as in its registration.
    pub instance_id: String,
    /// The daemon's process id.
    pub pid: u32,
    /// The protocol version the daemon speaks.
    pub protocol: u32,
    /// The additive capabilities the daemon has beyond its protocol version.
    pub features: Vec<String>,
}

/// The answer to `snapshot`: the visible screen as text and as a VT checkpoint, and the cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The process info, captured in the same step as the screen.
    pub process: ProcessInfo,
    /// The plain text of the visible screen, one line per row.
    pub text: String,
    /// The VT checkpoint, decoded: written into a fresh terminal of the same size, it rebuilds the screen.
    pub checkpoint: Vec<u8>,
    /// The cursor column, zero-based.
    pub cursor_x: u16,
    /// The cursor row within the visible screen, zero-based.
    pub cursor_y: u16,
}

/// The answer to `read_rows`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    /// The process info, captured in the same step as the rows.
    pub process: ProcessInfo,
    /// One string per physical row, oldest first.
    pub lines: Vec<String>,
    /// The cursor column, zero-based.
    pub cursor_x: u16,
    /// The cursor row within the active area (not the returned rows), zero-based.
    pub cursor_y: u16,
}

/// The answer to `replay`: the kept output from the requested offset (or the oldest kept one) to the tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The offset the request asked for.
    pub requested_offset: u64,
    /// Where `bytes` start: the requested offset, or the oldest kept offset when the request reached further.
    pub available_offset: u64,
    /// The offset just past `bytes`.
    pub end_offset: u64,
    /// True when bytes from `requested_offset` to `available_offset` are lost.
    pub truncated: bool,
    /// The output bytes, decoded.
    pub bytes: Vec<u8>,
}

/// The first frame of a subscription: the process, the role obtained and the replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Attached {
    /// The process info, captured in the same step as the replay.
    pub process: ProcessInfo,
    /// The role this attachment has now.
    pub role: Role,
    /// The terminal's controller generation after attaching.
    pub generation: u64,
    /// The offset the request asked for.
    pub requested_offset: u64,
    /// Where `replay` starts.
    pub available_offset: u64,
    /// The offset just past `replay`, where live output continues.
    pub end_offset: u64,
    /// True when bytes from `requested_offset` to `available_offset` are lost.
    pub truncated: bool,
    /// The replayed output, decoded.
    pub replay: Vec<u8>,
}

/// How a process ended: the answer to `wait`, and the last event of a subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exited {
    /// The exit status, or `None` when a signal killed the process.
    pub exit_code: Option<u32>,
    /// The name of the signal that killed the process, such as `SIGTERM`.
    pub signal: Option<String>,
    /// The output tail at exit.
    pub final_offset: u64,
    /// Pipe processes only: how many newline bytes went to the output file.
    pub output_lines: Option<u64>,
    /// Pipe processes only: why writing the output file stopped, if it did.
    pub output_error: Option<String>,
    /// When the exit became final, in milliseconds since the Unix epoch.
    pub exited_at: u64,
}

/// The answer to `prepare_handoff`: what a replacement server passes to `own`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// The secret to pass as `own`'s ticket.
    pub ticket: String,
    /// When the ticket stops being accepted, in milliseconds since the Unix epoch.
    pub expires_at: u64,
}

/// What a [`Subscription`](crate::Subscription) yields after `attached`.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A chunk of live output; it starts where the previous chunk (or the replay) ended.
    Output {
        /// The offset of the first byte.
        start: u64,
        /// The raw bytes.
        bytes: Vec<u8>,
    },
    /// An event: [`Response::Resized`], [`Response::ControllerChanged`], [`Response::TitleChanged`],
    /// [`Response::ForegroundProcessChanged`] or, last, [`Response::Exited`]. Boxed, so that the frequent
    /// output chunks stay small.
    Message(Box<Response>),
}

/// The `type` tag of a response, as on the wire.
pub fn response_type(response: &Response) -> &'static str {
    match response {
        Response::Pong { .. } => "pong",
        Response::Owned => "owned",
        Response::Handoff { .. } => "handoff",
        Response::Created { .. } => "created",
        Response::Processes { .. } => "processes",
        Response::Process { .. } => "process",
        Response::Ok => "ok",
        Response::Error { .. } => "error",
        Response::Snapshot { .. } => "snapshot",
        Response::Rows { .. } => "rows",
        Response::Replay { .. } => "replay",
        Response::Attached { .. } => "attached",
        Response::Resized { .. } => "resized",
        Response::ControllerChanged { .. } => "controller_changed",
        Response::TitleChanged { .. } => "title_changed",
        Response::ForegroundProcessChanged { .. } => "foreground_process_changed",
        Response::Exited { .. } => "exited",
    }
}

/// Decodes a standard, padded base64 member; `member` names it in the error.
pub(crate) fn decode_base64(member: &str, text: &str) -> Result<Vec<u8>, ClientError> {
    STANDARD.decode(text).map_err(|e| ClientError::Protocol(format!("`{member}` is not valid base64: {e}")))
}

/// Encodes bytes as standard, padded base64 for a `data_base64` member.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

impl Pong {
    /// Reads a `pong`.
    pub(crate) fn from_response(response: Response) -> Result<Pong, ClientError> {
        match response {
            Response::Pong { instance_id, pid, protocol, features } => {
                Ok(Pong { instance_id, pid, protocol, features })
            }
            other => Err(refuse("pong", other)),
        }
    }
}

impl Snapshot {
    /// Reads a `snapshot`, decoding its checkpoint.
    pub(crate) fn from_response(response: Response) -> Result<Snapshot, ClientError> {
        match response {
            Response::Snapshot { checkpoint_base64, cursor_x, cursor_y, process, text } => Ok(Snapshot {
                process,
                text,
                checkpoint: decode_base64("checkpoint_base64", &checkpoint_base64)?,
                cursor_x,
                cursor_y,
            }),
            other => Err(refuse("snapshot", other)),
        }
    }
}

impl Rows {
    /// Reads a `rows`.
    pub(crate) fn from_response(response: Response) -> Result<Rows, ClientError> {
        match response {
            Response::Rows { cursor_x, cursor_y, lines, process } => Ok(Rows { process, lines, cursor_x, cursor_y }),
            other => Err(refuse("rows", other)),
        }
    }
}

impl Replay {
    /// Reads a `replay`, decoding its bytes.
    pub(crate) fn from_response(response: Response) -> Result<Replay, ClientError> {
        match response {
            Response::Replay { available_offset, data_base64, end_offset, requested_offset, truncated } => Ok(Replay {
                requested_offset,
                available_offset,
                end_offset,
                truncated,
                bytes: decode_base64("data_base64", &data_base64)?,
            }),
            other => Err(refuse("replay", other)),
        }
    }
}

impl Attached {
    /// Reads an `attached`, decoding its replay.
    pub(crate) fn from_response(response: Response) -> Result<Attached, ClientError> {
        match response {
            Response::Attached {
                available_offset,
                end_offset,
                generation,
                process,
                replay_base64,
                requested_offset,
                role,
                truncated,
            } => Ok(Attached {
                process,
                role,
                generation,
                requested_offset,
                available_offset,
                end_offset,
                truncated,
                replay: decode_base64("replay_base64", &replay_base64)?,
            }),
            other => Err(refuse("attached", other)),
        }
    }
}

impl Exited {
    /// Reads an `exited`.
    pub(crate) fn from_response(response: Response) -> Result<Exited, ClientError> {
        match response {
            Response::Exited { exit_code, exited_at, final_offset, output_error, output_lines, signal } => {
                Ok(Exited { exit_code, signal, final_offset, output_lines, output_error, exited_at })
            }
            other => Err(refuse("exited", other)),
        }
    }
}

impl Handoff {
    /// Reads a `handoff`.
    pub(crate) fn from_response(response: Response) -> Result<Handoff, ClientError> {
        match response {
            Response::Handoff { expires_at, ticket } => Ok(Handoff { ticket, expires_at }),
            other => Err(refuse("handoff", other)),
        }
    }
}

/// Reads an `ok`.
pub(crate) fn expect_ok(response: Response) -> Result<(), ClientError> {
    match response {
        Response::Ok => Ok(()),
        other => Err(refuse("ok", other)),
    }
}

#[cfg(test)]
mod tests {
    use opencode_pty_protocol::RESPONSE_TYPES;

    use super::*;

    #[test]
    fn base64_is_standard_with_padding() {
        assert_eq!(encode_base64(b"hi"), "aGk=");
        assert_eq!(decode_base64("data_base64", "aGk=").expect("decodes"), b"hi");
        let error = decode_base64("data_base64", "aGk").unwrap_err().to_string();
        assert!(error.starts_with("the daemon broke the protocol: `data_base64` is not valid base64"), "{error}");
    }

    #[test]
    fn every_response_type_is_named_as_on_the_wire() {
        let samples = [
            Response::Owned,
            Response::Ok,
            Response::Error { message: String::new() },
            Response::TitleChanged { title: String::new() },
            Response::Handoff { expires_at: 0, ticket: String::new() },
        ];
        for sample in samples {
            let wire = serde_json::to_value(&sample).expect("encodes");
            assert_eq!(wire["type"], response_type(&sample));
            assert!(RESPONSE_TYPES.contains(&response_type(&sample)));
        }
    }

    #[test]
    fn typed_answers_refuse_other_types() {
        assert_eq!(
            Handoff::from_response(Response::Handoff { expires_at: 5, ticket: "t".into() }).expect("handoff"),
            Handoff { ticket: "t".into(), expires_at: 5 }
        );
        assert!(matches!(Exited::from_response(Response::Ok), Err(ClientError::Unexpected { expected: "exited", .. })));
        assert!(expect_ok(Response::Ok).is_ok());
        assert!(matches!(expect_ok(Response::Error { message: "x".into() }), Err(ClientError::Daemon { .. })));
    }
}

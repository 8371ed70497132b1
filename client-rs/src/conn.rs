//! One framed connection to the daemon's Unix socket: building and sending request envelopes, and reading
//! frames and responses back.
//!
//! Reading goes through the protocol crate's [`FrameDecoder`]: bytes are read in chunks of at most
//! [`READ_CHUNK_BYTES`] and handed to the decoder, which checks a frame's declared length against
//! `MAX_FRAME_BYTES` as soon as its 4 header bytes are in, before any room is made for the payload. Because the
//! decoder keeps partial frames between calls, [`Connection::read_frame`] is cancel safe: dropping it loses no
//! bytes, so it can sit in a `select!` loop.

use std::fmt;

use opencode_pty_protocol::{Frame, FrameDecoder, Request, Response, encode_control};
use serde_json::{Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::error::ClientError;

/// How many bytes one read from the socket takes at most. Every connection holds one buffer of this size; a
/// larger frame simply takes several reads.
pub const READ_CHUNK_BYTES: usize = 64 * 1024;

/// A connected socket with its frame decoder.
pub(crate) struct Connection {
    /// The socket.
    stream: UnixStream,
    /// Bytes read but not yet returned as frames.
    decoder: FrameDecoder,
    /// The read buffer, [`READ_CHUNK_BYTES`] long.
    chunk: Box<[u8]>,
    /// The socket path, for error messages.
    socket: String,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection").field("socket", &self.socket).field("buffered", &self.decoder.buffered()).finish()
    }
}

impl Connection {
    /// Connects to the daemon's socket.
    pub(crate) async fn connect(socket: &str) -> Result<Connection, ClientError> {
        let stream =
            UnixStream::connect(socket).await.map_err(|e| ClientError::io(format!("cannot connect to {socket}"), e))?;
        Ok(Connection {
            stream,
            decoder: FrameDecoder::new(),
            chunk: vec![0; READ_CHUNK_BYTES].into_boxed_slice(),
            socket: socket.to_owned(),
        })
    }

    /// Sends one envelope as a control frame. A frame over `MAX_FRAME_BYTES` is refused before anything is
    /// written.
    pub(crate) async fn send(&mut self, envelope: &Map<String, Value>) -> Result<(), ClientError> {
        let frame = encode_control(envelope)?;
        self.stream
            .write_all(&frame)
            .await
            .map_err(|e| ClientError::io(format!("cannot send a request to {}", self.socket), e))
    }

    /// Reads the next frame; `Ok(None)` when the daemon closed the connection between frames. Cancel safe.
    pub(crate) async fn read_frame(&mut self) -> Result<Option<Frame>, ClientError> {
        loop {
            if let Some(frame) = self.decoder.next_frame()? {
                return Ok(Some(frame));
            }
            let read = self
                .stream
                .read(&mut self.chunk)
                .await
                .map_err(|e| ClientError::io(format!("cannot read from {}", self.socket), e))?;
            if read == 0 {
                return Ok(self.decoder.decode_eof()?);
            }
            self.decoder.push(&self.chunk[..read]);
        }
    }

    /// Reads one response: a control frame decoded as a [`Response`]. An end of stream before it is
    /// [`ClientError::Closed`]; an output frame is a protocol error, since only subscriptions carry them and
    /// [`crate::Subscription`] reads its frames itself. Cancel safe.
    pub(crate) async fn read_response(&mut self) -> Result<Response, ClientError> {
        match self.read_frame().await? {
            None => Err(ClientError::Closed),
            Some(Frame::Control(map)) => decode_response(map),
            Some(Frame::Output { start, bytes }) => Err(ClientError::Protocol(format!(
                "an output frame ({} bytes from offset {start}) arrived outside a subscription",
                bytes.len()
            ))),
        }
    }

    /// Closes the writing half, telling the daemon this side is done, then drops the connection.
    pub(crate) async fn close(mut self) -> Result<(), ClientError> {
        self.stream.shutdown().await.map_err(|e| ClientError::io(format!("cannot close {}", self.socket), e))
    }
}

/// Decodes a control frame as a response or event.
pub(crate) fn decode_response(map: Map<String, Value>) -> Result<Response, ClientError> {
    let kind = match map.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(_) => return Err(ClientError::Protocol("a control frame's `type` is not a string".into())),
        None => return Err(ClientError::Protocol("a control frame has no `type`".into())),
    };
    serde_json::from_value(Value::Object(map))
        .map_err(|e| ClientError::Protocol(format!("cannot decode a `{kind}` response: {e}")))
}

/// Serializes a request to the JSON object that goes in an envelope's `request` member.
pub(crate) fn request_value(request: &Request) -> Result<Value, ClientError> {
    serde_json::to_value(request).map_err(ClientError::Encode)
}

/// Builds the envelope `{"token": ..., "request": ...}` (SPEC E1).
pub(crate) fn envelope(token: &str, request: Value) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("token".into(), Value::String(token.to_owned()));
    map.insert("request".into(), request);
    map
}

/// Names an envelope's request for error messages: `<op> request`, or `request` when it has no string `op`.
pub(crate) fn describe(envelope: &Map<String, Value>) -> String {
    match envelope.get("request").and_then(|request| request.get("op")).and_then(Value::as_str) {
        Some(op) => format!("{op} request"),
        None => "request".to_owned(),
    }
}

/// Checks that a response has the expected type; an `error` becomes [`ClientError::Daemon`].
pub(crate) fn refuse(expected: &'static str, response: Response) -> ClientError {
    match response {
        Response::Error { message } => ClientError::Daemon { message },
        other => ClientError::Unexpected { expected, got: other.type_tag().to_owned() },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_envelope_carries_the_token_and_the_request() {
        let request = request_value(&Request::Get { features: Vec::new(), id: 7 }).expect("encodes");
        let built = envelope("secret", request);
        assert_eq!(Value::Object(built.clone()), json!({"token": "secret", "request": {"op": "get", "id": 7}}));
        assert_eq!(describe(&built), "get request");
        assert_eq!(describe(&envelope("secret", json!(3))), "request");
    }

    #[test]
    fn responses_decode_by_type() {
        let Value::Object(map) = json!({"type": "ok", "extra": 1}) else { unreachable!() };
        assert_eq!(decode_response(map).expect("decodes"), Response::Ok);
        let Value::Object(map) = json!({"type": "handoff", "ticket": "t"}) else { unreachable!() };
        let error = decode_response(map).unwrap_err().to_string();
        assert_eq!(
            error,
            "the daemon broke the protocol: cannot decode a `handoff` response: missing field `expires_at`"
        );
        let Value::Object(map) = json!({"message": "x"}) else { unreachable!() };
        assert!(matches!(decode_response(map), Err(ClientError::Protocol(_))));
    }

    #[test]
    fn a_wrong_answer_is_refused_by_kind() {
        let error = refuse("pong", Response::Error { message: "no".into() });
        assert!(matches!(error, ClientError::Daemon { message } if message == "no"));
        let error = refuse("pong", Response::Ok);
        assert!(matches!(error, ClientError::Unexpected { expected: "pong", got } if got == "ok"));
    }
}

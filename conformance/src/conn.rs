//! One client connection to a daemon under test: frames sent as JSON, text or raw bytes, and frames received
//! with a deadline, output kept as a contiguous byte stream so an expectation does not depend on how the
//! daemon split or coalesced its output frames.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use opencode_pty_protocol::{Frame, FrameDecoder, FrameError, encode_control_json};
use serde_json::Value;

/// How much is read from the socket at once.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Why a connection failed. The operating system's error is part of the text, not also a `source()`, so that a
/// chain printed whole says it once.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnError {
    #[error("cannot connect to {socket}: {cause}")]
    Connect { socket: String, cause: std::io::Error },
    #[error("cannot encode the frame: {0}")]
    Encode(FrameError),
    #[error("send failed: {0}")]
    Send(std::io::Error),
    #[error("shutdown failed: {0}")]
    Shutdown(std::io::Error),
    #[error("the daemon sent a malformed frame: {0}")]
    Malformed(FrameError),
    /// The read deadline could not be set on the socket.
    #[error("{0}")]
    Deadline(std::io::Error),
    #[error("read failed: {0}")]
    Read(std::io::Error),
}

/// What arrived on a connection.
#[derive(Debug)]
pub(crate) enum Received {
    Control(Value),
    Output { start: u64, bytes: Vec<u8> },
    Eof,
}

impl std::fmt::Display for Received {
    /// What arrived, in words, for a message saying it was not what was expected.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Received::Control(value) => write!(f, "the control frame {value}"),
            Received::Output { start, bytes } => write!(f, "output at {start}: {}", show(bytes)),
            Received::Eof => f.write_str("the end of the stream"),
        }
    }
}

/// Bytes as text when they are UTF-8, else as hex.
pub(crate) fn show(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => format!("{text:?}"),
        Err(_) => format!("hex {}", encode_hex(bytes)),
    }
}

/// Bytes as lowercase hex digits.
pub(crate) fn encode_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A connection and what was received on it but not yet expected.
#[derive(Debug)]
pub(crate) struct Conn {
    stream: UnixStream,
    decoder: FrameDecoder,
    eof: bool,
    /// Output received beyond what the last output expectation took: its start offset and bytes.
    pub pending_output: Option<(u64, Vec<u8>)>,
    /// Where the last output frame on this connection ended, for the contiguity check.
    pub output_end: Option<u64>,
}

impl Conn {
    pub(crate) fn connect(socket: &str) -> Result<Conn, ConnError> {
        let stream =
            UnixStream::connect(socket).map_err(|cause| ConnError::Connect { socket: socket.to_owned(), cause })?;
        Ok(Conn { stream, decoder: FrameDecoder::new(), eof: false, pending_output: None, output_end: None })
    }

    /// Sends a control frame whose payload is `json` (compact text of one object).
    pub(crate) fn send_json(&mut self, json: &[u8]) -> Result<(), ConnError> {
        let frame = encode_control_json(json).map_err(ConnError::Encode)?;
        self.send_raw(&frame)
    }

    /// Sends bytes as they are, headers included.
    pub(crate) fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ConnError> {
        // A daemon that already closed the connection is not a send failure: the next expectation reports it.
        match self.stream.write_all(bytes) {
            Ok(()) => Ok(()),
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => Ok(()),
            Err(e) => Err(ConnError::Send(e)),
        }
    }

    /// Shuts down the sending half: the daemon reads the end of the stream.
    pub(crate) fn close_write(&mut self) -> Result<(), ConnError> {
        self.stream.shutdown(std::net::Shutdown::Write).map_err(ConnError::Shutdown)
    }

    /// The next frame, the end of the stream, or `None` when nothing arrived before `deadline`. A framing
    /// error from the daemon is an error.
    pub(crate) fn receive(&mut self, deadline: Instant) -> Result<Option<Received>, ConnError> {
        let mut chunk = vec![0u8; READ_CHUNK_BYTES];
        loop {
            let decoded = if self.eof { self.decoder.decode_eof() } else { self.decoder.next_frame() };
            match decoded.map_err(ConnError::Malformed)? {
                Some(Frame::Control(map)) => return Ok(Some(Received::Control(Value::Object(map)))),
                Some(Frame::Output { start, bytes }) => return Ok(Some(Received::Output { start, bytes })),
                None if self.eof => return Ok(Some(Received::Eof)),
                None => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.stream.set_read_timeout(Some(left.max(Duration::from_millis(1)))).map_err(ConnError::Deadline)?;
            match self.stream.read(&mut chunk) {
                Ok(0) => self.eof = true,
                Ok(n) => self.decoder.push(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return Ok(None),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => self.eof = true,
                Err(e) => return Err(ConnError::Read(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_received_is_described_as_before() {
        assert_eq!(
            Received::Control(serde_json::json!({"type": "ok"})).to_string(),
            "the control frame {\"type\":\"ok\"}"
        );
        assert_eq!(Received::Output { start: 4, bytes: b"a\n".to_vec() }.to_string(), "output at 4: \"a\\n\"");
        assert_eq!(Received::Output { start: 0, bytes: vec![0xc3] }.to_string(), "output at 0: hex c3");
        assert_eq!(Received::Eof.to_string(), "the end of the stream");
        let error = Conn::connect("/nonexistent/socket").unwrap_err().to_string();
        assert!(error.starts_with("cannot connect to /nonexistent/socket: "), "{error}");
    }
}

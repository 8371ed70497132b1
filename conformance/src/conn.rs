//! One client connection to a daemon under test: frames sent as JSON, text or raw bytes, and frames received
//! with a deadline, output kept as a contiguous byte stream so an expectation does not depend on how the
//! daemon split or coalesced its output frames.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use opencode_pty_protocol::{Frame, FrameDecoder, encode_control_json};
use serde_json::Value;

/// How much is read from the socket at once.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// What arrived on a connection.
#[derive(Debug)]
pub enum Received {
    Control(Value),
    Output { start: u64, bytes: Vec<u8> },
    Eof,
}

/// A connection and what was received on it but not yet expected.
#[derive(Debug)]
pub struct Conn {
    stream: UnixStream,
    decoder: FrameDecoder,
    eof: bool,
    /// Output received beyond what the last output expectation took: its start offset and bytes.
    pub pending_output: Option<(u64, Vec<u8>)>,
    /// Where the last output frame on this connection ended, for the contiguity check.
    pub output_end: Option<u64>,
}

impl Conn {
    pub fn connect(socket: &str) -> Result<Conn, String> {
        let stream = UnixStream::connect(socket).map_err(|e| format!("cannot connect to {socket}: {e}"))?;
        Ok(Conn { stream, decoder: FrameDecoder::new(), eof: false, pending_output: None, output_end: None })
    }

    /// Sends a control frame whose payload is `json` (compact text of one object).
    pub fn send_json(&mut self, json: &[u8]) -> Result<(), String> {
        let frame = encode_control_json(json).map_err(|e| format!("cannot encode the frame: {e}"))?;
        self.send_raw(&frame)
    }

    /// Sends bytes as they are, headers included.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        // A daemon that already closed the connection is not a send failure: the next expectation reports it.
        match self.stream.write_all(bytes) {
            Ok(()) => Ok(()),
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => Ok(()),
            Err(e) => Err(format!("send failed: {e}")),
        }
    }

    /// Shuts down the sending half: the daemon reads the end of the stream.
    pub fn close_write(&mut self) -> Result<(), String> {
        self.stream.shutdown(std::net::Shutdown::Write).map_err(|e| format!("shutdown failed: {e}"))
    }

    /// The next frame, the end of the stream, or `None` when nothing arrived before `deadline`. A framing
    /// error from the daemon is an error.
    pub fn receive(&mut self, deadline: Instant) -> Result<Option<Received>, String> {
        let mut chunk = vec![0u8; READ_CHUNK_BYTES];
        loop {
            let decoded = if self.eof { self.decoder.decode_eof() } else { self.decoder.next_frame() };
            match decoded.map_err(|e| format!("the daemon sent a malformed frame: {e}"))? {
                Some(Frame::Control(map)) => return Ok(Some(Received::Control(Value::Object(map)))),
                Some(Frame::Output { start, bytes }) => return Ok(Some(Received::Output { start, bytes })),
                None if self.eof => return Ok(Some(Received::Eof)),
                None => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.stream.set_read_timeout(Some(left.max(Duration::from_millis(1)))).map_err(|e| e.to_string())?;
            match self.stream.read(&mut chunk) {
                Ok(0) => self.eof = true,
                Ok(n) => self.decoder.push(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return Ok(None),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => self.eof = true,
                Err(e) => return Err(format!("read failed: {e}")),
            }
        }
    }
}

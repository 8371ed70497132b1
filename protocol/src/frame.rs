//! The frame codec: how control and output frames are laid out on the wire, encoded, and decoded from a stream.
//!
//! # Wire format
//!
//! A frame is a 4-byte big-endian payload length, then the payload, which is at most
//! [`MAX_FRAME_BYTES`] long. The first payload byte tells the two kinds apart:
//!
//! * [`OUTPUT_TAG`] (0x00): an output frame. The tag is followed by the start offset and the end offset of the
//!   chunk in the terminal's output stream, both big-endian `u64`, then exactly `end - start` raw bytes.
//! * anything else: a control frame, whose whole payload is one UTF-8 JSON object (the encoder always writes it
//!   compactly, so its first byte is `{`; the decoder accepts any text that parses as a JSON object).
//!
//! # Representation
//!
//! A decoded control frame is kept as the parsed [`serde_json::Map`]: checking that the payload is an object
//! needs a full parse anyway, the `"type"` field can be looked up directly to dispatch, and the map is itself a
//! serde `Deserializer`, so `T::deserialize(map)` turns it into a typed message without parsing the text again.
//!
//! # Decoding
//!
//! [`FrameDecoder`] takes bytes in chunks of any size and yields whole frames; [`read_frame`] reads one frame
//! from a blocking reader. Both check a declared length against the limit as soon as the header is complete,
//! before any room is made for the payload.

use std::io::{self, Read, Write};

use serde_json::{Map, Value};

use crate::{FrameError, MAX_FRAME_BYTES};

/// Length of the frame header: the payload length as a big-endian `u32`.
pub const FRAME_HEADER_BYTES: usize = 4;

/// First payload byte of an output frame. Any other first byte means a JSON control frame.
pub const OUTPUT_TAG: u8 = 0x00;

/// Length of the fixed part of an output payload: the tag, the start offset and the end offset.
pub const OUTPUT_PREFIX_BYTES: usize = 1 + 8 + 8;

/// The most raw bytes one output frame can carry: [`MAX_FRAME_BYTES`] minus the tag and the offsets.
pub const MAX_OUTPUT_BYTES: usize = MAX_FRAME_BYTES - OUTPUT_PREFIX_BYTES;

/// The buffer of an idle [`FrameDecoder`] is shrunk back to this capacity after a larger frame went through.
const IDLE_BUFFER_CAPACITY: usize = 64 * 1024;

/// One decoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A control frame: one JSON object (see the module documentation for why it is kept parsed).
    Control(Map<String, Value>),
    /// An output frame: a chunk of the terminal's output stream.
    Output {
        /// Offset of the first byte of `bytes` in the output stream. The end offset on the wire is
        /// `start + bytes.len()`.
        start: u64,
        /// The raw output bytes.
        bytes: Vec<u8>,
    },
}

/// Decodes one payload (the bytes after the 4-byte length header) into a frame.
///
/// # Errors
///
/// [`FrameError::EmptyPayload`] for an empty payload; for an output payload, [`FrameError::OutputTooShort`],
/// [`FrameError::OutputEndBeforeStart`] or [`FrameError::OutputLengthMismatch`]; for a control payload,
/// [`FrameError::ControlNotUtf8`], [`FrameError::ControlNotJson`] or [`FrameError::ControlNotObject`].
pub fn decode_payload(payload: &[u8]) -> Result<Frame, FrameError> {
    match payload.first() {
        None => Err(FrameError::EmptyPayload),
        Some(&OUTPUT_TAG) => decode_output(payload),
        Some(_) => decode_control(payload).map(Frame::Control),
    }
}

/// Decodes an output payload, tag included.
fn decode_output(payload: &[u8]) -> Result<Frame, FrameError> {
    let len = payload.len();
    let (Some(prefix), Some(bytes)) =
        (payload.first_chunk::<OUTPUT_PREFIX_BYTES>(), payload.get(OUTPUT_PREFIX_BYTES..))
    else {
        return Err(FrameError::OutputTooShort { len });
    };
    let mut start = [0; 8];
    let mut end = [0; 8];
    start.copy_from_slice(&prefix[1..9]);
    end.copy_from_slice(&prefix[9..17]);
    let (start, end) = (u64::from_be_bytes(start), u64::from_be_bytes(end));
    let Some(span) = end.checked_sub(start) else {
        return Err(FrameError::OutputEndBeforeStart { start, end });
    };
    if u64::try_from(bytes.len()) != Ok(span) {
        return Err(FrameError::OutputLengthMismatch { start, end, len: bytes.len() });
    }
    Ok(Frame::Output { start, bytes: bytes.to_vec() })
}

/// Checks that a control payload is UTF-8 text holding one JSON object without the reserved member name
/// ([`crate::RESERVED_MEMBER`], which a JSON tree would reinterpret), and returns that object.
fn decode_control(payload: &[u8]) -> Result<Map<String, Value>, FrameError> {
    let len = payload.len();
    let text =
        std::str::from_utf8(payload).map_err(|e| FrameError::ControlNotUtf8 { len, valid_up_to: e.valid_up_to() })?;
    crate::unique::validate(text).map_err(|source| FrameError::ControlNotJson { len, source })?;
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(FrameError::ControlNotObject { len, found: json_kind(&other) }),
        Err(source) => Err(FrameError::ControlNotJson { len, source }),
    }
}

/// Names the kind of a JSON value for error messages.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Reads the payload length from a header and checks it against the limit.
fn payload_len(header: [u8; FRAME_HEADER_BYTES]) -> Result<usize, FrameError> {
    let declared = u32::from_be_bytes(header);
    match usize::try_from(declared) {
        Ok(len) if len <= MAX_FRAME_BYTES => Ok(len),
        _ => Err(FrameError::FrameTooLarge { declared }),
    }
}

/// Builds the header for a payload length already checked against [`MAX_FRAME_BYTES`].
fn header(len: usize) -> [u8; FRAME_HEADER_BYTES] {
    debug_assert!(len <= MAX_FRAME_BYTES);
    u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes()
}

/// Encodes a control frame (header and compact JSON payload).
///
/// # Errors
///
/// [`FrameError::PayloadTooLarge`] if the JSON text is longer than [`MAX_FRAME_BYTES`].
pub fn encode_control(map: &Map<String, Value>) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::new();
    encode_control_into(&mut out, map)?;
    Ok(out)
}

/// Appends a control frame (header and compact JSON payload) to `out`.
///
/// The JSON length is only known once it is written, so the text is written straight after a placeholder
/// header, and once it passes [`MAX_FRAME_BYTES`] the rest is only counted, not stored: `out` never grows by
/// more than the limit plus the header.
///
/// # Errors
///
/// [`FrameError::PayloadTooLarge`] if the JSON text is longer than [`MAX_FRAME_BYTES`]; `out` is then left as it
/// was.
pub fn encode_control_into(out: &mut Vec<u8>, map: &Map<String, Value>) -> Result<(), FrameError> {
    encode_serialized_into(out, map)
}

/// Encodes a control frame of a message the protocol's types describe (a `Request` or a `Response`), written
/// straight from the value: no JSON tree is built first, which for a `list` of a thousand processes took four
/// times as long as the text itself (issue 31). Its members come in the type's order (the tag first) rather
/// than sorted, which JSON does not care about.
///
/// # Errors
///
/// [`FrameError::PayloadTooLarge`] if the JSON text is longer than [`MAX_FRAME_BYTES`]; [`FrameError::Io`] if
/// the value cannot be serialized (a map with keys that are not strings; no generated type has one).
pub fn encode_message<T: serde::Serialize>(message: &T) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::new();
    encode_serialized_into(&mut out, message)?;
    Ok(out)
}

/// Appends a control frame of whatever `value` serializes to; see [`encode_control_into`].
fn encode_serialized_into<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), FrameError> {
    let frame_start = out.len();
    out.extend_from_slice(&[0; FRAME_HEADER_BYTES]);
    let mut writer = CappedWriter { out, len: 0 };
    let written = serde_json::to_writer(&mut writer, value);
    let len = writer.len;
    let failure = match written {
        // Serializing a map of JSON values into a writer that never fails cannot fail; stay safe anyway.
        Err(e) => Some(FrameError::Io(e.into())),
        Ok(()) if len > MAX_FRAME_BYTES => Some(FrameError::PayloadTooLarge { len }),
        Ok(()) => None,
    };
    if let Some(error) = failure {
        out.truncate(frame_start);
        return Err(error);
    }
    out[frame_start..frame_start + FRAME_HEADER_BYTES].copy_from_slice(&header(len));
    Ok(())
}

/// Appends to a vector up to [`MAX_FRAME_BYTES`] bytes, and only counts the rest.
struct CappedWriter<'a> {
    /// Where the payload goes.
    out: &'a mut Vec<u8>,
    /// Payload bytes written so far, stored or not.
    len: usize,
}

impl Write for CappedWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.len = self.len.saturating_add(buf.len());
        if self.len <= MAX_FRAME_BYTES {
            self.out.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Encodes a control frame from JSON text that is already serialized, after checking it is one JSON object.
///
/// # Errors
///
/// [`FrameError::PayloadTooLarge`] if `json` is longer than [`MAX_FRAME_BYTES`] (checked first), or the error
/// [`decode_payload`] would report for a control payload that is not UTF-8 text holding a JSON object.
pub fn encode_control_json(json: &[u8]) -> Result<Vec<u8>, FrameError> {
    if json.len() > MAX_FRAME_BYTES {
        return Err(FrameError::PayloadTooLarge { len: json.len() });
    }
    if json.is_empty() {
        return Err(FrameError::EmptyPayload);
    }
    decode_control(json)?;
    let mut out = Vec::with_capacity(FRAME_HEADER_BYTES + json.len());
    out.extend_from_slice(&header(json.len()));
    out.extend_from_slice(json);
    Ok(out)
}

/// Encodes an output frame carrying `bytes` from offset `start` of the output stream.
///
/// # Errors
///
/// [`FrameError::PayloadTooLarge`] if `bytes` is longer than [`MAX_OUTPUT_BYTES`], or
/// [`FrameError::OutputOffsetOverflow`] if `start + bytes.len()` does not fit in a `u64`.
pub fn encode_output(start: u64, bytes: &[u8]) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::new();
    encode_output_into(&mut out, start, bytes)?;
    Ok(out)
}

/// Appends an output frame carrying `bytes` from offset `start` of the output stream to `out`.
///
/// # Errors
///
/// As [`encode_output`]; both limits are checked before anything is allocated, and `out` is then left as it
/// was.
pub fn encode_output_into(out: &mut Vec<u8>, start: u64, bytes: &[u8]) -> Result<(), FrameError> {
    let len = bytes.len();
    if len > MAX_OUTPUT_BYTES {
        return Err(FrameError::PayloadTooLarge { len: len.saturating_add(OUTPUT_PREFIX_BYTES) });
    }
    let end = u64::try_from(len)
        .ok()
        .and_then(|n| start.checked_add(n))
        .ok_or(FrameError::OutputOffsetOverflow { start, len })?;
    out.reserve(FRAME_HEADER_BYTES + OUTPUT_PREFIX_BYTES + len);
    out.extend_from_slice(&header(OUTPUT_PREFIX_BYTES + len));
    out.push(OUTPUT_TAG);
    out.extend_from_slice(&start.to_be_bytes());
    out.extend_from_slice(&end.to_be_bytes());
    out.extend_from_slice(bytes);
    Ok(())
}

/// Encodes any frame; see [`encode_control`] and [`encode_output`].
///
/// # Errors
///
/// As [`encode_control`] or [`encode_output`].
pub fn encode_frame(frame: &Frame) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::new();
    encode_frame_into(&mut out, frame)?;
    Ok(out)
}

/// Appends any frame to `out`; see [`encode_control_into`] and [`encode_output_into`].
///
/// # Errors
///
/// As [`encode_control_into`] or [`encode_output_into`]; `out` is then left as it was.
pub fn encode_frame_into(out: &mut Vec<u8>, frame: &Frame) -> Result<(), FrameError> {
    match frame {
        Frame::Control(map) => encode_control_into(out, map),
        Frame::Output { start, bytes } => encode_output_into(out, *start, bytes),
    }
}

/// Splits a byte stream that arrives in chunks of any size into frames.
///
/// Feed it with [`push`](Self::push), then call [`next_frame`](Self::next_frame) until it returns `Ok(None)`.
/// When the stream ends, call [`decode_eof`](Self::decode_eof) instead, which also reports a frame cut short.
///
/// Consumed bytes are skipped by an offset; the unread tail is moved to the front only when it is no longer than
/// what was consumed, so each byte is moved a bounded number of times on average.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    /// Received bytes; those before `pos` are already decoded.
    buf: Vec<u8>,
    /// Start of the bytes not decoded yet.
    pos: usize,
}

impl FrameDecoder {
    /// Creates an empty decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends bytes received from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos >= self.buf.len() - self.pos {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Number of bytes received but not yet returned as part of a frame.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Returns the next complete frame, or `Ok(None)` if more bytes are needed.
    ///
    /// # Errors
    ///
    /// [`FrameError::FrameTooLarge`] as soon as a header over the limit is complete (the header stays buffered,
    /// so the error repeats); otherwise the errors of [`decode_payload`], after which the bad frame has been
    /// consumed.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        let pending = &self.buf[self.pos..];
        let Some(&header) = pending.first_chunk::<FRAME_HEADER_BYTES>() else {
            return Ok(None);
        };
        let total = FRAME_HEADER_BYTES + payload_len(header)?;
        let Some(payload) = pending.get(FRAME_HEADER_BYTES..total) else {
            return Ok(None);
        };
        let decoded = decode_payload(payload);
        self.pos += total;
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.buf.shrink_to(IDLE_BUFFER_CAPACITY);
            self.pos = 0;
        }
        decoded.map(Some)
    }

    /// Like [`next_frame`](Self::next_frame), for when the stream has ended: returns the complete frames still
    /// buffered one by one, then `Ok(None)` if no byte is left.
    ///
    /// # Errors
    ///
    /// Those of [`next_frame`](Self::next_frame), then [`FrameError::EofInHeader`] or
    /// [`FrameError::EofInPayload`] if the stream ended inside a frame.
    pub fn decode_eof(&mut self) -> Result<Option<Frame>, FrameError> {
        if let Some(frame) = self.next_frame()? {
            return Ok(Some(frame));
        }
        let pending = &self.buf[self.pos..];
        match pending.first_chunk::<FRAME_HEADER_BYTES>() {
            None if pending.is_empty() => Ok(None),
            None => Err(FrameError::EofInHeader { got: pending.len() }),
            Some(&header) => Err(FrameError::EofInPayload {
                got: pending.len() - FRAME_HEADER_BYTES,
                expected: payload_len(header)?,
            }),
        }
    }
}

/// Reads one frame from a blocking reader.
///
/// Returns `Ok(None)` if the stream ends cleanly before the first byte of a frame. The payload buffer grows as
/// bytes arrive rather than to the declared length up front.
///
/// # Errors
///
/// [`FrameError::Io`] if reading fails, [`FrameError::FrameTooLarge`] before the payload is read,
/// [`FrameError::EofInHeader`] or [`FrameError::EofInPayload`] if the stream ends inside the frame, and the
/// errors of [`decode_payload`].
pub fn read_frame<R: Read + ?Sized>(reader: &mut R) -> Result<Option<Frame>, FrameError> {
    match read_payload(reader)? {
        Some(payload) => decode_payload(&payload).map(Some),
        None => Ok(None),
    }
}

/// Reads one frame's payload from a blocking reader without decoding it (a server reads a request envelope from
/// it with [`crate::RequestEnvelope::parse`], which builds no JSON tree; [`decode_payload`] decodes any frame).
///
/// Returns `Ok(None)` if the stream ends cleanly before the first byte of a frame. The buffer grows as bytes
/// arrive rather than to the declared length up front.
///
/// # Errors
///
/// [`FrameError::Io`] if reading fails, [`FrameError::FrameTooLarge`] before the payload is read,
/// [`FrameError::EofInHeader`] or [`FrameError::EofInPayload`] if the stream ends inside the frame.
pub fn read_payload<R: Read + ?Sized>(reader: &mut R) -> Result<Option<Vec<u8>>, FrameError> {
    let mut header = [0; FRAME_HEADER_BYTES];
    let mut got = 0;
    while got < FRAME_HEADER_BYTES {
        match reader.read(&mut header[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    match got {
        0 => return Ok(None),
        FRAME_HEADER_BYTES => {}
        _ => return Err(FrameError::EofInHeader { got }),
    }
    let expected = payload_len(header)?;
    let mut payload = Vec::new();
    // `expected` is at most MAX_FRAME_BYTES, so it fits in a u64.
    let limit = u64::try_from(expected).unwrap_or(u64::MAX);
    let got = reader.take(limit).read_to_end(&mut payload)?;
    if got < expected {
        return Err(FrameError::EofInPayload { got, expected });
    }
    Ok(Some(payload))
}

/// Encodes one frame and writes it to a blocking writer. It does not flush.
///
/// # Errors
///
/// The errors of [`encode_frame`] (nothing is written then), or [`FrameError::Io`] if writing fails.
pub fn write_frame<W: Write + ?Sized>(writer: &mut W, frame: &Frame) -> Result<(), FrameError> {
    writer.write_all(&encode_frame(frame)?)?;
    Ok(())
}

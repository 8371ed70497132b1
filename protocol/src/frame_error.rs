//! The error type of the frame codec: every way a frame can fail to decode or encode.
//!
//! Each message is one English sentence that carries the numbers involved, so that a log line is enough to
//! tell what the peer sent.

use crate::MAX_FRAME_BYTES;
use crate::frame::{FRAME_HEADER_BYTES, OUTPUT_PREFIX_BYTES};

/// Why a frame could not be decoded, encoded, read or written.
///
/// After any decoding error the peer is broken and the connection should be dropped. The
/// [`FrameDecoder`](crate::FrameDecoder) consumes a whole frame before it checks its content, so after a content
/// error (every variant except [`FrameTooLarge`](Self::FrameTooLarge) and the EOF ones) it could go on with the
/// next frame; after [`FrameTooLarge`](Self::FrameTooLarge) it keeps the header and reports it again.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A frame header declares a payload longer than [`MAX_FRAME_BYTES`]. It is reported as soon as the 4 header
    /// bytes are available, before any room is made for the payload.
    #[error("frame claims {declared} bytes, the limit is {MAX_FRAME_BYTES}")]
    FrameTooLarge {
        /// The payload length the header declares.
        declared: u32,
    },

    /// The encoder was asked for a payload longer than [`MAX_FRAME_BYTES`]; nothing was produced.
    #[error("cannot encode a frame of {len} payload bytes, the limit is {MAX_FRAME_BYTES}")]
    PayloadTooLarge {
        /// The payload length the frame would have had (for an output frame, the raw bytes plus the
        /// 17-byte tag and offsets).
        len: usize,
    },

    /// A frame has an empty payload. The payload of a control frame is a JSON object, so it is never empty.
    #[error("frame has an empty payload, but a control frame must hold a JSON object")]
    EmptyPayload,

    /// An output frame (first payload byte 0x00) is too short to hold its tag and both offsets.
    #[error("output frame payload is {len} bytes, but its tag and two offsets alone take {OUTPUT_PREFIX_BYTES}")]
    OutputTooShort {
        /// The payload length of the frame, tag included.
        len: usize,
    },

    /// An output frame's end offset is smaller than its start offset.
    #[error("output frame ends at offset {end}, before its start offset {start}")]
    OutputEndBeforeStart {
        /// The start offset the frame declares.
        start: u64,
        /// The end offset the frame declares.
        end: u64,
    },

    /// An output frame's offsets span a different number of bytes than the frame carries.
    #[error("output frame covers offsets {start} to {end} but carries {len} bytes")]
    OutputLengthMismatch {
        /// The start offset the frame declares.
        start: u64,
        /// The end offset the frame declares; never smaller than `start`.
        end: u64,
        /// The number of raw bytes after the offsets.
        len: usize,
    },

    /// The encoder was asked for an output frame whose end offset (start plus byte count) does not fit in a u64.
    #[error("output frame starting at offset {start} with {len} bytes would end past offset {}", u64::MAX)]
    OutputOffsetOverflow {
        /// The requested start offset.
        start: u64,
        /// The number of raw bytes.
        len: usize,
    },

    /// A control frame's payload is not valid UTF-8.
    #[error("control frame of {len} bytes is not valid UTF-8: the first bad byte is at offset {valid_up_to}")]
    ControlNotUtf8 {
        /// The payload length.
        len: usize,
        /// How many leading bytes of the payload are valid UTF-8.
        valid_up_to: usize,
    },

    /// A control frame's payload is valid UTF-8 but not valid JSON.
    #[error("control frame of {len} bytes is not valid JSON: {source}")]
    ControlNotJson {
        /// The payload length.
        len: usize,
        /// What the JSON parser objected to, with line and column.
        source: serde_json::Error,
    },

    /// A control frame's payload is valid JSON, but not an object.
    #[error("control frame of {len} bytes is a JSON {found}, but it must be a JSON object")]
    ControlNotObject {
        /// The payload length.
        len: usize,
        /// The kind of JSON value found instead: "array", "string", "number", "boolean" or "null".
        found: &'static str,
    },

    /// The stream ended inside a frame header.
    #[error("stream ended after {got} of the {FRAME_HEADER_BYTES} bytes of a frame header")]
    EofInHeader {
        /// How many header bytes arrived (1 to 3).
        got: usize,
    },

    /// The stream ended inside a frame payload.
    #[error("stream ended after {got} of the {expected} payload bytes of a frame")]
    EofInPayload {
        /// How many payload bytes arrived.
        got: usize,
        /// The payload length the header declared.
        expected: usize,
    },

    /// Reading or writing the underlying stream failed.
    #[error("I/O error on the frame stream: {0}")]
    Io(#[from] std::io::Error),
}

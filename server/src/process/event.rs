//! What a process hands its subscribers and readers, PTY or pipe alike: [`Event`]s after `attached`, and
//! [`ReplayRead`], the answer to a replay read.

use std::sync::Arc;

use opencode_pty_protocol::Response;

/// What a subscriber receives after `attached`, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Raw output from `start` (a binary output frame on the wire).
    Output {
        /// The offset of the first byte.
        start: u64,
        /// The bytes; the next event starts at `start + bytes.len()`.
        bytes: Arc<[u8]>,
    },
    /// A JSON event: `attached` first, then `resized`, `controller_changed`, `title_changed`,
    /// `foreground_process_changed` and finally `exited`.
    Message(Arc<Response>),
}

/// The answer to a replay read: the kept bytes from the requested offset (or the oldest kept one) to the tail.
/// A pipe process keeps none, so its read is always empty, from the tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayRead {
    /// The offset the reader asked for.
    pub requested: u64,
    /// The offset `bytes` starts at: the requested one, or the oldest kept one when that is later.
    pub available: u64,
    /// The offset just past the last byte of `bytes` (the tail at the time of the read).
    pub end: u64,
    /// Whether output between `requested` and `available` was dropped from the buffer.
    pub truncated: bool,
    /// The raw output from `available` to `end`.
    pub bytes: Vec<u8>,
}

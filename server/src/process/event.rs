//! What a subscriber receives, encoded for the wire once and shared by every subscriber: an [`Output`] is
//! built as its binary frame when it is published, a [`Message`] encodes its JSON frame the first time any
//! subscriber's connection sends it (so the actor never spends its time serialising a large checkpoint), and
//! each subscriber's connection writes the same [`Bytes`] instead of encoding the event again.

use std::fmt;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use opencode_pty_protocol::{
    FRAME_HEADER_BYTES, FrameError, OUTPUT_PREFIX_BYTES, Response, encode_control, encode_message,
};

use super::delivery::Item;

/// Where an output frame's payload (the raw bytes) starts: after the frame header and the output prefix.
const OUTPUT_PAYLOAD_AT: usize = FRAME_HEADER_BYTES + OUTPUT_PREFIX_BYTES;

/// What a JSON event without a large member is counted as when held for a subscriber.
const SMALL_EVENT_BYTES: usize = 256;

/// What a subscriber receives after `attached`, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Raw output (a binary output frame on the wire).
    Output(Output),
    /// A JSON event: `attached` first, then `resized`, `controller_changed`, `title_changed`,
    /// `foreground_process_changed` and finally `exited`.
    Message(Arc<Message>),
}

impl Event {
    /// A JSON event, its frame not yet encoded.
    pub(crate) fn message(response: Response) -> Event {
        Event::Message(Arc::new(Message::new(response)))
    }

    /// The event's wire frame, encoded at most once however many subscribers send it (for an output whose
    /// beginning the actor already wrote, see [`Output::rest`], what is left of it). The delivery's bytes.
    pub(crate) fn frame(&self) -> &[u8] {
        match self {
            Event::Output(output) => &output.frame[output.written..],
            Event::Message(message) => message.frame(),
        }
    }
}

/// A run of output bytes starting at one offset of the output stream, held as its binary frame.
#[derive(Clone, PartialEq, Eq)]
pub struct Output {
    start: u64,
    frame: Bytes,
    /// How much of the frame was already written to the one subscriber this copy is for (0 for every other).
    written: usize,
}

impl Output {
    /// Builds the frame for `bytes` at offset `start`.
    ///
    /// # Errors
    ///
    /// As [`opencode_pty_protocol::encode_output`]: more bytes than one frame carries, or an end offset past
    /// `u64::MAX`.
    pub(crate) fn new(start: u64, bytes: &[u8]) -> Result<Output, FrameError> {
        let frame = opencode_pty_protocol::encode_output(start, bytes)?;
        Ok(Output { start, frame: Bytes::from(frame), written: 0 })
    }

    /// This output for a subscriber that has already been sent `written` more bytes of its frame: its
    /// connection writes only the rest.
    pub(crate) fn rest(self, written: usize) -> Output {
        Output { written: (self.written + written).min(self.frame.len()), ..self }
    }

    /// The offset of the first byte.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The offset just past the last byte: where the next output starts.
    pub fn end(&self) -> u64 {
        self.start + self.bytes().len() as u64
    }

    /// The raw bytes (the frame's payload, not a copy).
    pub fn bytes(&self) -> &[u8] {
        &self.frame[OUTPUT_PAYLOAD_AT..]
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Output").field("start", &self.start).field("bytes", &self.bytes().len()).finish()
    }
}

/// A JSON event and, once a subscriber's connection has needed it, its control frame.
pub struct Message {
    response: Response,
    frame: OnceLock<Bytes>,
}

impl Message {
    /// A message whose frame is encoded on first use.
    pub(crate) fn new(response: Response) -> Message {
        Message { response, frame: OnceLock::new() }
    }

    /// The event.
    pub fn response(&self) -> &Response {
        &self.response
    }

    /// The control frame, encoded by the first caller and shared with every later one.
    pub(crate) fn frame(&self) -> &Bytes {
        self.frame.get_or_init(|| Bytes::from(response_frame(&self.response)))
    }
}

impl PartialEq for Message {
    fn eq(&self, other: &Message) -> bool {
        self.response == other.response
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.response.fmt(f)
    }
}

/// An event as a subscriber's delivery carries it: output may be written by the actor itself, a JSON event
/// always goes through the subscriber's connection (which must see `exited` to end the subscription).
impl Item for Event {
    fn bytes(&self) -> &[u8] {
        self.frame()
    }

    fn direct(&self) -> bool {
        matches!(self, Event::Output(_))
    }

    fn rest(self, written: usize) -> Event {
        match self {
            Event::Output(output) => Event::Output(output.rest(written)),
            // Never asked: a message is not direct.
            message @ Event::Message(_) => message,
        }
    }

    /// Its output bytes, or the size of a JSON event's large member.
    fn weight(&self) -> usize {
        match self {
            Event::Output(output) => output.bytes().len(),
            Event::Message(message) => match message.response() {
                Response::Resized { checkpoint_base64, .. } => checkpoint_base64.len() + SMALL_EVENT_BYTES,
                Response::Attached { replay_base64, .. } => replay_base64.len() + SMALL_EVENT_BYTES,
                _ => SMALL_EVENT_BYTES,
            },
        }
    }

    /// `exited`, or `error` (a pipe subscription's end when waiting for the child failed).
    fn is_last(&self) -> bool {
        matches!(self, Event::Message(message)
            if matches!(message.response(), Response::Exited { .. } | Response::Error { .. }))
    }
}

/// Encodes a response as a control frame. A response too large for a frame (nothing the daemon sends is, in
/// practice) is replaced by an `error` saying why it cannot be sent, so the client is never left without one.
pub(crate) fn response_frame(response: &Response) -> Vec<u8> {
    // Written straight from the value (a tagged enum: always a JSON object).
    encode_message(response).unwrap_or_else(|error| {
        let reason = error.to_string();
        let mut map = serde_json::Map::new();
        map.insert("type".into(), "error".into());
        map.insert("message".into(), format!("the response cannot be sent: {reason}").into());
        encode_control(&map).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use opencode_pty_protocol::{Frame, decode_payload};

    use super::*;

    fn decode(frame: &[u8]) -> Frame {
        decode_payload(&frame[FRAME_HEADER_BYTES..]).expect("a valid frame")
    }

    #[test]
    fn an_output_is_its_frame_and_its_bytes_are_the_payload() {
        let output = Output::new(40, b"hello").unwrap();
        assert_eq!((output.start(), output.bytes(), output.end()), (40, &b"hello"[..], 45));
        let event = Event::Output(output.clone());
        assert_eq!(decode(event.frame()), Frame::Output { start: 40, bytes: b"hello".to_vec() });
        // The payload is a view into the frame, not a second copy.
        let payload = output.bytes().as_ptr() as usize;
        let frame = event.frame().as_ptr() as usize;
        assert_eq!(payload - frame, OUTPUT_PAYLOAD_AT);
    }

    #[test]
    fn a_message_is_encoded_once_and_shared_by_every_sender() {
        let event = Event::message(Response::TitleChanged { title: "t".into() });
        let shared = event.clone();
        let first = event.frame();
        // The clone (another subscriber's copy) gets the very same encoded buffer.
        assert_eq!(shared.frame().as_ptr(), first.as_ptr());
        let Frame::Control(map) = decode(first) else { panic!("a control frame") };
        assert_eq!((map["type"].as_str(), map["title"].as_str()), (Some("title_changed"), Some("t")));
    }

    #[test]
    fn an_output_too_large_for_a_frame_is_refused() {
        let too_many = vec![0; opencode_pty_protocol::MAX_OUTPUT_BYTES + 1];
        assert!(matches!(Output::new(0, &too_many), Err(FrameError::PayloadTooLarge { .. })));
        assert!(matches!(Output::new(u64::MAX, b"x"), Err(FrameError::OutputOffsetOverflow { .. })));
    }
}

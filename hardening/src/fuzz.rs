//! The fuzz targets' bodies. Each takes arbitrary bytes, must never panic, and checks what must hold of any
//! input it accepts: a decoded frame encodes back to the same frame, the request decoder agrees with the frame
//! decoder on what is malformed, an accepted request or registration survives a round trip, and a checkpoint
//! of plain text rebuilds the same screen. A panic (or a failed check, which panics) is a finding.

use std::path::Path;

use opencode_pty_protocol::{
    Frame, FrameDecoder, FrameError, OUTPUT_TAG, RequestEnvelope, decode_payload, encode_frame,
};
use opencode_pty_vt::{Blanks, Terminal};

/// The most bytes of one input the checkpoint target writes to a terminal (longer inputs are cut): enough
/// for every kind of sequence, small enough that each run stays fast.
pub const MAX_CHECKPOINT_INPUT_BYTES: usize = 64 * 1024;

/// The frame decoder: `data` is a byte stream, fed in pieces whose sizes the stream's first byte chooses; every
/// frame decoded is encoded again and must decode to itself. A single payload is decoded too.
pub fn frame_decoder(data: &[u8]) {
    let step = usize::from(data.first().copied().unwrap_or(1)).max(1);
    let mut decoder = FrameDecoder::new();
    for piece in data.chunks(step) {
        decoder.push(piece);
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => round_trip(&frame),
                Ok(None) => break,
                // The header stays buffered and the error repeats: a daemon closes such a connection.
                Err(FrameError::FrameTooLarge { .. }) => return,
                // The bad frame was consumed; decoding goes on after it.
                Err(_) => {}
            }
        }
    }
    let _ = decoder.decode_eof();
    if let Ok(frame) = decode_payload(data) {
        round_trip(&frame);
    }
}

/// An encoded frame decodes to itself.
fn round_trip(frame: &Frame) {
    let encoded = encode_frame(frame).expect("a decoded frame can be encoded");
    let mut decoder = FrameDecoder::new();
    decoder.push(&encoded);
    let again = decoder.next_frame().expect("an encoded frame decodes").expect("whole");
    assert_eq!(&again, frame, "a frame survives encoding");
}

/// The two-step request decoder (the token first, then the request, duplicate members refused): a payload is
/// malformed to it exactly when it is to the frame decoder, and an accepted request survives a round trip.
pub fn request_decoder(data: &[u8]) {
    let envelope = RequestEnvelope::parse(data);
    if data.first() != Some(&OUTPUT_TAG) {
        let as_frame = decode_payload(data);
        assert_eq!(
            envelope.is_ok(),
            matches!(as_frame, Ok(Frame::Control(_))),
            "the request decoder and the frame decoder disagree on {:?}",
            String::from_utf8_lossy(data)
        );
    }
    let Ok(envelope) = envelope else { return };
    let _ = envelope.op();
    let Ok(token) = envelope.token() else { return };
    let Ok(request) = envelope.decode() else { return };
    let text = serde_json::json!({ "token": token, "request": request }).to_string();
    let again = RequestEnvelope::parse(text.as_bytes()).expect("an encoded envelope parses");
    assert_eq!(again.token().expect("the token"), token);
    assert_eq!(again.decode().expect("an encoded request decodes"), request, "a request survives a round trip");
}

/// The registration parser (as both clients read the file): an accepted registration survives a round trip.
pub fn registration(data: &[u8]) {
    let path = Path::new("fuzz/service.json");
    let Ok(registration) = opencode_pty_client::parse_registration(path, data) else { return };
    let text = serde_json::to_vec(&registration).expect("a registration encodes");
    let again = opencode_pty_client::parse_registration(path, &text).expect("an encoded registration parses");
    assert_eq!(again, registration, "a registration survives a round trip");
}

/// The checkpoint emitter: `data` (after two bytes that choose the size) is written to a terminal; its
/// checkpoint, written to a fresh terminal of the same size, must not fail, and must itself be a checkpoint the
/// fresh terminal can give again. When the input is only printable ASCII, CR and LF, the rebuilt terminal must
/// match the first one exactly (SPEC C1: text, wraps and the cursor are carried).
pub fn checkpoint(data: &[u8]) {
    let (size, input) = data.split_at(data.len().min(2));
    let cols = 2 + u16::from(size.first().copied().unwrap_or(78)) % 200;
    let rows = 1 + u16::from(size.get(1).copied().unwrap_or(23)) % 60;
    let input = &input[..input.len().min(MAX_CHECKPOINT_INPUT_BYTES)];
    let mut live = Terminal::new(cols, rows, 1000).expect("a terminal");
    live.write(input);
    let checkpoint = live.vt_checkpoint().expect("a checkpoint");
    let mut rebuilt = Terminal::new(cols, rows, 1000).expect("a terminal");
    rebuilt.write(&checkpoint);
    rebuilt.vt_checkpoint().expect("a checkpoint of the rebuilt terminal");
    let plain = input.iter().all(|&byte| byte == b'\r' || byte == b'\n' || (0x20..0x7f).contains(&byte));
    if plain {
        let diff = live.state_diff(&rebuilt, Blanks::Visible).expect("comparable");
        assert_eq!(diff, None, "plain text must round-trip ({cols}x{rows}): {:?}", String::from_utf8_lossy(input));
    }
}

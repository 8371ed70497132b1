//! Tests of the frame codec: chunked streaming, encode/decode round trips, and every error case.

use std::io::{self, Cursor, Read};

use opencode_pty_protocol::{
    Frame, FrameDecoder, FrameError, MAX_FRAME_BYTES, MAX_OUTPUT_BYTES, decode_payload, encode_control,
    encode_control_into, encode_control_json, encode_frame, encode_output, encode_output_into, read_frame, write_frame,
};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};

/// Builds a frame from a raw payload, bypassing the encoder's checks.
fn raw_frame(payload: &[u8]) -> Vec<u8> {
    let mut out = u32::try_from(payload.len()).unwrap().to_be_bytes().to_vec();
    out.extend_from_slice(payload);
    out
}

/// Builds a raw output payload with the given offsets and bytes.
fn output_payload(start: u64, end: u64, bytes: &[u8]) -> Vec<u8> {
    let mut payload = vec![0x00];
    payload.extend_from_slice(&start.to_be_bytes());
    payload.extend_from_slice(&end.to_be_bytes());
    payload.extend_from_slice(bytes);
    payload
}

/// Feeds a whole stream to a fresh decoder and returns the result of the first `next_frame` call.
fn decode_stream(stream: &[u8]) -> Result<Option<Frame>, FrameError> {
    let mut decoder = FrameDecoder::new();
    decoder.push(stream);
    decoder.next_frame()
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// A control frame whose compact JSON is exactly `len` bytes long (`len` >= 8).
fn control_of_len(len: usize) -> Map<String, Value> {
    let map = object(json!({ "a": "x".repeat(len - 8) }));
    assert_eq!(serde_json::to_vec(&map).unwrap().len(), len);
    map
}

/// Many mixed frames, some larger than every chunk cap and than the decoder's idle buffer.
fn mixed_frames(rng: &mut StdRng) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut offset = 0u64;
    for i in 0..400u32 {
        if rng.random_range(0..2) == 0 {
            let data: String = (0..rng.random_range(0..200)).map(|_| rng.random_range('a'..='z')).collect();
            frames.push(Frame::Control(object(json!({ "type": "input", "id": i, "data": data, "n": [1.5, null] }))));
        } else {
            let len = match rng.random_range(0..20) {
                0 => 0,
                1 => rng.random_range(60_000..80_000),
                _ => rng.random_range(1..3_000),
            };
            let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            frames.push(Frame::Output { start: offset, bytes });
            offset += len as u64;
        }
    }
    frames
}

#[test]
fn frames_fed_in_random_chunks_decode_identically() {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let frames = mixed_frames(&mut rng);
    let mut stream = Vec::new();
    for frame in &frames {
        stream.extend_from_slice(&encode_frame(frame).unwrap());
    }
    for cap in [1, 7, 64, 4096, stream.len()] {
        let mut decoder = FrameDecoder::new();
        let mut decoded = Vec::new();
        let mut rest = &stream[..];
        while !rest.is_empty() {
            let (chunk, tail) = rest.split_at(rng.random_range(1..=cap).min(rest.len()));
            rest = tail;
            decoder.push(chunk);
            while let Some(frame) = decoder.next_frame().unwrap() {
                decoded.push(frame);
            }
        }
        assert_eq!(decoder.decode_eof().unwrap(), None, "cap {cap}");
        assert_eq!(decoder.buffered(), 0);
        assert_eq!(decoded.len(), frames.len(), "cap {cap}");
        assert!(decoded == frames, "cap {cap}: decoded frames differ");
    }
}

#[test]
fn frames_written_to_a_stream_are_read_back() {
    let frames = mixed_frames(&mut StdRng::seed_from_u64(7));
    let mut stream = Vec::new();
    for frame in &frames {
        write_frame(&mut stream, frame).unwrap();
    }
    let mut reader = Cursor::new(stream);
    let mut decoded = Vec::new();
    while let Some(frame) = read_frame(&mut reader).unwrap() {
        decoded.push(frame);
    }
    assert!(decoded == frames);
}

/// Arbitrary JSON values; floats are limited to ones that print and parse back exactly.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i16>().prop_map(|n| Value::from(f64::from(n) / 4.0)),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..8)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(any::<String>(), json_value(), 0..8).prop_map(|map| map.into_iter().collect())
}

fn output_frame() -> impl Strategy<Value = Frame> {
    (any::<u64>(), prop::collection::vec(any::<u8>(), 0..2048))
        .prop_map(|(start, bytes)| Frame::Output { start: start.min(u64::MAX - bytes.len() as u64), bytes })
}

proptest! {
    #[test]
    fn arbitrary_frames_round_trip(
        frame in prop_oneof![json_object().prop_map(Frame::Control), output_frame()],
    ) {
        let encoded = encode_frame(&frame).unwrap();
        let mut decoder = FrameDecoder::new();
        decoder.push(&encoded);
        prop_assert_eq!(decoder.next_frame().unwrap(), Some(frame.clone()));
        prop_assert_eq!(decoder.decode_eof().unwrap(), None);
        prop_assert_eq!(read_frame(&mut Cursor::new(&encoded)).unwrap(), Some(frame.clone()));
        prop_assert_eq!(decode_payload(&encoded[4..]).unwrap(), frame);
    }
}

#[test]
fn oversized_header_is_rejected_before_the_payload_arrives() {
    for declared in [MAX_FRAME_BYTES as u32 + 1, u32::MAX] {
        let result = decode_stream(&declared.to_be_bytes());
        assert!(matches!(result, Err(FrameError::FrameTooLarge { declared: d }) if d == declared));
    }
    let error = decode_stream(&(MAX_FRAME_BYTES as u32 + 1).to_be_bytes()).unwrap_err();
    assert_eq!(error.to_string(), "frame claims 8388609 bytes, the limit is 8388608");

    /// Hands out a header, then fails the test if anything reads further.
    struct HeaderOnly(Cursor<[u8; 4]>);
    impl Read for HeaderOnly {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.read(buf)?;
            assert!(n > 0, "read_frame tried to read the payload of an oversized frame");
            Ok(n)
        }
    }
    let mut reader = HeaderOnly(Cursor::new(u32::MAX.to_be_bytes()));
    assert!(matches!(read_frame(&mut reader), Err(FrameError::FrameTooLarge { declared: u32::MAX })));
}

#[test]
fn frame_of_exactly_max_bytes_is_accepted() {
    let map = control_of_len(MAX_FRAME_BYTES);
    let encoded = encode_control(&map).unwrap();
    assert_eq!(encoded.len(), 4 + MAX_FRAME_BYTES);
    assert_eq!(decode_stream(&encoded).unwrap(), Some(Frame::Control(map)));

    let bytes = vec![0xab; MAX_OUTPUT_BYTES];
    let encoded = encode_output(3, &bytes).unwrap();
    assert_eq!(encoded.len(), 4 + MAX_FRAME_BYTES);
    assert_eq!(read_frame(&mut Cursor::new(&encoded)).unwrap(), Some(Frame::Output { start: 3, bytes }));
}

#[test]
fn encoder_refuses_oversized_payload() {
    let too_long = MAX_FRAME_BYTES + 1;
    let map = control_of_len(too_long);
    assert!(matches!(encode_control(&map), Err(FrameError::PayloadTooLarge { len }) if len == too_long));
    let mut out = b"kept".to_vec();
    assert!(encode_control_into(&mut out, &map).is_err());
    assert_eq!(out, b"kept");

    let bytes = vec![0; MAX_OUTPUT_BYTES + 1];
    let error = encode_output(0, &bytes).unwrap_err();
    assert!(matches!(error, FrameError::PayloadTooLarge { len } if len == too_long));
    assert_eq!(error.to_string(), "cannot encode a frame of 8388609 payload bytes, the limit is 8388608");
    assert!(encode_output_into(&mut out, 0, &bytes).is_err());
    assert_eq!(out, b"kept");

    let json = serde_json::to_vec(&map).unwrap();
    assert!(matches!(encode_control_json(&json), Err(FrameError::PayloadTooLarge { len }) if len == too_long));
}

#[test]
fn encoder_refuses_output_past_the_last_offset() {
    let error = encode_output(u64::MAX - 1, b"ab").unwrap_err();
    assert!(matches!(error, FrameError::OutputOffsetOverflow { start, len: 2 } if start == u64::MAX - 1));
    assert!(encode_output(u64::MAX - 2, b"ab").is_ok());
    assert!(encode_output(u64::MAX, b"").is_ok());
}

#[test]
fn output_shorter_than_17_bytes_is_rejected() {
    for len in 1..17 {
        let mut payload = vec![0; len];
        payload[0] = 0x00;
        let result = decode_stream(&raw_frame(&payload));
        assert!(matches!(result, Err(FrameError::OutputTooShort { len: l }) if l == len), "len {len}");
    }
    let error = decode_payload(&[0; 16]).unwrap_err();
    assert_eq!(error.to_string(), "output frame payload is 16 bytes, but its tag and two offsets alone take 17");
    let empty = decode_stream(&raw_frame(&output_payload(9, 9, b""))).unwrap();
    assert_eq!(empty, Some(Frame::Output { start: 9, bytes: Vec::new() }));
}

#[test]
fn output_offsets_must_span_the_byte_count() {
    for (start, end) in [(10, 14), (10, 12), (0, u64::MAX)] {
        let result = decode_stream(&raw_frame(&output_payload(start, end, b"abc")));
        assert!(
            matches!(result, Err(FrameError::OutputLengthMismatch { start: s, end: e, len: 3 }) if (s, e) == (start, end)),
            "{start}..{end}: {result:?}"
        );
    }
    for (start, end) in [(10, 7), (u64::MAX, 2)] {
        let result = decode_stream(&raw_frame(&output_payload(start, end, b"abc")));
        assert!(
            matches!(result, Err(FrameError::OutputEndBeforeStart { start: s, end: e }) if (s, e) == (start, end)),
            "{start}..{end}: {result:?}"
        );
    }
    let error = decode_payload(&output_payload(10, 14, b"abc")).unwrap_err();
    assert_eq!(error.to_string(), "output frame covers offsets 10 to 14 but carries 3 bytes");
    let error = decode_payload(&output_payload(10, 7, b"abc")).unwrap_err();
    assert_eq!(error.to_string(), "output frame ends at offset 7, before its start offset 10");
}

#[test]
fn control_with_invalid_utf8_is_rejected() {
    let result = decode_stream(&raw_frame(b"{\"a\":\"\xff\"}"));
    assert!(matches!(result, Err(FrameError::ControlNotUtf8 { len: 9, valid_up_to: 6 })), "{result:?}");
    assert!(matches!(encode_control_json(b"{\"a\":\"\xc3\"}"), Err(FrameError::ControlNotUtf8 { .. })));
    let error = decode_payload(b"{\"a\":\"\xff\"}").unwrap_err();
    assert_eq!(error.to_string(), "control frame of 9 bytes is not valid UTF-8: the first bad byte is at offset 6");
}

#[test]
fn control_that_is_not_a_json_object_is_rejected() {
    for (payload, kind) in
        [(&b"[1,2]"[..], "array"), (b"42", "number"), (b"\"s\"", "string"), (b"true", "boolean"), (b"null", "null")]
    {
        let result = decode_stream(&raw_frame(payload));
        assert!(matches!(result, Err(FrameError::ControlNotObject { found, .. }) if found == kind), "{result:?}");
        assert!(encode_control_json(payload).is_err());
    }
    assert_eq!(
        decode_payload(b"[1,2]").unwrap_err().to_string(),
        "control frame of 5 bytes is a JSON array, but it must be a JSON object"
    );
    for payload in [&b"{\"a\":"[..], b"{} {}", b"nope"] {
        let result = decode_stream(&raw_frame(payload));
        assert!(matches!(result, Err(FrameError::ControlNotJson { .. })), "{result:?}");
    }
    assert!(matches!(decode_stream(&raw_frame(b"")), Err(FrameError::EmptyPayload)));
    assert!(matches!(encode_control_json(b""), Err(FrameError::EmptyPayload)));
    assert_eq!(
        FrameError::EmptyPayload.to_string(),
        "frame has an empty payload, but a control frame must hold a JSON object"
    );
}

#[test]
fn decoder_resumes_after_a_bad_frame() {
    let mut stream = raw_frame(b"[]");
    stream.extend_from_slice(&encode_output(5, b"ok").unwrap());
    let mut decoder = FrameDecoder::new();
    decoder.push(&stream);
    assert!(decoder.next_frame().is_err());
    assert_eq!(decoder.next_frame().unwrap(), Some(Frame::Output { start: 5, bytes: b"ok".to_vec() }));
}

#[test]
fn eof_mid_header_is_an_error() {
    let mut decoder = FrameDecoder::new();
    decoder.push(&[0, 0]);
    assert_eq!(decoder.next_frame().unwrap(), None);
    let error = decoder.decode_eof().unwrap_err();
    assert!(matches!(error, FrameError::EofInHeader { got: 2 }));
    assert_eq!(error.to_string(), "stream ended after 2 of the 4 bytes of a frame header");
    assert!(matches!(read_frame(&mut Cursor::new([0, 0, 1])), Err(FrameError::EofInHeader { got: 3 })));
}

#[test]
fn eof_mid_payload_is_an_error() {
    let frame = encode_control(&object(json!({ "type": "ping" }))).unwrap();
    let cut = &frame[..frame.len() - 1];
    let mut decoder = FrameDecoder::new();
    decoder.push(cut);
    assert_eq!(decoder.next_frame().unwrap(), None);
    let error = decoder.decode_eof().unwrap_err();
    assert!(matches!(error, FrameError::EofInPayload { got: 14, expected: 15 }), "{error:?}");
    assert_eq!(error.to_string(), "stream ended after 14 of the 15 payload bytes of a frame");
    let result = read_frame(&mut Cursor::new(cut));
    assert!(matches!(result, Err(FrameError::EofInPayload { got: 14, expected: 15 })));
    assert!(matches!(read_frame(&mut Cursor::new(&frame[..4])), Err(FrameError::EofInPayload { got: 0, .. })));
}

#[test]
fn clean_eof_is_not_an_error() {
    let mut decoder = FrameDecoder::new();
    assert_eq!(decoder.decode_eof().unwrap(), None);
    decoder.push(&encode_output(0, b"a").unwrap());
    decoder.push(&encode_output(1, b"b").unwrap());
    assert_eq!(decoder.decode_eof().unwrap(), Some(Frame::Output { start: 0, bytes: b"a".to_vec() }));
    assert_eq!(decoder.decode_eof().unwrap(), Some(Frame::Output { start: 1, bytes: b"b".to_vec() }));
    assert_eq!(decoder.decode_eof().unwrap(), None);
    assert_eq!(read_frame(&mut Cursor::new(Vec::new())).unwrap(), None);
}

#[test]
fn io_errors_are_wrapped() {
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::ConnectionReset, "peer went away"))
        }
    }
    let error = read_frame(&mut Broken).unwrap_err();
    assert!(matches!(&error, FrameError::Io(e) if e.kind() == io::ErrorKind::ConnectionReset));
    assert_eq!(error.to_string(), "I/O error on the frame stream: peer went away");
}

//! Seed inputs of every fuzz target, made from the schema's examples (`schema/examples`) and a few VT samples.
//! `opencode-pty-hardening seed DIR` writes them for `cargo fuzz`; the corpus test runs them directly.

use std::path::Path;

use opencode_pty_protocol::{Frame, encode_frame};
use serde_json::{Map, Value};

/// Every fuzz target, by the name `cargo fuzz` knows it by.
pub const TARGETS: [&str; 4] = ["frame_decoder", "request_decoder", "registration", "checkpoint"];

/// The token the request seeds carry (any 32 hex digits).
const SEED_TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// VT samples for the checkpoint target: styles, wide characters, scrolling, the alternate screen, modes, links.
const VT_SAMPLES: [&[u8]; 8] = [
    b"plain line\r\nsecond line that is long enough to wrap at a narrow width\r\n",
    b"\x1b[1;31mred bold\x1b[0m \x1b[38;5;82mindexed\x1b[48;2;10;20;30m rgb\x1b[0m\r\n",
    "wide: \u{4e2d}\u{6587} emoji \u{1f600} combining e\u{301}\r\n".as_bytes(),
    b"\x1b[2;5r\x1b[5;1Hscroll\n\n\n\x1b[r\x1b[1;1Htop",
    b"main\x1b[?1049h\x1b[2J\x1b[Halternate\x1b[?1049l back",
    b"\x1b[?1h\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[4 q\x1b]0;title\x07",
    b"\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ after",
    b"\x1b[10;10Hmoved\x1b7\x1b[Hsaved\x1b8restored\x1b[K\x1b[2K\x1b[J",
];

/// The seeds of `target` (one of [`TARGETS`]); `schema` is the repository's `schema/` directory.
///
/// # Panics
///
/// When an example cannot be read or is not JSON: the examples are the repository's own.
pub fn seeds(target: &str, schema: &Path) -> Vec<Vec<u8>> {
    let examples = examples(schema);
    let named =
        |prefix: &'static str| examples.iter().filter(move |(name, _)| name.starts_with(prefix)).map(|(_, v)| v);
    match target {
        "frame_decoder" => {
            let mut frames: Vec<Vec<u8>> = examples.iter().map(|(_, value)| control_frame(value)).collect();
            frames.push(
                encode_frame(&Frame::Output { start: 5120, bytes: b"\x1b[32mok\x1b[0m done\r\n".to_vec() }).unwrap(),
            );
            // One stream of several frames, fed in pieces of 7 bytes (its first byte, the length's high byte,
            // is 0; the target treats a 0 as 1).
            frames.push(frames.iter().take(5).flatten().copied().collect());
            frames
        }
        "request_decoder" => {
            let mut envelopes: Vec<Vec<u8>> = named("Envelope.").map(|v| v.to_string().into_bytes()).collect();
            envelopes.extend(named("Request.").map(|request| {
                serde_json::json!({ "token": SEED_TOKEN, "request": request }).to_string().into_bytes()
            }));
            envelopes
        }
        "registration" => {
            let mut found: Vec<Vec<u8>> = named("Registration").map(|value| value.to_string().into_bytes()).collect();
            // Variants of the valid one: another protocol, a member too many, one missing, numbers out of range.
            let valid = named("Registration.json").next().cloned().unwrap_or_default();
            let variants: [(&str, Value); 4] = [
                ("protocol", Value::from(7)),
                ("extra", Value::from("member")),
                ("pid", Value::from(u64::MAX)),
                ("features", Value::from(vec!["a"; 3])),
            ];
            for (member, value) in variants {
                let mut variant = valid.clone();
                variant[member] = value;
                found.push(variant.to_string().into_bytes());
            }
            let mut without_token = valid;
            without_token.as_object_mut().map(|object| object.remove("token"));
            found.push(without_token.to_string().into_bytes());
            found
        }
        "checkpoint" => VT_SAMPLES.iter().map(|sample| [&[78u8, 23][..], sample].concat()).collect(),
        other => panic!("no fuzz target {other}"),
    }
}

/// Every example (valid, invalid and decode-only), by file name, sorted.
fn examples(schema: &Path) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    for kind in ["valid", "invalid", "decode-only"] {
        let dir = schema.join("examples").join(kind);
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("an entry").path();
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            found.push((path.file_name().unwrap().to_string_lossy().into_owned(), value));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// `value` as a control frame, or (when it is not an object) its text in a frame all the same.
fn control_frame(value: &Value) -> Vec<u8> {
    match value {
        Value::Object(map) => encode_frame(&Frame::Control(Map::clone(map))).expect("an example fits a frame"),
        other => {
            let text = other.to_string().into_bytes();
            [&(text.len() as u32).to_be_bytes()[..], &text].concat()
        }
    }
}

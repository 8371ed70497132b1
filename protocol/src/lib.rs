//! Wire-level pieces of protocol 8 shared by the daemon, both clients and the conformance runner: the message
//! types generated from `schema/`, the version constants, the frame codec, two-step request decoding and the
//! limits. It knows nothing of terminals or sockets.
//!
//! Module map: `generated` (committed output of `opencode-pty-codegen`, never edited by hand), `envelope`
//! (token first, then `op`, then fields), `unique` (duplicate members), `frame` and `frame_error` (the codec), `limits`, `serde_rules`
//! (decoding rules the generated types point at), `wire` (file names and error texts peers share).
#![deny(missing_docs)]

mod envelope;
mod frame;
mod frame_error;
// Generated code: formatted by its generator, and allowed what typify's output needs.
#[rustfmt::skip]
#[allow(clippy::clone_on_copy)] // typify's `From<&Self>` impls clone the Copy enums (`Mode`, `Role`, `Signal`).
mod generated;
mod limits;
mod serde_rules;
mod unique;
mod wire;

/// The JSON Schema of protocol 8, bundled into one draft-07 document (generated from `schema/`).
pub const SCHEMA_JSON: &str = include_str!("schema.json");

pub use envelope::{MAX_REPORTED_DETAIL_CHARS, MAX_REPORTED_OP_CHARS, RequestEnvelope, RequestError};
pub use generated::*;
pub use limits::*;
pub use serde_rules::MAX_EXACT_INTEGER;
pub use unique::{MAX_REPORTED_MEMBER_CHARS, RESERVED_MEMBER, first_duplicate};
pub use wire::{AUTHENTICATION_FAILED, LOCK_FILE, REGISTRATION_FILE, UNSUPPORTED_REQUEST_PREFIX};

pub use frame::{
    FRAME_HEADER_BYTES, Frame, FrameDecoder, MAX_OUTPUT_BYTES, OUTPUT_PREFIX_BYTES, OUTPUT_TAG, decode_payload,
    encode_control, encode_control_into, encode_control_json, encode_frame, encode_frame_into, encode_output,
    encode_output_into, read_frame, read_payload, write_frame,
};
pub use frame_error::FrameError;

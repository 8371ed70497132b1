//! Wire-level pieces of protocol 8 shared by the daemon, both clients and the conformance runner: the message
//! types generated from `schema/` (the `Request` and `Response` enums, a named type per variant, the op table),
//! the version constants and the file names and error texts peers share, the frame codec, two-step request
//! decoding and the limits. It knows nothing of terminals or sockets.
//!
//! Module map: `generated` (committed output of `opencode-pty-codegen`, never edited by hand), `variant` (the
//! traits of the generated per-variant types), `defaults` (`CreatePtyRequest::new`, `CreatePipeRequest::new`),
//! `envelope` (token first, then `op`, then fields), `unique` (duplicate members), `frame` and `frame_error`
//! (the codec), `limits`, `serde_rules` (decoding rules the generated types point at).
#![deny(missing_docs)]

mod defaults;
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
mod variant;

/// The JSON Schema of protocol 8, bundled into one draft-07 document (generated from `schema/`).
pub const SCHEMA_JSON: &str = include_str!("schema.json");

pub use defaults::{DEFAULT_COLS, DEFAULT_ROWS};
pub use envelope::{MAX_REPORTED_DETAIL_CHARS, MAX_REPORTED_OP_CHARS, RequestEnvelope, RequestError};
pub use generated::*;
pub use limits::*;
pub use serde_rules::MAX_EXACT_INTEGER;
pub use unique::{MAX_REPORTED_MEMBER_CHARS, RESERVED_MEMBER, first_duplicate};
pub use variant::{RequestVariant, ResponseVariant};

pub use frame::{
    FRAME_HEADER_BYTES, Frame, FrameDecoder, MAX_OUTPUT_BYTES, OUTPUT_PREFIX_BYTES, OUTPUT_TAG, decode_payload,
    encode_control, encode_control_into, encode_control_json, encode_frame, encode_frame_into, encode_message,
    encode_output, encode_output_into, read_frame, read_payload, write_frame,
};
pub use frame_error::FrameError;

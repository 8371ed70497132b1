//! Wire-level pieces of protocol 8 shared by the daemon, both clients and the conformance runner: the message
//! types generated from `schema/`, the version constants, the frame codec, two-step request decoding and the
//! limits. It knows nothing of terminals or sockets.
//!
//! Module map: `generated` (committed output of `opencode-pty-codegen`, never edited by hand), `envelope`
//! (token first, then `op`, then fields), `frame` and `error` (the codec), `limits`.
#![deny(missing_docs)]

mod envelope;
mod frame;
mod frame_error;
// Generated code: formatted by its generator, and allowed what typify's output needs.
#[rustfmt::skip]
#[allow(
missing_docs, // Variants and fields without a schema description (tags, typify's helpers).
missing_debug_implementations, // typify's error module.
clippy::clone_on_copy, // typify's `From<&Self>` impls clone Copy types.
clippy::derivable_impls, // typify spells out some `Default` impls.
clippy::to_string_trait_impl, // typify implements `ToString` for string enums.
)]
mod generated;
mod limits;

/// The JSON Schema of protocol 8, bundled into one draft-07 document (generated from `schema/`).
pub const SCHEMA_JSON: &str = include_str!("schema.json");

pub use envelope::{RequestEnvelope, RequestError};
pub use generated::*;
pub use limits::*;

pub use frame::{
    FRAME_HEADER_BYTES, Frame, FrameDecoder, MAX_OUTPUT_BYTES, OUTPUT_PREFIX_BYTES, OUTPUT_TAG, decode_payload,
    encode_control, encode_control_into, encode_control_json, encode_frame, encode_frame_into, encode_output,
    encode_output_into, read_frame, write_frame,
};
pub use frame_error::FrameError;

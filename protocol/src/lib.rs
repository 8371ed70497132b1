//! Wire-level pieces of protocol 8 shared by the daemon, both clients and the conformance runner: the version
//! constants, the frame codec and the size limits. It knows nothing of terminals or sockets.
#![deny(missing_docs)]

mod error;
mod frame;

pub use error::FrameError;
pub use frame::{
    FRAME_HEADER_BYTES, Frame, FrameDecoder, MAX_OUTPUT_BYTES, OUTPUT_PREFIX_BYTES, OUTPUT_TAG, decode_payload,
    encode_control, encode_control_into, encode_control_json, encode_frame, encode_frame_into, encode_output,
    encode_output_into, read_frame, write_frame,
};

/// The protocol version this crate speaks. It changes only for a breaking change; additive changes extend
/// [`FEATURES`] instead.
pub const PROTOCOL_VERSION: u32 = 8;

/// Additive capabilities advertised in `pong` and in the registration. Protocol 8 needs none.
pub const FEATURES: &[&str] = &[];

/// The largest frame payload, in bytes (8 MiB), not counting the 4-byte length header. A decoder rejects a
/// header that declares more before reading the payload, and an encoder refuses to produce one.
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

//! Every bound of protocol 8 that a peer can observe, as named constants: sizes in bytes, times as
//! [`Duration`]s. The daemon enforces them; clients may use them to refuse early.

use std::time::Duration;

/// The largest frame payload, in bytes (8 MiB), not counting the 4-byte length header. A decoder rejects a
/// header that declares more before reading the payload, and an encoder refuses to produce one.
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

/// The most raw bytes one `write` or `input` request may carry (1 MiB, before base64).
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;

/// The budget of one `read_rows` answer (1 MiB): JSON-escaped row strings, array punctuation and one
/// owned-string slot per row. A read over it fails rather than being cut short.
pub const MAX_ROWS_BYTES: usize = 1024 * 1024;

/// The largest pipe `metadata` object, serialized (1 MiB).
pub const MAX_METADATA_BYTES: usize = 1024 * 1024;

/// How long a new daemon waits for its first `own` before it exits.
pub const OWNER_DEADLINE: Duration = Duration::from_secs(5);

/// How long a handoff ticket stays valid after `prepare_handoff`.
pub const HANDOFF_TTL: Duration = Duration::from_secs(120);

/// The longest live output batch: a subscriber never receives an output frame carrying more raw bytes.
pub const MAX_LIVE_OUTPUT_BYTES: usize = 8 * 1024;

/// How long the first byte of an output batch may wait for more before the batch is sent.
pub const OUTPUT_COALESCE: Duration = Duration::from_millis(1);

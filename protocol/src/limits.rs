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

/// The widest terminal, in columns (`Dimension` in the schema). Wider sizes are refused by `create_pty`,
/// `resize`, `control` and `input`.
pub const MAX_COLS: u16 = 1000;

/// The tallest terminal, in rows (`Dimension` in the schema).
pub const MAX_ROWS: u16 = 1000;

/// The most cells (columns times rows) one terminal may have: a cross-field bound the schema cannot state,
/// checked by the daemon. It keeps a full screen's plain text (about a byte a cell) next to the largest
/// checkpoint within one `snapshot` frame, and every operation on the largest terminal well under a second.
pub const MAX_CELLS: u32 = 500_000;

// The cell limit refuses something the per-field bounds let through, yet allows a full-width and a full-height
// terminal.
const _: () = assert!(MAX_CELLS < MAX_COLS as u32 * MAX_ROWS as u32);
const _: () = assert!(MAX_CELLS >= MAX_COLS as u32 && MAX_CELLS >= MAX_ROWS as u32);

/// The longest title, in characters (Unicode scalar values, as JSON Schema's `maxLength` counts): the
/// `create_pty` title and the `rename` title are refused above it, and a longer title a program sets with
/// OSC 0/2 is cut to it.
pub const MAX_TITLE_CHARS: usize = 256;

/// The longest `group_id`, in characters.
pub const MAX_GROUP_ID_CHARS: usize = 256;

/// The longest `attachment_id` (`subscribe`, `write`, `resize`, `control`, `input`), in characters.
pub const MAX_ATTACHMENT_ID_CHARS: usize = 256;

/// The longest `program`, `cwd` and `output_path`, in characters (Linux's `PATH_MAX` is 4096 bytes).
pub const MAX_PATH_CHARS: usize = 4096;

/// The longest single argument, in characters: Linux's `MAX_ARG_STRLEN` (128 KiB with the final NUL), beyond
/// which `exec` fails anyway.
pub const MAX_ARG_CHARS: usize = 128 * 1024;

/// The most entries of a request's `features` and of `subscribe`'s `events` (8): more than there are features
/// to name, so a longer list is a mistake, refused with a message naming this limit.
pub const MAX_OPT_IN_ITEMS: usize = 8;

/// The most arguments one process may be given.
pub const MAX_ARGS: usize = 4096;

/// The most bytes `program` and `args` may take together as the JSON array `command` that `ProcessInfo`
/// reports (256 KiB): a cross-field bound, checked by the daemon.
pub const MAX_COMMAND_BYTES: usize = 256 * 1024;

/// The most commands a terminal with shell integration keeps (the oldest is forgotten first), and so the most
/// a `commands` answer lists and the largest `limit` it takes.
pub const MAX_COMMANDS: usize = 256;

/// The longest command line a terminal keeps for a command, in bytes of UTF-8: a longer one is cut at a
/// character boundary. With [`MAX_SHELL_CWD_BYTES`] it keeps a `commands` answer of [`MAX_COMMANDS`] under
/// one frame whatever the commands were (control characters other than tab and newline are kept as U+FFFD, so
/// each byte costs at most two as JSON).
pub const MAX_COMMAND_LINE_BYTES: usize = 4096;

/// The longest working directory a shell's marks may report, in bytes of UTF-8 (Linux's `PATH_MAX`): a longer
/// one is reported as unknown (null), never cut.
pub const MAX_SHELL_CWD_BYTES: usize = 4096;

/// The longest command `run` types, in bytes of UTF-8 (64 KiB): well within what a shell's line editor takes
/// in one go and what a terminal's input queue holds.
pub const MAX_RUN_COMMAND_BYTES: usize = 64 * 1024;

/// How long `run` and `wait_command` wait for a command's end unless told (30 s).
pub const DEFAULT_COMMAND_WAIT_MS: u32 = 30_000;

/// The longest `timeout_ms` of `run` and `wait_command` (24 hours).
pub const MAX_COMMAND_WAIT_MS: u32 = 24 * 60 * 60 * 1000;

/// The most history lines a terminal's emulator keeps that a `create_pty` may ask for (`scrollback_lines`).
pub const MAX_SCROLLBACK_LINES: u32 = 100_000;

/// The history lines a terminal keeps when its `create_pty` does not say.
pub const DEFAULT_SCROLLBACK_LINES: u32 = 10_000;

/// The fewest bytes of raw output a terminal keeps for replay that a `create_pty` may ask for (`replay_bytes`).
pub const MIN_REPLAY_BYTES: u32 = 4096;

/// The most bytes of raw output a terminal keeps for replay that a `create_pty` may ask for (64 MiB).
pub const MAX_REPLAY_BYTES: u32 = 64 * 1024 * 1024;

/// The bytes of raw output a terminal keeps for replay when its `create_pty` does not say (2 MiB).
pub const DEFAULT_REPLAY_BYTES: u32 = 2 * 1024 * 1024;

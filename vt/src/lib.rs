//! Safe binding to libghostty-vt, the terminal emulator that keeps each PTY's authoritative state.
//!
//! This is the only crate that calls into libghostty. [`Terminal`] owns one emulator: it is `!Send`, so it is
//! created, used and dropped on one thread (the terminal's actor thread), and it frees its handle on drop.
//! Callbacks only copy bytes or set flags ([`callbacks`]); every libghostty result code maps to one [`Error`].
//!
//! Module map: [`ffi`] raw declarations; `terminal` the handle, input, geometry and state; `format`
//! selections and the formatter; `rows` row reads under a byte budget; `checkpoint` VT checkpoints; `fit`
//! what a checkpoint leaves out to stay under its limit; `tail` the exact part emitted only as far as the limit
//! reaches; `emit` cell-exact emission of rows and `sgr` the styles it sets; `compress` compression of a quiet
//! terminal's history; `inspect` cell-level reads used to compare two terminals; `snapshot` libghostty's binary
//! snapshot (a scratch copy, and a terminal handed to another process); `pages` libghostty's page memory;
//! `allocator` the C allocator's threshold that lets freed large buffers leave the process.
//!
//! Linking this crate defines the process's `madvise`, `mmap64`, `munmap` and `mremap` (not part of its Rust
//! API): they zero recycled pages in place and populate new ones only while a thread is inside libghostty and
//! only for the private anonymous pages libghostty mapped through them; every other call, from any library,
//! is the plain system call ([`zeroed_in_place`], [`kernel_discards`] and [`populated_mappings`] count them).

#![deny(missing_docs)]

// The shared screen generator (tests/support) names the crate, and unit tests use it too.
#[cfg(test)]
extern crate self as opencode_pty_vt;

mod allocator;
mod callbacks;
mod canonical;
mod checkpoint;
mod colors;
mod compress;
mod diff;
mod emit;
mod error;
pub mod ffi;
mod fit;
mod format;
mod inspect;
mod mouse;
mod pages;
mod rows;
mod sgr;
mod snapshot;
mod stack;
mod tail;
mod terminal;

pub use allocator::{MMAP_THRESHOLD_BYTES, TRIM_INTERVAL, return_freed_buffers, trim_free_memory};
pub use callbacks::MAX_PENDING_REPLY_BYTES;
pub use checkpoint::{EXACT_HISTORY_ROWS, GAP_CHECKED_ROWS, MAX_CHECKPOINT_BYTES};
pub use colors::Rgb;
pub use compress::{Compression, CompressionMode};
pub use diff::{Blanks, COMPARED_MODES};
pub use emit::{MAX_PLAIN_CELL_BYTES, MAX_PLAIN_ROW_BYTES};
pub use error::{Error, Result};
pub use inspect::{CellInfo, Color, MAX_LINK_BYTES, RowInfo, Style};
pub use mouse::{MouseFormat, MouseTracking};
pub use pages::{MAX_POPULATED_BYTES, MAX_ZEROED_PAGES, kernel_discards, populated_mappings, zeroed_in_place};
pub use rows::row_json_cost;
pub use snapshot::Detached;
pub use stack::{STACK_RELEASE_MARGIN_BYTES, release_stack_below_caller};
pub use terminal::{Cursor, CursorShape, CursorStyle, MAX_CONTINUATION_BYTES, ModeKind, Screen, Terminal};

/// The version string the loaded library reports, e.g. `0.1.0-dev`.
pub fn library_version() -> String {
    let mut out = ffi::GhosttyString { ptr: std::ptr::null(), len: 0 };
    // Safety: VERSION_STRING writes a GhosttyString pointing at static data in the library.
    let rc = unsafe { ffi::ghostty_build_info(ffi::GHOSTTY_BUILD_INFO_VERSION_STRING, (&raw mut out).cast()) };
    if rc != ffi::GHOSTTY_SUCCESS || out.ptr.is_null() {
        return String::new();
    }
    // Safety: the library returned a pointer to `len` bytes of static storage.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(out.ptr, out.len) }).into_owned()
}

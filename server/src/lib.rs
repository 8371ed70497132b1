//! The opencode-pty daemon as a library: the terminal runtime and its service, used by the binary and tested
//! in-process before any socket exists.
//!
//! Module map: `service` (the registry of PTYs and pipe processes, in creation order), `process` (what both
//! kinds share: the `Process` enum, events, the exit status and lifecycle, the wait thread, kill-and-reap,
//! named threads and reporting joins, and every `unsafe` call), `terminal` (one PTY: spawn, the actor that
//! owns its emulator, the reader and writer threads, replay, fan-out, titles), `pipe` (one pipe process: its
//! output file and reader), `procinfo` (the foreground process of a PTY), `error` (what a client is told),
//! `bounds` (client-supplied sizes against the protocol's limits), `listing` (the daemon-wide budget that
//! keeps `list` within one frame), `daemon` (the persistent service: runtime directory, registration, socket,
//! ownership, dispatch).

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod bounds;
pub mod daemon;
pub mod error;
pub mod listing;
pub mod pipe;
pub mod process;
pub mod procinfo;
pub mod service;
pub mod terminal;

pub use error::ServiceError;
pub use service::ProcessService;

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

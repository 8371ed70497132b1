//! Compressing a quiet terminal's history: libghostty-vt packs cold pages of primary-screen scrollback into
//! LZ4 blocks and gives their memory back to the kernel, and unpacks a page again when something reads it.
//!
//! The library schedules nothing itself: the embedder watches [`Terminal::compression_activity`], waits until
//! it has stayed the same for a while (the terminal went quiet), then calls [`Terminal::compress`] with
//! [`CompressionMode::Incremental`] until it answers [`Compression::Complete`], one short step at a time so that
//! output arriving meanwhile is never kept waiting. Compression changes how the history is stored, never what
//! it holds: every read answers as before, and a read that needs a compressed page restores it first.
//!
//! The page memory a compressed page gave up must really leave the process. libghostty releases it with
//! `madvise(MADV_DONTNEED)`, which this crate's `madvise` answers by zeroing resident pages in place while the
//! calling thread is marked as inside libghostty (see `pages`): that keeps them resident and would make
//! compression give back nothing. So [`Terminal::compress`] runs unmarked, and its discards are the plain
//! system call.

use crate::error::{Error, Result, check};
use crate::ffi;
use crate::terminal::Terminal;

/// How much work one [`Terminal::compress`] call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompressionMode {
    /// One bounded step, short enough to run between two pieces of output: call again while it answers
    /// [`Compression::Pending`].
    Incremental,
    /// Every page that can be compressed now, in one call; with a long history it takes as long as all the
    /// incremental steps together, so it is for tests and maintenance, not for a terminal's own thread.
    Full,
}

/// What a [`Terminal::compress`] call leaves for the caller to schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// This platform cannot give page memory back while keeping its address range: do not schedule
    /// compression for this terminal again.
    Unsupported,
    /// More incremental work remains: call again while the terminal stays quiet.
    Pending,
    /// The pass is over: nothing to do until [`Terminal::compression_activity`] changes. Not every page need
    /// have been compressed (a page that would not shrink, or whose memory could not be allocated or given
    /// back, is left as it was).
    Complete,
}

impl Terminal {
    /// A token that changes whenever the terminal does something that makes compression worth trying again
    /// (new output, a resize, reading compressed history back). Only equality means anything: it may wrap,
    /// and a change in either direction means the same. Reading it does no compression work.
    ///
    /// Keep the last value seen; when it differs, restart the quiet delay before compressing.
    pub fn compression_activity(&self) -> u64 {
        let mut activity = 0u64;
        // Safety: `raw` is live and `activity` a valid out-pointer; the call only reads terminal state.
        let rc = unsafe { ffi::ghostty_terminal_compression_activity(self.raw, &raw mut activity) };
        check(rc).expect("libghostty-vt answers the compression activity of a live terminal");
        activity
    }

    /// Compresses cold history as `mode` says and answers what remains to schedule (see [`Compression`]).
    ///
    /// Takes `&mut self`: the terminal's storage changes, though nothing it holds or answers does. The call
    /// is not marked as inside libghostty (see the module documentation), so the pages it discards go back to
    /// the kernel.
    pub fn compress(&mut self, mode: CompressionMode) -> Result<Compression> {
        let mode = match mode {
            CompressionMode::Incremental => ffi::GHOSTTY_TERMINAL_COMPRESSION_MODE_INCREMENTAL,
            CompressionMode::Full => ffi::GHOSTTY_TERMINAL_COMPRESSION_MODE_FULL,
        };
        let mut result = ffi::GHOSTTY_TERMINAL_COMPRESSION_RESULT_UNSUPPORTED;
        // Safety: `raw` is live and only this thread uses it (`Terminal` is `!Send`); `mode` is one the library
        // declares and `result` a valid out-pointer. No callback runs during compression.
        check(unsafe { ffi::ghostty_terminal_compress(self.raw, mode, &raw mut result) })?;
        match result {
            ffi::GHOSTTY_TERMINAL_COMPRESSION_RESULT_UNSUPPORTED => Ok(Compression::Unsupported),
            ffi::GHOSTTY_TERMINAL_COMPRESSION_RESULT_PENDING => Ok(Compression::Pending),
            ffi::GHOSTTY_TERMINAL_COMPRESSION_RESULT_COMPLETE => Ok(Compression::Complete),
            other => Err(Error::Unknown(other)),
        }
    }
}

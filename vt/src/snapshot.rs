//! libghostty's binary snapshot of a terminal, which holds both screens, their history, the modes, the saved
//! cursors, the title and the parser's state. Two uses: a scratch copy, which the checkpoint uses to read the
//! primary screen while the alternate one is active (the copy leaves the alternate screen, as the program will,
//! and what it then shows is what the live terminal will show at that moment, without touching the live
//! terminal); and a terminal handed to another process ([`Terminal::snapshot`], [`Terminal::from_snapshot`]),
//! which the daemon's in-place upgrade does.
//!
//! The snapshot's format is libghostty's "version 1, work in progress, no binary-compatibility guarantee": a
//! snapshot is only ever read back by the library revision that wrote it ([`crate::ffi::GHOSTTY_REVISION`]),
//! and whoever keeps one says which revision made it.

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::callbacks::CallbackState;
use crate::error::{Error, Result, check};
use crate::ffi;
use crate::pages::Inside;
use crate::terminal::Terminal;

/// A snapshot libghostty encoded, freed on drop.
struct Encoded {
    bytes: *mut u8,
    len: usize,
}

impl Encoded {
    fn as_slice(&self) -> &[u8] {
        // Safety: the encoder wrote `len` bytes at `bytes`, which live until `drop`.
        unsafe { std::slice::from_raw_parts(self.bytes, self.len) }
    }
}

impl Drop for Encoded {
    fn drop(&mut self) {
        // Safety: allocated by the encoder with the default allocator, `len` bytes, freed once.
        unsafe { ffi::ghostty_free(std::ptr::null(), self.bytes, self.len) };
    }
}

impl Terminal {
    /// Encodes this terminal's snapshot.
    fn encode(&self) -> Result<Encoded> {
        let (mut bytes, mut len) = (std::ptr::null_mut::<u8>(), 0usize);
        // Safety: `raw` is live; a null allocator selects the default one; both out-pointers are valid.
        check(unsafe { ffi::ghostty_snapshot_encode_alloc(self.raw, std::ptr::null(), &raw mut bytes, &raw mut len) })?;
        Ok(Encoded { bytes, len })
    }

    /// A copy of this terminal, with no callbacks installed (it is only read and fed sequences that need no
    /// answer). Costs about the terminal's size in memory and a few milliseconds per 10,000 rows of history.
    /// Refused ([`Error::InvalidValue`]) while a control sequence is incomplete, so that what the copy is fed
    /// is never taken as the rest of it.
    pub(crate) fn scratch_copy(&self) -> Result<Terminal> {
        if !self.in_ground() {
            return Err(Error::InvalidValue);
        }
        let encoded = self.encode()?;
        let raw = decode(encoded.as_slice())?;
        let shared = NonNull::from(Box::leak(Box::<CallbackState>::default()));
        Ok(Terminal { raw, shared, _not_send: PhantomData })
    }

    /// This terminal's binary snapshot: everything it holds, for [`Terminal::from_snapshot`] in another process
    /// (the replies and title change not yet taken are not part of it). A control sequence the output ended in
    /// is part of it up to [`crate::MAX_CONTINUATION_BYTES`]; with more of it pending, the snapshot is refused
    /// ([`Error::InvalidValue`]) until [`Terminal::write_until_ground`] has fed the rest. Only the same library revision reads it
    /// back ([`crate::ffi::GHOSTTY_REVISION`]: the format has no compatibility guarantee). Costs about the
    /// terminal's size in memory and a few milliseconds per 10,000 rows of history.
    pub fn snapshot(&self) -> Result<Vec<u8>> {
        Ok(self.encode()?.as_slice().to_vec())
    }

    /// The terminal a [`Terminal::snapshot`] holds, with this binding's callbacks installed (a decoded terminal
    /// has none) and at most about `max_scrollback` lines of history from now on, like [`Terminal::new`]. Bytes
    /// that are no snapshot of this library revision are refused (or, the format being unchecked, may decode
    /// to a different terminal: only hand it snapshots of the same revision).
    pub fn from_snapshot(bytes: &[u8], max_scrollback: usize) -> Result<Terminal> {
        if bytes.is_empty() {
            return Err(Error::InvalidValue);
        }
        crate::pages::linked();
        // The pages libghostty maps for the terminal are recorded as its own (see `pages`).
        let _inside = Inside::call();
        let raw = decode(bytes)?;
        Terminal::adopt(raw, max_scrollback)
    }
}

/// A terminal on its way to another thread ([`Terminal::detach`]): made (decoded from a snapshot, fed the output
/// that followed it) on one thread and used on another, which an in-place upgrade does to rebuild emulators
/// off the threads that serve their terminals. It can only be turned back into a [`Terminal`]
/// ([`Detached::attach`]): nothing can be called on it in between.
#[derive(Debug)]
pub struct Detached(Terminal);

// Safety: a `Terminal` is `!Send` only so that no two threads call into it at once and its callbacks run on
// the thread that writes. A `Detached` owns its terminal alone (the libghostty handle and the callback state
// behind its userdata pointer, which nothing else refers to) and offers no call at all, so no call can be in
// progress while it moves; libghostty keeps no per-thread state for a terminal (the page record of `pages` is
// process-wide and its thread-local mark is only held for the length of one call), so the thread that attaches
// it may use it as if it had made it.
unsafe impl Send for Detached {}

impl Terminal {
    /// This terminal, to move to another thread (see [`Detached`]).
    pub fn detach(self) -> Detached {
        Detached(self)
    }
}

impl Detached {
    /// The terminal, on the thread that will use it from now on.
    pub fn attach(self) -> Terminal {
        self.0
    }
}

/// A terminal handle decoded from `bytes`, without callbacks.
fn decode(bytes: &[u8]) -> Result<ffi::GhosttyTerminal> {
    let mut decoder: ffi::GhosttySnapshotDecoder = std::ptr::null_mut();
    let mut raw: ffi::GhosttyTerminal = std::ptr::null_mut();
    // The terminal's pages are recorded as libghostty's, like a new terminal's (see `pages`).
    let _inside = Inside::call();
    // Safety: `bytes` is valid for its length for the whole call; the decoder, made from them, is freed before
    // this returns; `decoder` and `raw` are valid out-pointers.
    unsafe {
        check(ffi::ghostty_snapshot_decoder_new_buf(std::ptr::null(), &raw mut decoder, bytes.as_ptr(), bytes.len()))?;
        let result = check(ffi::ghostty_snapshot_decoder_decode(decoder, &raw mut raw));
        ffi::ghostty_snapshot_decoder_free(decoder);
        result?;
    }
    Ok(raw)
}

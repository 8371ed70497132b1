//! A scratch copy of a terminal through libghostty's binary snapshot, which holds both screens, their history,
//! the modes and the saved cursors. The checkpoint uses it to read the primary screen while the alternate one
//! is active: the copy leaves the alternate screen (as the program will), and what it then shows is what the
//! live terminal will show at that moment, without touching the live terminal.

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::callbacks::CallbackState;
use crate::error::{Result, check};
use crate::ffi;
use crate::pages::Inside;
use crate::terminal::Terminal;

impl Terminal {
    /// A copy of this terminal, with no callbacks installed (it is only read and fed sequences that need no
    /// answer). Costs about the terminal's size in memory and a few milliseconds per 10,000 rows of history.
    pub(crate) fn scratch_copy(&self) -> Result<Terminal> {
        let (mut bytes, mut len) = (std::ptr::null_mut::<u8>(), 0usize);
        // Safety: `raw` is live; a null allocator selects the default one; both out-pointers are valid.
        check(unsafe { ffi::ghostty_snapshot_encode_alloc(self.raw, std::ptr::null(), &raw mut bytes, &raw mut len) })?;
        let mut decoder: ffi::GhosttySnapshotDecoder = std::ptr::null_mut();
        let mut raw: ffi::GhosttyTerminal = std::ptr::null_mut();
        // The copy's pages are recorded as libghostty's, like a new terminal's (see `pages`).
        let _inside = Inside::call();
        // Safety: `bytes` holds `len` bytes from the encoder until freed below; the decoder, made from them, is
        // freed before them; `raw` is a valid out-pointer.
        let decoded = unsafe {
            check(ffi::ghostty_snapshot_decoder_new_buf(std::ptr::null(), &raw mut decoder, bytes, len)).and_then(
                |()| {
                    let result = check(ffi::ghostty_snapshot_decoder_decode(decoder, &raw mut raw));
                    ffi::ghostty_snapshot_decoder_free(decoder);
                    result
                },
            )
        };
        // Safety: allocated by the encoder with the default allocator, `len` bytes, freed once.
        unsafe { ffi::ghostty_free(std::ptr::null(), bytes, len) };
        decoded?;
        let shared = NonNull::from(Box::leak(Box::<CallbackState>::default()));
        Ok(Terminal { raw, shared, _not_send: PhantomData })
    }
}

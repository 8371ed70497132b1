//! Callbacks libghostty-vt calls from inside `vt_write`: they copy bytes or set a flag and return.
//!
//! They never block, never re-enter libghostty and never unwind into C: a panic is caught, stored, and
//! resumed by [`CallbackState::resume_panic`] once the C call has returned.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::ffi;

/// The most reply bytes kept between two [`crate::Terminal::take_replies`] calls. A child that floods the
/// terminal with queries beyond this loses the excess replies instead of growing the daemon's memory.
pub const MAX_PENDING_REPLY_BYTES: usize = 1 << 20;

/// The state the callbacks share with the terminal, reached through the single userdata pointer.
///
/// It is a leaked box owned by the terminal (moving the terminal never moves or re-asserts it), freed only
/// after the libghostty handle is freed. Only shared references are ever made to it, so a callback and the
/// owning terminal never alias a `&mut`; its mutable parts are cells.
#[derive(Default)]
pub(crate) struct CallbackState {
    /// Bytes the emulator wants written back to the PTY (query answers), in order.
    replies: RefCell<Vec<u8>>,
    /// Reply bytes dropped because [`MAX_PENDING_REPLY_BYTES`] was reached.
    dropped_replies: Cell<u64>,
    /// Set by OSC 0/2; cleared by [`CallbackState::take_title_changed`].
    title_changed: Cell<bool>,
    /// A panic caught inside a callback, resumed after the C call returns.
    panic: RefCell<Option<Box<dyn Any + Send>>>,
}

impl std::fmt::Debug for CallbackState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackState")
            .field("pending_replies", &self.replies.borrow().len())
            .field("dropped_replies", &self.dropped_replies.get())
            .field("title_changed", &self.title_changed.get())
            .finish()
    }
}

impl CallbackState {
    pub(crate) fn take_replies(&self) -> Vec<u8> {
        std::mem::take(&mut *self.replies.borrow_mut())
    }

    pub(crate) fn dropped_replies(&self) -> u64 {
        self.dropped_replies.get()
    }

    pub(crate) fn take_title_changed(&self) -> bool {
        self.title_changed.replace(false)
    }

    /// Re-raises a panic a callback caught during the C call that just returned.
    pub(crate) fn resume_panic(&self) {
        if let Some(payload) = self.panic.borrow_mut().take() {
            std::panic::resume_unwind(payload);
        }
    }

    fn push_reply(&self, bytes: &[u8]) {
        let mut replies = self.replies.borrow_mut();
        let room = MAX_PENDING_REPLY_BYTES.saturating_sub(replies.len());
        let kept = bytes.len().min(room);
        replies.extend_from_slice(&bytes[..kept]);
        let dropped = (bytes.len() - kept) as u64;
        self.dropped_replies.set(self.dropped_replies.get() + dropped);
    }

    /// Runs `body` on the shared state behind `userdata`, storing any panic instead of unwinding.
    ///
    /// # Safety
    /// `userdata` must be the pointer installed by [`crate::Terminal::new`], still alive.
    unsafe fn guard(userdata: *mut c_void, body: impl FnOnce(&CallbackState)) {
        // Safety: the caller guarantees `userdata` points at the live boxed `CallbackState` of this terminal, and
        // only shared references to it exist while libghostty runs.
        let shared = unsafe { &*(userdata as *const CallbackState) };
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| body(shared))) {
            shared.panic.borrow_mut().get_or_insert(payload);
        }
    }
}

/// `WRITE_PTY`: copy the reply; the actor moves it to the PTY writer after `vt_write` returns.
pub(crate) unsafe extern "C" fn on_write_pty(
    _terminal: ffi::GhosttyTerminal,
    userdata: *mut c_void,
    data: *const u8,
    len: usize,
) {
    // Safety: libghostty passes back the userdata we installed; `data` is valid for `len` bytes for the
    // duration of this call (a null pointer only with `len == 0`, which we skip).
    unsafe {
        CallbackState::guard(userdata, |shared| {
            if !data.is_null() && len > 0 {
                shared.push_reply(std::slice::from_raw_parts(data, len));
            }
        })
    }
}

/// `TITLE_CHANGED`: only set a flag; the title is read after `vt_write` returns.
pub(crate) unsafe extern "C" fn on_title_changed(_terminal: ffi::GhosttyTerminal, userdata: *mut c_void) {
    // Safety: libghostty passes back the userdata we installed.
    unsafe { CallbackState::guard(userdata, |shared| shared.title_changed.set(true)) }
}

/// A formatter sink appending to a `Vec<u8>` and refusing to grow past a limit.
#[derive(Debug)]
pub(crate) struct Sink {
    pub(crate) out: Vec<u8>,
    pub(crate) limit: usize,
    /// True when a write was refused because of `limit`.
    pub(crate) overflowed: bool,
}

/// Formatter writer callback over a [`Sink`].
pub(crate) unsafe extern "C" fn on_format_write(userdata: *mut c_void, data: *const u8, len: usize) -> bool {
    let write = || {
        // Safety: `userdata` is the `&mut Sink` passed to `ghostty_formatter_format` by `Terminal::format`, which
        // holds no other reference to it during the call; `data` is valid for `len` bytes.
        let sink = unsafe { &mut *(userdata as *mut Sink) };
        if len == 0 || data.is_null() {
            return true;
        }
        if sink.out.len() + len > sink.limit {
            sink.overflowed = true;
            return false;
        }
        // Safety: as above, `data` is valid for `len` bytes for the duration of this call.
        sink.out.extend_from_slice(unsafe { std::slice::from_raw_parts(data, len) });
        true
    };
    // A panic here can only come from a capacity overflow (allocation failure aborts); refuse the write
    // rather than unwind into C.
    catch_unwind(AssertUnwindSafe(write)).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_a_callback_is_held_until_the_c_call_returns() {
        let shared = CallbackState::default();
        let userdata = (&raw const shared).cast_mut().cast::<c_void>();
        // Safety: `userdata` points at `shared`, alive for the whole test.
        unsafe { CallbackState::guard(userdata, |_| panic!("boom")) };
        // The callback returned normally; the panic surfaces only when resumed.
        let resumed = std::panic::catch_unwind(AssertUnwindSafe(|| shared.resume_panic()));
        let payload = resumed.expect_err("the stored panic is resumed");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
        // Once resumed, it is gone.
        shared.resume_panic();
    }

    #[test]
    fn replies_past_the_limit_are_dropped_and_counted() {
        let shared = CallbackState::default();
        shared.push_reply(&vec![b'x'; MAX_PENDING_REPLY_BYTES - 1]);
        shared.push_reply(b"abc");
        assert_eq!(shared.take_replies().len(), MAX_PENDING_REPLY_BYTES);
        assert_eq!(shared.dropped_replies(), 2);
    }

    #[test]
    fn format_sink_refuses_to_grow_past_its_limit() {
        let mut sink = Sink { out: Vec::new(), limit: 4, overflowed: false };
        let userdata = (&raw mut sink).cast::<c_void>();
        // Safety: `userdata` is the only reference to `sink` during these calls; the data is a live slice.
        unsafe {
            assert!(on_format_write(userdata, b"abc".as_ptr(), 3));
            assert!(!on_format_write(userdata, b"de".as_ptr(), 2));
        }
        assert_eq!(sink.out, b"abc");
        assert!(sink.overflowed);
    }
}

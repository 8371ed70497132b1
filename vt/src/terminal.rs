//! [`Terminal`]: one libghostty-vt emulator, its input, geometry and state queries.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::callbacks::{self, CallbackState};
use crate::error::{Error, Result, check};
use crate::ffi;
use crate::pages::Inside;

/// Which screen buffer is active.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Screen {
    /// The normal screen, with scrollback.
    Primary,
    /// The alternate screen (`?1049h` and friends), without scrollback.
    Alternate,
}

/// Which of the two sets of terminal modes a mode number belongs to (the same number can name one in each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModeKind {
    /// A DEC private mode, set with `CSI ? n h` (`?7` autowrap, `?1049` the alternate screen).
    Dec,
    /// An ANSI mode, set with `CSI n h` (`4` insert).
    Ansi,
}

/// The cursor's shape as DECSCUSR (`CSI n SP q`) sets it; whether it blinks is [`CursorStyle::blinking`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CursorShape {
    /// A block (the default; libghostty's hollow block, for an unfocused window, counts as one).
    Block,
    /// An underline.
    Underline,
    /// A vertical bar.
    Bar,
}

/// How the cursor is drawn: its shape and whether it blinks, both set by DECSCUSR (`CSI n SP q`, odd `n`
/// blinking), the blink also by mode `?12`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CursorStyle {
    /// The shape.
    pub shape: CursorShape,
    /// Whether it blinks.
    pub blinking: bool,
}

impl CursorStyle {
    /// A fresh terminal's cursor: a steady block (what `CSI 0 SP q` and `CSI 2 SP q` set too).
    pub const DEFAULT: CursorStyle = CursorStyle { shape: CursorShape::Block, blinking: false };

    /// The DECSCUSR parameter that sets this style: 1 and 2 a blinking and a steady block, 3 and 4 an
    /// underline, 5 and 6 a bar.
    pub fn decscusr(self) -> u8 {
        let steady = u8::from(!self.blinking);
        match self.shape {
            CursorShape::Block => 1 + steady,
            CursorShape::Underline => 3 + steady,
            CursorShape::Bar => 5 + steady,
        }
    }
}

/// The cursor of the active screen, in zero-based active-area coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cursor {
    /// Column.
    pub x: u16,
    /// Row of the active area (not counting history).
    pub y: u16,
    /// The last column was written and the next printable character wraps first.
    pub pending_wrap: bool,
    /// DECTCEM: the cursor is shown.
    pub visible: bool,
}

/// How much of a control sequence the output ended in a terminal keeps, so that its snapshot
/// ([`Terminal::snapshot`]) carries it and the decoded terminal takes the rest of it as the original would
/// (64 KiB: any CSI or title; a longer sequence, such as an image, must end before a snapshot is made).
pub const MAX_CONTINUATION_BYTES: usize = 64 * 1024;

/// One libghostty-vt terminal emulator.
///
/// `!Send` and `!Sync`: it is created, used and dropped on one thread, because libghostty state must not be
/// touched from two threads and its callbacks run on the thread that writes. Dropping it frees the handle.
#[derive(Debug)]
pub struct Terminal {
    pub(crate) raw: ffi::GhosttyTerminal,
    /// Callback state behind the userdata pointer: a leaked box, so moving the terminal never invalidates
    /// the pointer libghostty holds. Freed in `Drop`, after `raw`.
    pub(crate) shared: NonNull<CallbackState>,
    /// Makes the type `!Send` and `!Sync`.
    pub(crate) _not_send: PhantomData<*mut ()>,
}

impl Terminal {
    /// Creates a terminal of `cols` x `rows` keeping at most about `max_scrollback` lines of history.
    ///
    /// libghostty enforces the line limit a page at a time, so slightly fewer lines may be kept; history has
    /// no byte limit beyond that.
    pub fn new(cols: u16, rows: u16, max_scrollback: usize) -> Result<Terminal> {
        if cols == 0 || rows == 0 {
            return Err(Error::ZeroSize { cols, rows });
        }
        crate::pages::linked();
        // The pages libghostty maps for the terminal are recorded as its own (see `pages`).
        let _inside = Inside::call();
        let mut raw: ffi::GhosttyTerminal = std::ptr::null_mut();
        // Safety: a null allocator selects the default one; `raw` is a valid out-pointer.
        check(unsafe { ffi::ghostty_terminal_new(std::ptr::null(), &raw mut raw, cols, rows) })?;
        Terminal::adopt(raw, max_scrollback)
    }

    /// Wraps a handle libghostty just made (new or decoded from a snapshot): its callback state, the callbacks
    /// themselves and the history limits. The handle is freed with the terminal, on failure too.
    pub(crate) fn adopt(raw: ffi::GhosttyTerminal, max_scrollback: usize) -> Result<Terminal> {
        let shared = NonNull::from(Box::leak(Box::<CallbackState>::default()));
        let terminal = Terminal { raw, shared, _not_send: PhantomData };
        let userdata: *const CallbackState = shared.as_ptr();
        let write_pty: ffi::GhosttyTerminalWritePtyFn = callbacks::on_write_pty;
        let title_changed: ffi::GhosttyTerminalTitleChangedFn = callbacks::on_title_changed;
        let lines: usize = max_scrollback;
        let continuation: usize = MAX_CONTINUATION_BYTES;
        // Safety: callbacks and userdata are passed as the pointer itself, scalars as a pointer to the value,
        // and null clears the byte limit. The leaked `CallbackState` outlives the handle (see Drop).
        unsafe {
            terminal.set(ffi::GHOSTTY_TERMINAL_OPT_USERDATA, userdata.cast())?;
            terminal.set(ffi::GHOSTTY_TERMINAL_OPT_WRITE_PTY, write_pty as *const c_void)?;
            terminal.set(ffi::GHOSTTY_TERMINAL_OPT_TITLE_CHANGED, title_changed as *const c_void)?;
            terminal.set(ffi::GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_LINES, (&raw const lines).cast())?;
            terminal.set(ffi::GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_BYTES, std::ptr::null())?;
            terminal.set(ffi::GHOSTTY_TERMINAL_OPT_CONTINUATION_MAX_BYTES, (&raw const continuation).cast())?;
        }
        Ok(terminal)
    }

    /// The callback state. Only shared references to it are ever made, by us and by the callbacks.
    fn shared(&self) -> &CallbackState {
        // Safety: `shared` came from a leaked box that lives until `Drop`; nothing makes a `&mut` to it.
        unsafe { self.shared.as_ref() }
    }

    /// # Safety
    /// `value` must be what libghostty expects for `option` (see the header of `ghostty_terminal_set`).
    unsafe fn set(&self, option: ffi::GhosttyTerminalOption, value: *const c_void) -> Result<()> {
        // Safety: `raw` is live; the caller vouches for `value`.
        check(unsafe { ffi::ghostty_terminal_set(self.raw, option, value) })
    }

    /// Feeds bytes from the PTY to the emulator. Replies and title changes are collected for
    /// [`Terminal::take_replies`] and [`Terminal::take_title_changed`].
    pub fn write(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        // Pages libghostty maps while parsing are recorded and made writable up front, and the ones it
        // recycles are zeroed in place (see `pages`).
        let _parsing = Inside::parsing();
        // Safety: `raw` is live and `bytes` is valid for its length; callbacks only touch `shared`.
        unsafe { ffi::ghostty_terminal_vt_write(self.raw, bytes.as_ptr(), bytes.len()) };
        self.shared().resume_panic();
    }

    /// Feeds bytes as [`Terminal::write`] does, but only until the parser is back in its ground state (the end
    /// of the control sequence the output was in the middle of); answers how many bytes it took (all of them
    /// when the sequence does not end within them, none when no sequence was incomplete).
    pub fn write_until_ground(&mut self, bytes: &[u8]) -> usize {
        if bytes.is_empty() || self.in_ground() {
            return 0;
        }
        let _parsing = Inside::parsing();
        let mut consumed = 0usize;
        // Safety: `raw` is live, `bytes` is valid for its length and `consumed` is a valid out-pointer; callbacks
        // only touch `shared`.
        let rc = unsafe {
            ffi::ghostty_terminal_vt_write_until_ground(self.raw, bytes.as_ptr(), bytes.len(), &raw mut consumed)
        };
        self.shared().resume_panic();
        // NO_VALUE: every byte was taken and the sequence goes on.
        if rc == ffi::GHOSTTY_NO_VALUE { bytes.len() } else { consumed.min(bytes.len()) }
    }

    /// Whether the parser is in its ground state: no control sequence (or UTF-8 character) is incomplete.
    pub fn in_ground(&self) -> bool {
        self.get_bool(ffi::GHOSTTY_TERMINAL_DATA_VT_GROUND)
    }

    /// Takes the bytes the emulator wants written back to the PTY (answers to DA1, DSR, ...), in order.
    pub fn take_replies(&mut self) -> Vec<u8> {
        self.shared().take_replies()
    }

    /// How many reply bytes were dropped because more than [`crate::MAX_PENDING_REPLY_BYTES`] were pending.
    pub fn dropped_reply_bytes(&self) -> u64 {
        self.shared().dropped_replies()
    }

    /// True once after an OSC 0 or OSC 2 title sequence (even one that set the same title).
    pub fn take_title_changed(&mut self) -> bool {
        self.shared().take_title_changed()
    }

    /// The title set by OSC 0/2, or `None` when unset or set to the empty string.
    pub fn title(&self) -> Option<String> {
        let mut out = ffi::GhosttyString { ptr: std::ptr::null(), len: 0 };
        // Safety: TITLE writes a GhosttyString borrowed from the terminal, copied before any mutation.
        let rc = unsafe { self.get(ffi::GHOSTTY_TERMINAL_DATA_TITLE, &mut out) };
        if rc.is_err() || out.ptr.is_null() || out.len == 0 {
            return None;
        }
        // Safety: libghostty guarantees `len` readable bytes at `ptr` until the next mutating call.
        let bytes = unsafe { std::slice::from_raw_parts(out.ptr, out.len) };
        Some(String::from_utf8_lossy(bytes).into_owned())
    }

    /// Resizes the terminal, reflowing soft-wrapped lines of the primary screen.
    pub fn resize(&mut self, cols: u16, rows: u16) -> Result<()> {
        if cols == 0 || rows == 0 {
            return Err(Error::ZeroSize { cols, rows });
        }
        // Reflowing maps and discards pages (see `pages`).
        let _inside = Inside::call();
        // Safety: `raw` is live; pixel sizes of zero only affect pixel size reports.
        let rc = unsafe { ffi::ghostty_terminal_resize(self.raw, cols, rows, 0, 0) };
        self.shared().resume_panic();
        check(rc)
    }

    /// `(cols, rows)`.
    pub fn size(&self) -> (u16, u16) {
        (self.get_u16(ffi::GHOSTTY_TERMINAL_DATA_COLS), self.get_u16(ffi::GHOSTTY_TERMINAL_DATA_ROWS))
    }

    /// The cursor of the active screen.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            x: self.get_u16(ffi::GHOSTTY_TERMINAL_DATA_CURSOR_X),
            y: self.get_u16(ffi::GHOSTTY_TERMINAL_DATA_CURSOR_Y),
            pending_wrap: self.get_bool(ffi::GHOSTTY_TERMINAL_DATA_CURSOR_PENDING_WRAP),
            visible: self.get_bool(ffi::GHOSTTY_TERMINAL_DATA_CURSOR_VISIBLE),
        }
    }

    /// The active screen buffer.
    pub fn active_screen(&self) -> Screen {
        let mut value: ffi::GhosttyTerminalScreen = ffi::GHOSTTY_TERMINAL_SCREEN_PRIMARY;
        // Safety: ACTIVE_SCREEN writes one C int.
        unsafe { self.get(ffi::GHOSTTY_TERMINAL_DATA_ACTIVE_SCREEN, &mut value) }
            .expect("libghostty-vt answers the active screen query");
        if value == ffi::GHOSTTY_TERMINAL_SCREEN_ALTERNATE { Screen::Alternate } else { Screen::Primary }
    }

    /// The cursor's shape (DECSCUSR), as a renderer would draw it.
    pub fn cursor_shape(&self) -> Result<CursorShape> {
        self.cursor_style().map(|style| style.shape)
    }

    /// The cursor's shape and blink, as a renderer would draw them. The terminal's own queries do not hold
    /// the shape (its "cursor style" is the pen), so a render state is made for the question and freed after.
    pub fn cursor_style(&self) -> Result<CursorStyle> {
        let mut state: ffi::GhosttyRenderState = std::ptr::null_mut();
        // Safety: a null allocator selects the default one; `state` is a valid out-pointer.
        check(unsafe { ffi::ghostty_render_state_new(std::ptr::null(), &raw mut state) })?;
        let mut shape = ffi::GHOSTTY_RENDER_STATE_CURSOR_VISUAL_STYLE_BLOCK;
        let mut blinking = false;
        // Safety: `state` is live until freed below and `raw` is live; CURSOR_VISUAL_STYLE writes one C int
        // and CURSOR_BLINKING one C bool.
        let result = unsafe {
            check(ffi::ghostty_render_state_update(state, self.raw))
                .and_then(|()| {
                    let out = (&raw mut shape).cast();
                    check(ffi::ghostty_render_state_get(state, ffi::GHOSTTY_RENDER_STATE_DATA_CURSOR_VISUAL_STYLE, out))
                })
                .and_then(|()| {
                    let out = (&raw mut blinking).cast();
                    check(ffi::ghostty_render_state_get(state, ffi::GHOSTTY_RENDER_STATE_DATA_CURSOR_BLINKING, out))
                })
        };
        // Safety: `state` came from ghostty_render_state_new and is freed once.
        unsafe { ffi::ghostty_render_state_free(state) };
        result?;
        let shape = match shape {
            ffi::GHOSTTY_RENDER_STATE_CURSOR_VISUAL_STYLE_BAR => CursorShape::Bar,
            ffi::GHOSTTY_RENDER_STATE_CURSOR_VISUAL_STYLE_UNDERLINE => CursorShape::Underline,
            _ => CursorShape::Block,
        };
        Ok(CursorStyle { shape, blinking })
    }

    /// The kitty keyboard protocol flags in effect (`CSI > flags u`, `CSI = flags ; mode u`, popped with
    /// `CSI < u`); 0 when the protocol is off.
    pub fn kitty_keyboard_flags(&self) -> Result<u8> {
        // Read into a wider, zeroed value: the flags are one byte (GhosttyKittyKeyFlags), the low one here.
        let mut value = 0u32;
        // Safety: KITTY_KEYBOARD_FLAGS writes a GhosttyKittyKeyFlags (a uint8_t), which `value` has room for.
        unsafe { self.get(ffi::GHOSTTY_TERMINAL_DATA_KITTY_KEYBOARD_FLAGS, &mut value)? };
        Ok(value.to_le_bytes()[0])
    }

    /// Rows of the active screen including its history (the alternate screen has none).
    pub fn total_rows(&self) -> usize {
        self.get_usize(ffi::GHOSTTY_TERMINAL_DATA_TOTAL_ROWS)
    }

    /// Rows of history above the active area of the active screen.
    pub fn scrollback_rows(&self) -> usize {
        self.get_usize(ffi::GHOSTTY_TERMINAL_DATA_SCROLLBACK_ROWS)
    }

    /// Whether a mode is set: `mode(1049, ModeKind::Dec)` for DEC private `?1049`, `mode(4, ModeKind::Ansi)`
    /// for ANSI insert. Unknown modes read as an error.
    pub fn mode(&self, number: u16, kind: ModeKind) -> Result<bool> {
        let ansi = u16::from(kind == ModeKind::Ansi);
        let mut config = ffi::GhosttyTerminalModeConfig { mode: (number & 0x7FFF) | (ansi << 15), value: false };
        // Safety: MODE reads `mode` from and writes `value` to a GhosttyTerminalModeConfig.
        unsafe { self.get(ffi::GHOSTTY_TERMINAL_DATA_MODE, &mut config)? };
        Ok(config.value)
    }

    /// # Safety
    /// `T` must be the output type libghostty documents for `data`.
    pub(crate) unsafe fn get<T>(&self, data: ffi::GhosttyTerminalData, out: &mut T) -> Result<()> {
        // Safety: `raw` is live; the caller vouches that `T` matches `data`.
        check(unsafe { ffi::ghostty_terminal_get(self.raw, data, (out as *mut T).cast()) })
    }

    // The queries below cannot fail for a live terminal (they only read fields); a failure would be a
    // binding bug, so it panics rather than hand out a zero that later code would index with.

    fn get_u16(&self, data: ffi::GhosttyTerminalData) -> u16 {
        let mut value = 0u16;
        // Safety: COLS, ROWS, CURSOR_X and CURSOR_Y are u16.
        unsafe { self.get(data, &mut value) }.expect("libghostty-vt answers a u16 terminal query");
        value
    }

    fn get_bool(&self, data: ffi::GhosttyTerminalData) -> bool {
        let mut value = false;
        // Safety: CURSOR_PENDING_WRAP, CURSOR_VISIBLE and VT_GROUND are C bools.
        unsafe { self.get(data, &mut value) }.expect("libghostty-vt answers a bool terminal query");
        value
    }

    fn get_usize(&self, data: ffi::GhosttyTerminalData) -> usize {
        let mut value = 0usize;
        // Safety: TOTAL_ROWS and SCROLLBACK_ROWS are size_t.
        unsafe { self.get(data, &mut value) }.expect("libghostty-vt answers a size_t terminal query");
        value
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _inside = Inside::call();
        // Safety: `raw` came from ghostty_terminal_new and is freed once; `shared` came from `Box::leak` and
        // is reclaimed once, after the handle is gone, so no callback can see a dangling userdata pointer.
        unsafe {
            ffi::ghostty_terminal_free(self.raw);
            drop(Box::from_raw(self.shared.as_ptr()));
        }
    }
}

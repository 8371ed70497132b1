//! VT checkpoints: bytes that rebuild history, screen, cursor, modes and title in a fresh terminal of the
//! same size.
//!
//! The formatter's raw VT output does not round-trip, so the checkpoint is assembled in parts:
//! 1. Old history goes through the formatter (fast) in runs of logical lines with soft wraps joined; after
//!    each run, line feeds make up for the trailing blank rows the formatter leaves out, so every row is laid
//!    down. A line the formatter would get wrong is emitted cell by cell instead: one with a "bad join" (a
//!    wrapped row whose next row is blank or not its continuation, which the formatter swallows), with a
//!    row whose first or last cell holds only a background color (an erased colored line, which it drops),
//!    or, in the [`GAP_CHECKED_ROWS`] rows above the exact part, with a gap (a cell without text before one
//!    that shows something: the formatter fills gaps with spaces in the pen of the text before them and drops
//!    background-only cells among them). The formatter restarts a style run where one of libghostty's pages
//!    ends; those restarts are dropped (`canonical.rs`), so the same history laid in other pages (a decoded
//!    terminal) checkpoints to the same bytes.
//! 2. The active area and the last [`EXACT_HISTORY_ROWS`] rows of history are emitted cell by cell
//!    (`emit`), which reproduces gaps, background-only cells, soft wraps and spacer heads that the formatter
//!    gets wrong.
//! 3. One formatter run over active row 0 with every extra but palette and pwd supplies modes, tab stops,
//!    margins, pen, charsets and keyboard state; its re-print of row 0 and its cursor placement are dropped
//!    in favour of our own, which recreates a pending wrap by re-printing the last cell in its style.
//! 4. Alternate-screen modes go to the very front (the content must land on that screen); autowrap-off and
//!    insert mode go to the very end (they would corrupt the printing). The title goes first, as OSC 2.
//! 5. The formatter lists every mouse mode whose flag is set, in a fixed order, though only the last one set
//!    of each group (tracking, report format) is in effect: those are dropped, and the ones in effect (found
//!    by `mouse.rs`) are emitted with the other modes, followed by the cursor's shape and blink (DECSCUSR):
//!    the formatter carries the blink only as `?12` and the shape not at all.
//!
//! While the alternate screen is active, the primary screen's own checkpoint comes first, taken from a scratch
//! copy of the terminal (`snapshot.rs`) that leaves the alternate screen the way it was entered.
//!
//! The same copy carries the alternate screen's DECSC saved cursor (restored in the copy with DECRC, then set
//! again with DECSC after the content).
//!
//! Known limits: the DECSC saved cursor of the primary screen while it is active (a copy per checkpoint
//! would double its cost), hyperlinks in the old history the formatter lays (the exact part carries them,
//! `emit.rs`), per-cell protection (DECSCA), a tab stop in the last column and, when the oldest history
//! does not fit the checkpoint, the continuation flag of the first row laid are not carried; in history
//! older than the gap-checked rows, gaps between text replay as spaces in the pen of the text before them.
//! `just checkpoint-fidelity` measures the rest.

use std::io::Write;

use crate::canonical;
use crate::emit::{self, Entry};
use crate::error::{Error, Result};
use crate::format::{Format, Space};
use crate::inspect::RowFlags;
use crate::sgr;
use crate::terminal::{CursorStyle, ModeKind, Screen, Terminal};

/// Modes that select the alternate screen: they must precede the content.
const ALT_SCREEN_MODES: [&str; 3] = ["1049", "1047", "47"];

/// What the alternate screen's content is laid from, after the primary screen's part: default pen and
/// character set, insert mode, origin mode and left/right margin mode off, autowrap on, no margins, home,
/// and the screen erased in the default colours (the switch happens in the primary screen's pen, which it
/// saves; some emulators, xterm.js among them, fill the new screen with that pen's background).
const ALTERNATE_CONTENT_START: &[u8] = b"\x1b[0m\x1b(B\x0f\x1b[4l\x1b[?6l\x1b[?7h\x1b[?69l\x1b[r\x1b[H\x1b[2J";

/// The mouse tracking and report format modes. The formatter lists each one whose flag is set, in a fixed
/// order, but of each group only the last one set is in effect: they are dropped from its output, and the
/// ones in effect are emitted instead (see [`Terminal::push_input_state`]).
const MOUSE_MODES: [&str; 8] = ["9", "1000", "1002", "1003", "1005", "1006", "1015", "1016"];

/// History rows above the active area that are emitted cell by cell too. Reading cells costs about 0.1 µs
/// each, so this bounds the exact part at `(rows + EXACT_HISTORY_ROWS) * cols` cells; older history goes
/// through the formatter, which is some 20 times cheaper per row but less faithful (see the module docs).
pub const EXACT_HISTORY_ROWS: usize = 200;

/// History rows above the exact part whose lines are looked at for gaps (a cell without text before one that
/// shows text or a background color): the formatter fills a gap with spaces in the pen of the text before it
/// and drops background-only cells there, so such a line is emitted cell by cell. Reading a row's cells and
/// emitting gapped lines exactly costs several times the formatter (logs with tabs have a gap on most
/// lines), so this bounds it at `GAP_CHECKED_ROWS * cols` cells; older lines with gaps keep the formatter's
/// spaces (SPEC C3).
pub const GAP_CHECKED_ROWS: usize = 1000;

/// Every character set back to ASCII and G0 invoked into GL: what a fresh terminal has.
const DEFAULT_CHARSETS: &[u8] = b"\x1b(B\x1b)B\x1b*B\x1b+B\x0f";

/// The most rows walked back from the exact part to the start of the logical line that crosses into it.
const MAX_LOGICAL_LINE_WALK: usize = 256;

/// The largest checkpoint [`Terminal::vt_checkpoint`] produces. Base64 in a JSON event grows it by a third,
/// and the event must fit one 8 MiB frame: 5 MiB leaves room for the rest of the event.
pub const MAX_CHECKPOINT_BYTES: usize = 5 << 20;

impl Terminal {
    /// VT bytes that rebuild this terminal's history, screen, cursor, modes and title when written to a
    /// fresh terminal of the same size (see the module docs for what cannot be carried). Fails with
    /// [`Error::CheckpointTooLarge`] rather than exceed [`MAX_CHECKPOINT_BYTES`].
    pub fn vt_checkpoint(&self) -> Result<Vec<u8>> {
        self.vt_checkpoint_within(MAX_CHECKPOINT_BYTES)
    }

    /// [`Terminal::vt_checkpoint`] with another size limit. While the alternate screen is active, the primary
    /// screen and its history come first (as much of them as fits beside the alternate screen's part), so
    /// that leaving the alternate screen after a replay shows what the live terminal would.
    pub fn vt_checkpoint_within(&self, limit: usize) -> Result<Vec<u8>> {
        if self.active_screen() != Screen::Alternate {
            return self.active_checkpoint(limit, None);
        }
        // A copy to read what the live terminal holds but cannot show: the alternate screen's saved cursor
        // (restored in the copy with DECRC), then the primary screen (the copy leaves the alternate one).
        let mut scratch = match self.scratch_copy() {
            Ok(scratch) => scratch,
            // libghostty will not copy a terminal while a control sequence is incomplete (output that ended
            // mid-sequence, which TUIs often do between two reads): the alternate screen alone, then, rather
            // than no checkpoint (found by fuzzing; SPEC C3).
            Err(Error::InvalidValue) => return self.active_checkpoint(limit, None),
            Err(error) => return Err(error),
        };
        scratch.write(b"\x1b8");
        let saved = scratch.saved_cursor_setup()?;
        let active = self.active_checkpoint(limit, Some(&saved))?;
        match self.primary_checkpoint(scratch, limit - active.len())? {
            Some(mut primary) => {
                primary.extend_from_slice(&active);
                Ok(primary)
            }
            None => Ok(active),
        }
    }

    /// What sets the cursor DECSC saved again, read from a copy whose cursor DECRC has just restored: its
    /// position (absolute: laid before the margins and origin mode are set), its pen and character sets, and
    /// DECSC.
    fn saved_cursor_setup(&self) -> Result<Vec<u8>> {
        let state = self.format_rows(state_format(), Space::Active, 0, 0, usize::MAX)?;
        let parts = split_state(&state, false);
        let cursor = self.cursor();
        let mut out = format!("\x1b[{};{}H", cursor.y + 1, cursor.x + 1).into_bytes();
        out.extend_from_slice(&parts.pen);
        out.extend_from_slice(b"\x1b7");
        // The saved character sets stay in effect after DECSC; what follows (the cursor's re-printed cell, under
        // a pending wrap) must be printed with the default ones, and the current pen sets the current ones
        // after it. (A non-ASCII character printed under DEC special graphics comes out as a space.)
        out.extend_from_slice(DEFAULT_CHARSETS);
        Ok(out)
    }

    /// The primary screen as the live terminal will show it once the program leaves the alternate screen:
    /// read from `scratch`, a copy of it, which leaves the alternate screen the way the program entered it
    /// (`?1049l` restores the cursor saved on entry), checkpointed within `room`; `None` when not even its
    /// screen fits.
    fn primary_checkpoint(&self, mut scratch: Terminal, room: usize) -> Result<Option<Vec<u8>>> {
        let leave: &[u8] = if self.mode(1049, ModeKind::Dec)? {
            b"\x1b[?1049l"
        } else if self.mode(1047, ModeKind::Dec)? {
            b"\x1b[?1047l"
        } else {
            b"\x1b[?47l"
        };
        scratch.write(leave);
        if scratch.active_screen() != Screen::Primary {
            return Ok(None);
        }
        match scratch.vt_checkpoint_within(room) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(Error::CheckpointTooLarge { .. }) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// The checkpoint of the active screen alone; `saved` sets the DECSC saved cursor again after the content.
    fn active_checkpoint(&self, limit: usize, saved: Option<&[u8]>) -> Result<Vec<u8>> {
        let too_large = || Error::CheckpointTooLarge { limit };
        let total = self.total_rows();
        let (cols, rows) = self.size();
        let top = total.saturating_sub(usize::from(rows));
        // Rows from `exact` on are emitted cell by cell: the active area and recent history, from the start
        // of the first logical line.
        let window = top.saturating_sub(EXACT_HISTORY_ROWS);
        let mut exact = window;
        while exact > 0 && window - exact < MAX_LOGICAL_LINE_WALK && self.row_flags(exact - 1)?.wrap {
            exact -= 1;
        }

        let state = self.format_rows(state_format(), Space::Active, 0, 0, usize::MAX)?;
        // The formatter re-prints the cell under a pending-wrap cursor only at the last column.
        let cursor = self.cursor();
        let parts = split_state(&state, cursor.pending_wrap && cursor.x + 1 == cols);

        let mut head = Vec::new();
        if let Some(title) = self.title() {
            head.extend_from_slice(b"\x1b]2;");
            head.extend(title.bytes().filter(|b| !b.is_ascii_control()));
            head.extend_from_slice(b"\x1b\\");
        }
        self.push_colors(&mut head)?;
        head.extend_from_slice(&parts.front);
        if self.active_screen() == Screen::Alternate {
            if parts.front.is_empty() {
                head.extend_from_slice(b"\x1b[?1049h");
            }
            // The primary screen's part may come before (with its pen, charsets, margins and modes, which the
            // alternate screen's own setup sets again after the content): lay the content from a clean state.
            head.extend_from_slice(ALTERNATE_CONTENT_START);
        }
        let mut tail = saved.unwrap_or_default().to_vec();
        tail.extend_from_slice(&parts.setup);
        self.push_input_state(&mut tail)?;
        self.place_cursor(&parts, &mut tail)?;
        tail.extend_from_slice(&parts.pen);
        tail.extend_from_slice(&parts.back);

        // A first row that continues a line whose start is gone (`CSI 3 J` removed it) is made such a row
        // before the content is laid on it (see `orphan_first_row`).
        let orphan = rows >= 2 && self.row_flags(0)?.continuation;
        let lead = if orphan { orphan_first_row(cols, rows) } else { Vec::new() };
        let room = limit.checked_sub(head.len() + tail.len() + lead.len()).ok_or_else(too_large)?;
        let (content, whole) = self.fit_content(exact, top, total, room).map_err(|e| match e {
            Error::BudgetExceeded { .. } => too_large(),
            other => other,
        })?;
        let mut out = head;
        out.reserve(lead.len() + content.len() + tail.len());
        if whole {
            // Only when the content starts at row 0: otherwise its first row is another one.
            out.extend_from_slice(&lead);
        }
        out.extend_from_slice(&content);
        out.extend_from_slice(&tail);
        if out.len() > limit {
            return Err(too_large());
        }
        Ok(out)
    }

    /// The mouse tracking mode and report format in effect, and the cursor's shape and blink as DECSCUSR
    /// unless they are a fresh terminal's (a steady block; on the alternate screen that one is set too, as
    /// `CSI 0 SP q`, since the primary screen's part may have set another). The formatter carries the blink
    /// only as mode `?12` (kept, for renderers that know only that) and not the shape; renderers that follow
    /// DECSCUSR (xterm.js, ghostty-web) take both from it, so a blinking block is carried as `CSI 1 SP q` too.
    fn push_input_state(&self, out: &mut Vec<u8>) -> Result<()> {
        let (tracking, format) = self.mouse_modes()?;
        for mode in [tracking.mode(), format.mode()].into_iter().flatten() {
            let _ = write!(out, "\x1b[?{mode}h");
        }
        let style = self.cursor_style()?;
        if style != CursorStyle::DEFAULT {
            let _ = write!(out, "\x1b[{} q", style.decscusr());
        } else if self.active_screen() == Screen::Alternate {
            // The primary screen's part before it may have set another style, which entering the alternate
            // screen keeps: back to the default (the renderer's own, which a fresh libghostty draws as this).
            out.extend_from_slice(b"\x1b[0 q");
        }
        Ok(())
    }

    /// Lays rows `from..upto` (`from` starting a logical line, `flags` holding the wrap flags of rows
    /// `0..=upto` as far as they exist) from column 0 of a fresh terminal's first row and moves to row `upto`
    /// (or leaves the cursor wrapping into it, as the returned entry says, when a logical line crosses
    /// `upto`). Logical lines the formatter reproduces well go through it in runs; lines it would get wrong (a
    /// bad join, or a row edge holding only a background color, which marks an erased colored line) are
    /// emitted exactly. Gives up with [`Error::BudgetExceeded`] as soon as more than `limit` bytes are laid.
    pub(crate) fn lay_history(
        &self,
        flags: &[RowFlags],
        from: usize,
        upto: usize,
        total: usize,
        limit: usize,
        content: &mut Vec<u8>,
    ) -> Result<Entry> {
        let base = content.len();
        let mut run = Run { first: from, exact: false };
        let mut start = from;
        while start < upto {
            let mut end = start;
            while end + 1 < upto && flags[end].wrap {
                end += 1;
            }
            let exact = self.line_needs_exact(flags, start, end, start + GAP_CHECKED_ROWS >= upto)?;
            if exact != run.exact && start > run.first {
                // Runs change only where a logical line starts: nothing wraps across this boundary.
                self.lay_run(flags, run, start - 1, total, limit + base, content)?;
                run.first = start;
            }
            run.exact = exact;
            start = end + 1;
            if content.len() - base > limit {
                return Err(Error::BudgetExceeded { limit });
            }
        }
        let mut entry = Entry::default();
        if upto > run.first {
            entry = self.lay_run(flags, run, upto - 1, total, limit + base, content)?;
        }
        if content.len() - base > limit {
            return Err(Error::BudgetExceeded { limit });
        }
        Ok(entry)
    }

    /// Whether the logical line `start..=end` must be emitted exactly: it has a bad join (a wrapped row whose
    /// next row is not its continuation or holds no text, which the formatter would swallow), a row that
    /// starts or ends with a cell holding only a background color (which the formatter drops), or, with
    /// `check_gaps`, a row with a gap (see [`GAP_CHECKED_ROWS`]).
    fn line_needs_exact(&self, flags: &[RowFlags], start: usize, end: usize, check_gaps: bool) -> Result<bool> {
        for y in start..=end {
            if flags[y].wrap && (y + 1 >= flags.len() || !flags[y + 1].continuation || !self.row_has_text(y + 1)?) {
                return Ok(true);
            }
            // A gap: the formatter would fill it with spaces in the pen of the text before, and drop a cell
            // that holds only a background color there.
            if flags[y].bg_edge || (check_gaps && self.row_has_gap(y)?) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Lays the rows of `run` through `last` (whole logical lines, but for one cut at the exact part) and
    /// moves to the row after them, or leaves the cursor wrapping into it when `last` wraps.
    fn lay_run(
        &self,
        flags: &[RowFlags],
        run: Run,
        last: usize,
        total: usize,
        limit: usize,
        content: &mut Vec<u8>,
    ) -> Result<Entry> {
        let first = run.first;
        if run.exact {
            return emit::emit_rows(self, first, last + 1, total, Entry::default(), content);
        }
        let room = limit.saturating_sub(content.len());
        // Without the pen changes that change nothing, which depend on where libghostty's pages end.
        let bytes = canonical::drop_unchanged_pens(&self.format_rows(
            Format::vt_cells(true),
            Space::Screen,
            first,
            last,
            room,
        )?);
        let laid = rows_laid(flags, &bytes, first, last);
        content.extend_from_slice(&bytes);
        if flags[last].wrap && flags.get(last + 1).is_some_and(|next| next.continuation) {
            // A line cut where the exact part begins: the formatter printed its last row through the last
            // column, so the exact part's first printed cell makes the wrap.
            return Ok(Entry { continues: true, ..Entry::default() });
        }
        // The cursor is on row `first + laid - 1` (or still on `first` when nothing was laid); move to the
        // next run's first row, or stay on the last row at the very end.
        let on = first + laid.max(1) - 1;
        let target = if last + 1 < total { last + 1 } else { last };
        if target > on {
            // Line feeds scroll in rows of the current background: reset the pen first.
            content.extend_from_slice(b"\x1b[0m");
        }
        for _ in on..target {
            content.extend_from_slice(b"\r\n");
        }
        Ok(Entry::default())
    }

    /// Moves the cursor to its place, recreating a pending wrap by re-printing the cell under it (at the
    /// last column or at a right margin). Under origin mode the position is relative to the margins.
    fn place_cursor(&self, parts: &StateParts, out: &mut Vec<u8>) -> Result<()> {
        let cursor = self.cursor();
        let origin = self.mode(6, ModeKind::Dec).unwrap_or(false);
        let (top, left) = if origin { (parts.top_margin, parts.left_margin) } else { (1, 1) };
        let place = |x: u16, out: &mut Vec<u8>| {
            let row = (cursor.y + 1).saturating_sub(top - 1).max(1);
            let col = (x + 1).saturating_sub(left - 1).max(1);
            let _ = write!(out, "\x1b[{row};{col}H");
        };
        if cursor.pending_wrap {
            let y = self.total_rows() - usize::from(self.size().1) + usize::from(cursor.y);
            let info = self.row_info(y)?;
            let mut x = usize::from(cursor.x);
            if info.cells[x].wide == crate::ffi::GHOSTTY_CELL_WIDE_SPACER_TAIL && x > 0 {
                x -= 1;
            }
            place(x as u16, out);
            let cell = &info.cells[x];
            if cell.text.is_empty() {
                // A blank cell with a pending wrap: a space in its style is the closest thing.
                out.extend_from_slice(&sgr::sgr(&cell.style));
                out.push(b' ');
            } else {
                out.extend_from_slice(&sgr::sgr(&cell.style));
                emit::push_text(out, cell);
            }
            return Ok(());
        }
        place(cursor.x, out);
        Ok(())
    }
}

/// Bytes that leave a fresh terminal's first row empty and flagged as continuing a line above it that is
/// gone, with the cursor home and the pen default: a row of placeholders wraps into the next row, a line
/// feed at the bottom scrolls the placeholders into history (or off the alternate screen), `CSI 3 J` removes
/// them, and the space that made the wrap is erased to the left of the cursor (which keeps the flag).
fn orphan_first_row(cols: u16, rows: u16) -> Vec<u8> {
    let mut out = vec![b'x'; usize::from(cols)];
    let _ = write!(out, " \x1b[{rows};1H\n\x1b[3J\x1b[H\x1b[1K");
    out
}

/// A run of consecutive history lines laid the same way, from row `first`.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: usize,
    exact: bool,
}

/// How many physical rows of `first..=last` the formatted `bytes` lay down: the formatter leaves out
/// trailing blank rows, and each of its line breaks ends one logical (possibly soft-wrapped) line.
fn rows_laid(flags: &[RowFlags], bytes: &[u8], first: usize, last: usize) -> usize {
    if bytes.is_empty() {
        return 0;
    }
    let lines = bytes.windows(2).filter(|w| w == b"\r\n").count() + 1;
    let mut ended = 0;
    for (i, row) in flags[first..=last].iter().enumerate() {
        if first + i == last || !row.wrap {
            ended += 1;
            if ended == lines {
                return i + 1;
            }
        }
    }
    last - first + 1
}

/// The formatter options of the state run: cells plus every extra except palette and pwd.
fn state_format() -> Format {
    let mut format = Format::vt_cells(true);
    let extra = &mut format.extra;
    (extra.modes, extra.scrolling_region, extra.tabstops, extra.keyboard) = (true, true, true, true);
    let screen = &mut extra.screen;
    (screen.cursor, screen.style, screen.hyperlink) = (true, true, true);
    (screen.protection, screen.kitty_keyboard, screen.charsets) = (true, true, true);
    format
}

/// The state run of the formatter, taken apart.
#[derive(Debug, Default, PartialEq, Eq)]
struct StateParts {
    /// Alternate-screen modes: before the content.
    front: Vec<u8>,
    /// Other modes, tab stops and margins: after the content, before the cursor.
    setup: Vec<u8>,
    /// The top margin DECSTBM sets (1 when none), for origin-mode cursor placement.
    top_margin: u16,
    /// The left margin DECSLRM sets (1 when none), likewise.
    left_margin: u16,
    /// Pen, charsets, keyboard and the like: after the cursor.
    pen: Vec<u8>,
    /// Autowrap off and insert mode: at the very end.
    back: Vec<u8>,
}

/// Splits the state run `[modes][tab stops] ESC[H [row 0] [margins] [CUP [re-printed cell]] [pen ...]`.
/// Row 0 and the cursor are dropped (the exact emitter and [`Terminal::place_cursor`] do them better).
///
/// With `reprinted`, the formatter re-prints the last cell after the cursor position (its pen first, then
/// the cell's text with any combining marks): everything up to the next escape is dropped too.
fn split_state(state: &[u8], reprinted: bool) -> StateParts {
    let mut parts = StateParts { top_margin: 1, left_margin: 1, ..StateParts::default() };
    // 0: before home; 1: row 0 content; 2: after it; 3: right after the cursor position.
    let mut phase = 0;
    let mut i = 0;
    while i < state.len() {
        let len = csi_len(&state[i..]);
        let seq = &state[i..i + len.unwrap_or(1)];
        i += seq.len();
        let Some(len) = len else {
            match phase {
                0 => parts.setup.extend_from_slice(seq),
                2 => parts.pen.extend_from_slice(seq),
                3 if !reprinted => {
                    parts.pen.extend_from_slice(seq);
                    phase = 2;
                }
                // The re-printed cell's text, combining marks and all, runs up to the next escape.
                3 if seq[0] != 0x1b => {
                    i += state[i..].iter().take_while(|&&b| b != 0x1b).count();
                    phase = 2;
                }
                _ => {}
            }
            continue;
        };
        let (params, last) = (&seq[2..len - 1], seq[len - 1]);
        let private = params.first() == Some(&b'?');
        let numbers = if private { &params[1..] } else { params };
        let is = |n: &str| numbers == n.as_bytes();
        if private && (last == b'h' || last == b'l') && ALT_SCREEN_MODES.iter().any(|m| is(m)) {
            parts.front.extend_from_slice(seq);
        } else if private && (last == b'h' || last == b'l') && MOUSE_MODES.iter().any(|m| is(m)) {
            // Replaced by the modes in effect.
        } else if (private && last == b'l' && is("7")) || (!private && last == b'h' && is("4")) {
            parts.back.extend_from_slice(seq);
        } else if phase == 0 && last == b'H' && params.is_empty() {
            phase = 1;
        } else if phase == 0 {
            parts.setup.extend_from_slice(seq);
        } else if last == b'r' || (last == b's' && !params.is_empty()) {
            let first = numbers.split(|&b| b == b';').next().unwrap_or_default();
            let first = std::str::from_utf8(first).ok().and_then(|t| t.parse().ok()).unwrap_or(1u16).max(1);
            if last == b'r' {
                parts.top_margin = first;
            } else {
                parts.left_margin = first;
            }
            parts.setup.extend_from_slice(seq);
            phase = 2;
        } else if last == b'H' {
            phase = 3;
        } else if phase == 3 && reprinted {
            // The pen of the re-printed cell: dropped with it.
        } else if phase >= 2 {
            parts.pen.extend_from_slice(seq);
            phase = 2;
        }
    }
    parts
}

/// The length of the CSI sequence at the start of `bytes`, if there is a complete one.
fn csi_len(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < 3 || bytes[0] != 0x1b || bytes[1] != b'[' {
        return None;
    }
    let end = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
    Some(end + 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_run_is_taken_apart() {
        let parts = split_state(
            b"\x1b[4h\x1b[?7l\x1b[?1049h\x1b[?25l\x1b[3g\x1b[9G\x1bH\x1b[HX\x1b[31mY\x1b[2;3r\x1b[1;2HZ\x1b[0m\x1b(0",
            true,
        );
        assert_eq!(parts.front, b"\x1b[?1049h");
        assert_eq!(parts.setup, b"\x1b[?25l\x1b[3g\x1b[9G\x1bH\x1b[2;3r");
        assert_eq!(parts.top_margin, 2);
        assert_eq!(parts.pen, b"\x1b[0m\x1b(0");
        assert_eq!(parts.back, b"\x1b[4h\x1b[?7l");
    }
}

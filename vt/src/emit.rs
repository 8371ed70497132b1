//! Cell-exact VT emission of rows, for the part of a checkpoint the formatter cannot reproduce faithfully.
//!
//! The formatter prints the gaps between text as spaces in the pen of the text before them, and drops rows
//! holding only background-colored erased cells. Here every cell is read ([`Terminal::row_info`]) and
//! reproduced: text in its exact style, empty cells skipped with cursor movement, background-only cells
//! erased with ECH in their color, and soft wraps recreated by printing through the last column. Reading
//! cells costs about 0.1 µs each, so this is used for the active area and recent history only. The same
//! emitter also writes the plain form ([`Form::Plain`]) that a checkpoint falls back to for the top rows of a
//! screen whose exact form is too large.

use std::io::Write;

use crate::error::Result;
use crate::ffi;
use crate::inspect::{CellInfo, Color, RowInfo, Style};
use crate::sgr::set_pen;
use crate::terminal::Terminal;

/// Emits rows `first..end` of `total` exactly. The cursor must be at column 0 of row `first` with a reset
/// pen, or in the state `entry` describes; it ends on the last row when that is the last of all, else at
/// column 0 of row `end` or, when row `end - 1` wraps into it, in the returned state.
///
/// Where a soft wrap needs a printed cell that must stay empty, a space is printed: the first cell of a
/// continuation row is erased again at once with ECH in its background, while the last cell of a wrapped
/// row keeps a space in its style, because erasing it would clear the row's wrap flag.
pub(crate) fn emit_rows(
    terminal: &Terminal,
    first: usize,
    end: usize,
    total: usize,
    entry: Entry,
    out: &mut Vec<u8>,
) -> Result<Entry> {
    emit_rows_marked(terminal, first, end, total, entry, Form::Exact, out).map(|(entry, _)| entry)
}

/// How rows are emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Every cell as it is (see the module docs).
    Exact,
    /// Text only, for a screen whose exact form cannot fit a checkpoint: every style is dropped, a narrow
    /// cell keeps the first code point of its text when the text is longer than 4 bytes, and a wide cell
    /// when it is longer than [`MAX_PLAIN_WIDE_BYTES`]. Wraps, wide characters and spacer heads are kept.
    /// A cell then takes at most [`MAX_PLAIN_CELL_BYTES`] and a row [`MAX_PLAIN_ROW_BYTES`] more.
    Plain,
}

/// The longest text a wide cell keeps in [`Form::Plain`]: an emoji with its variation selector (6 bytes)
/// stays whole, a longer cluster is cut to its first code point.
const MAX_PLAIN_WIDE_BYTES: usize = 8;

/// The most bytes one cell takes in [`Form::Plain`], from [`MAX_PLAIN_WIDE_BYTES`] for two cells and the
/// wide placeholder (9 bytes with its character-set switches) for two; a lone empty cell's cursor move
/// takes 4 and a longer run less per cell.
pub const MAX_PLAIN_CELL_BYTES: usize = 5;

/// The most bytes a row adds in [`Form::Plain`] beyond its cells: line break, wrap and spacer-head fixes,
/// and the last row's wrap flag, each a few bytes.
pub const MAX_PLAIN_ROW_BYTES: usize = 64;

/// Where one row's bytes start in an emission, and the pen set there: the rows from it on replay the same
/// from column 0 of a fresh terminal's first row once that pen is set.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowStart {
    pub(crate) offset: usize,
    pub(crate) pen: Style,
}

/// [`emit_rows`] in either [`Form`], also returning where each row's bytes start.
pub(crate) fn emit_rows_marked(
    terminal: &Terminal,
    first: usize,
    end: usize,
    total: usize,
    entry: Entry,
    form: Form,
    out: &mut Vec<u8>,
) -> Result<(Entry, Vec<RowStart>)> {
    let span = emit_span(terminal, first..end, total, State { entry, pen: Style::default() }, form, out, usize::MAX)?;
    let (mut state, marks) = span.expect("no limit");
    set_pen(out, &mut state.pen, Style::default());
    Ok((state.entry, marks))
}

#[cfg(test)]
thread_local! {
    /// Bytes emitted in [`Form::Exact`] on this thread: how the tests see what the checkpoint emits.
    pub(crate) static EXACT_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Where an emission stands between two rows: how the row before left the cursor, and the pen it left set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) entry: Entry,
    pub(crate) pen: Style,
}

/// Emits `rows` of `total` in `form` from `state` (the pen is not reset at the end), returning the state it
/// leaves and where each row starts; or `None`, having stopped after the row that took the bytes appended to
/// `out` past `limit`. Each row is read once, plus the row after the last.
pub(crate) fn emit_span(
    terminal: &Terminal,
    rows: std::ops::Range<usize>,
    total: usize,
    state: State,
    form: Form,
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<Option<(State, Vec<RowStart>)>> {
    let (cols, height) = terminal.size();
    let read = |y: usize| match form {
        Form::Exact => terminal.row_info(y),
        Form::Plain => terminal.row_cells(y, false).map(plain_row),
    };
    let base = out.len();
    let mut emitter = Emitter { out, pen: state.pen, cols };
    let mut entry = state.entry;
    let mut marks = Vec::with_capacity(rows.len());
    let mut next = if rows.start < rows.end { Some(read(rows.start)?) } else { None };
    for y in rows {
        marks.push(RowStart { offset: emitter.out.len(), pen: emitter.pen });
        let row = next.take().unwrap_or_default();
        next = if y + 1 < total { Some(read(y + 1)?) } else { None };
        entry = emitter.row(&row, next.as_ref(), entry);
        if y + 1 == total && row.wrap && height >= 3 {
            emitter.wrap_last_row(&row, height);
        }
        if emitter.out.len() - base > limit {
            count(form, emitter.out.len() - base);
            return Ok(None);
        }
    }
    count(form, emitter.out.len() - base);
    Ok(Some((State { entry, pen: emitter.pen }, marks)))
}

/// Adds `bytes` emitted in `form` to [`EXACT_BYTES`] (in tests only).
fn count(form: Form, bytes: usize) {
    #[cfg(test)]
    if form == Form::Exact {
        EXACT_BYTES.with(|n| n.set(n.get() + bytes));
    }
    #[cfg(not(test))]
    let _ = (form, bytes);
}

/// A row as [`Form::Plain`] emits it.
fn plain_row(mut row: RowInfo) -> RowInfo {
    for cell in &mut row.cells {
        cell.style = Style::default();
        cell.link = None;
        let keep = if cell.wide == ffi::GHOSTTY_CELL_WIDE_WIDE { MAX_PLAIN_WIDE_BYTES } else { 4 };
        if cell.text.len() > keep {
            cell.text = cell.text.chars().next().map(String::from).unwrap_or_default();
        }
    }
    row
}

/// How the previous row left the cursor for the next one.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The previous row soft-wraps into this one: its first cell must be printed to force the wrap.
    pub(crate) continues: bool,
    /// The previous row's wrap was carried by a placeholder already erased: no filler is needed.
    pub(crate) after_placeholder: bool,
}

/// The output, the pen it leaves set and the row width.
#[derive(Debug)]
struct Emitter<'a> {
    out: &'a mut Vec<u8>,
    pen: Style,
    cols: u16,
}

impl Emitter<'_> {
    /// Emits one row, given the row after it (if any) and how the row before left the cursor.
    fn row(&mut self, row: &RowInfo, next: Option<&RowInfo>, entry: Entry) -> Entry {
        let (out, pen, cols) = (&mut *self.out, &mut self.pen, self.cols);
        let (continues, wrapped_by_placeholder) = (entry.continues, entry.after_placeholder);
        let mut placeholder_wrapped = false;
        // A wrapped row is printed through its last column, so the next printed cell wraps. When the next row
        // does not continue it (IL/DL and erasures leave such rows), that cell's line is deleted again.
        let wraps = row.wrap && next.is_some();
        let orphan = wraps && next.is_some_and(|n| !n.wrap_continuation);
        let next_first = next.and_then(|n| n.cells.first());
        let next_starts_wide = next_first.is_some_and(|c| c.wide == ffi::GHOSTTY_CELL_WIDE_WIDE);
        let mut x = 0u16;
        let entered_by_wrap = continues || wrapped_by_placeholder;
        let mut erased_rest = false;
        let last = last_significant(row);
        let end = if wraps { cols } else { last.map_or(0, |l| l + 1).max(u16::from(continues)) };
        while x < end {
            let cell = &row.cells[usize::from(x)];
            match cell.wide {
                ffi::GHOSTTY_CELL_WIDE_SPACER_TAIL => {
                    x += 1;
                    continue;
                }
                // The wide character of the next row lands here and leaves the spacer head itself.
                ffi::GHOSTTY_CELL_WIDE_SPACER_HEAD
                    if wraps && !orphan && next_starts_wide && next_first.is_some_and(|c| c.style == cell.style) =>
                {
                    break;
                }
                // A spacer head whose wide character is gone (or differs in style): print a wide placeholder in
                // the spacer's style so it wraps and leaves the spacer head, then erase the next row again.
                ffi::GHOSTTY_CELL_WIDE_SPACER_HEAD if wraps => {
                    set_pen(out, pen, cell.style);
                    out.extend_from_slice(WIDE_PLACEHOLDER.as_bytes());
                    set_pen(out, pen, Style::default());
                    // Erasing the next line from its start keeps the spacer head (ECH or overprinting would
                    // not); an orphaned wrap deletes that line instead.
                    out.extend_from_slice(if orphan { b"\x1b[M\r" as &[u8] } else { b"\r\x1b[K" });
                    placeholder_wrapped = true;
                    break;
                }
                _ => {}
            }
            if !cell.text.is_empty() {
                set_pen(out, pen, cell.style);
                // A run of cells of one hyperlink is opened at its first cell and closed after its last.
                let opens = cell.link.is_some() && (x == 0 || !same_link(&row.cells[usize::from(x) - 1], cell));
                if let (true, Some(uri)) = (opens, &cell.link) {
                    open_link(out, uri);
                }
                let wide = cell.wide == ffi::GHOSTTY_CELL_WIDE_WIDE;
                push_text(out, cell);
                if wide {
                    // Other ASCII in a wide cell advances one column only: step over the spacer so the rest
                    // of the row stays in place.
                    if cell.text != " " && cell.text.is_ascii() {
                        out.extend_from_slice(b"\x1b[C");
                    }
                    x += 2;
                } else {
                    x += 1;
                }
                if cell.link.is_some() && row.cells.get(usize::from(x)).is_none_or(|next| !same_link(cell, next)) {
                    out.extend_from_slice(CLOSE_LINK);
                }
            } else if continues && x == 0 && !wrapped_by_placeholder {
                if cell.style == (Style { bg: cell.style.bg, ..Style::default() }) {
                    set_pen(out, pen, Style::default());
                    out.extend_from_slice(b" \x08");
                    erase_here(out, pen, cell.style.bg);
                    out.extend_from_slice(b"\x1b[C");
                } else {
                    // ECH would keep only the background: a space in the cell's full style is closer.
                    set_pen(out, pen, cell.style);
                    out.push(b' ');
                }
                x += 1;
            } else if wraps && x + 1 == cols {
                // Erasing this cell later would clear the row's wrap flag: a space in its style stays.
                set_pen(out, pen, cell.style);
                out.push(b' ');
                x += 1;
            } else if cell.style != (Style { bg: cell.style.bg, ..Style::default() }) && x + 2 < cols {
                // An empty cell with a full style is what overwriting half of a wide character leaves: print
                // a wide placeholder in that style, overwrite its second half and erase that again.
                set_pen(out, pen, cell.style);
                out.extend_from_slice(WIDE_PLACEHOLDER.as_bytes());
                set_pen(out, pen, Style::default());
                out.extend_from_slice(b"\x1b[D \x1b[D\x1b[X");
                x += 1;
            } else if cell.style != (Style { bg: cell.style.bg, ..Style::default() }) {
                // The same, too near the end of the row for a wide placeholder: a space in the cell's full style
                // shows the same (ECH would keep only the background, losing inverse or strikethrough).
                set_pen(out, pen, cell.style);
                out.push(b' ');
                x += 1;
            } else {
                // A run of empty cells of one background: erase them in that color, or just skip them.
                let bg = cell.style.bg;
                let plain = Style { bg, ..Style::default() };
                let run = (x..end)
                    .take_while(|&i| {
                        let c = &row.cells[usize::from(i)];
                        c.text.is_empty() && c.style == plain && !(wraps && i + 1 == cols)
                    })
                    .count()
                    .max(1) as u16;
                if bg != Color::Default {
                    set_pen(out, pen, Style { bg, ..Style::default() });
                    let _ = write!(out, "\x1b[{run}X");
                }
                if x + run < cols {
                    let _ = write!(out, "\x1b[{run}C");
                }
                x += run;
            }
            if entered_by_wrap && !erased_rest && x < cols {
                // A wrap at the bottom scrolled in a line of the pen's background: clear the rest of it.
                set_pen(out, pen, Style::default());
                out.extend_from_slice(b"\x1b[K");
                erased_rest = true;
            }
        }
        if orphan && placeholder_wrapped {
            // The placeholder already wrapped and its line is gone.
        } else if orphan {
            set_pen(out, pen, Style::default());
            out.extend_from_slice(b" \x1b[M\r");
        } else if !wraps && next.is_some() {
            set_pen(out, pen, Style::default());
            out.extend_from_slice(b"\r\n");
        }
        Entry { continues: wraps && !orphan, after_placeholder: placeholder_wrapped }
    }

    /// Gives the last row the wrap flag it has in the source, which no following row can carry: with a
    /// scroll region that ends above it, printing past its last column sets the flag and wraps onto the
    /// same row (nothing scrolls), so its last and first cells are simply printed again.
    fn wrap_last_row(&mut self, last: &RowInfo, rows: u16) {
        let cols = self.cols;
        if ends_in_spacer_head(last) {
            // A wide character that did not fit at the end wrapped onto the same row: print it at the last
            // column the same way, which leaves the spacer head and lands it at the row's start.
            if last.cells[0].wide == ffi::GHOSTTY_CELL_WIDE_WIDE {
                set_pen(self.out, &mut self.pen, Style::default());
                let _ = write!(self.out, "\x1b[1;{}r\x1b[{rows};{cols}H", rows - 1);
                self.reprint(&last.cells[0]);
                set_pen(self.out, &mut self.pen, Style::default());
                self.out.extend_from_slice(b"\x1b[r");
            }
            return;
        }
        set_pen(self.out, &mut self.pen, Style::default());
        let _ = write!(self.out, "\x1b[1;{}r", rows - 1);
        let mut x = usize::from(cols) - 1;
        if last.cells[x].wide == ffi::GHOSTTY_CELL_WIDE_SPACER_TAIL && x > 0 {
            x -= 1;
        }
        let _ = write!(self.out, "\x1b[{rows};{}H", x + 1);
        self.reprint(&last.cells[x]);
        self.reprint(&last.cells[0]);
        if last.cells[0].text.is_empty() {
            // Erased to the left (EL 1), not with ECH: erasing characters clears the row's wrap flag in
            // libghostty, erasing to the left of the cursor keeps it.
            self.out.extend_from_slice(b"\x1b[D");
            set_pen(self.out, &mut self.pen, Style { bg: last.cells[0].style.bg, ..Style::default() });
            self.out.extend_from_slice(b"\x1b[1K");
        }
        set_pen(self.out, &mut self.pen, Style::default());
        self.out.extend_from_slice(b"\x1b[r");
    }

    /// Prints a cell again where the cursor is: its text in its style (and hyperlink), or a space in its style.
    fn reprint(&mut self, cell: &CellInfo) {
        set_pen(self.out, &mut self.pen, cell.style);
        let link = cell.link.as_deref().filter(|_| !cell.text.is_empty());
        if let Some(uri) = link {
            open_link(self.out, uri);
        }
        if cell.text.is_empty() {
            self.out.push(b' ');
        } else {
            push_text(self.out, cell);
        }
        if link.is_some() {
            self.out.extend_from_slice(CLOSE_LINK);
        }
    }
}

/// Appends what prints `cell`'s text (not empty): the text itself, but for a wide space, which is what DEC
/// special graphics make of a wide character: the same done again (the wide placeholder under DEC graphics,
/// then ASCII back in G0).
pub(crate) fn push_text(out: &mut Vec<u8>, cell: &CellInfo) {
    if cell.wide == ffi::GHOSTTY_CELL_WIDE_WIDE && cell.text == " " {
        out.extend_from_slice(b"\x1b(0");
        out.extend_from_slice(WIDE_PLACEHOLDER.as_bytes());
        out.extend_from_slice(b"\x1b(B");
    } else {
        out.extend_from_slice(cell.text.as_bytes());
    }
}

/// Ends the hyperlink being written (OSC 8 with no URI).
const CLOSE_LINK: &[u8] = b"\x1b]8;;\x1b\\";

/// Starts writing cells of the hyperlink `uri` (OSC 8; the URI holds no control characters, see `inspect`).
fn open_link(out: &mut Vec<u8>, uri: &str) {
    out.extend_from_slice(b"\x1b]8;;");
    out.extend_from_slice(uri.as_bytes());
    out.extend_from_slice(b"\x1b\\");
}

/// Whether `next` continues `cell`'s hyperlink run: both hold text of the same link.
fn same_link(cell: &CellInfo, next: &CellInfo) -> bool {
    !next.text.is_empty() && !cell.text.is_empty() && next.link == cell.link
}

/// Whether the row's last cell is a spacer head (its wide character went to the next row).
fn ends_in_spacer_head(row: &RowInfo) -> bool {
    row.cells.last().is_some_and(|c| c.wide == ffi::GHOSTTY_CELL_WIDE_SPACER_HEAD)
}

/// A wide character printed only to recreate a spacer head: the ideographic space, two cells wide.
const WIDE_PLACEHOLDER: &str = "\u{3000}";

/// Erases the cell under the cursor in background `bg` (an empty cell when it is the default).
fn erase_here(out: &mut Vec<u8>, pen: &mut Style, bg: Color) {
    set_pen(out, pen, Style { bg, ..Style::default() });
    out.extend_from_slice(b"\x1b[X");
}

/// The index of the last cell that holds text or shows something empty (a background color, inverse video,
/// an underline, a strikethrough or an overline), if any.
fn last_significant(row: &RowInfo) -> Option<u16> {
    let shows = |c: &CellInfo| !c.text.is_empty() || c.style.on_blank() != Style::default();
    row.cells.iter().rposition(shows).map(|i| i as u16)
}

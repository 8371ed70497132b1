//! Cell-exact VT emission of rows, for the part of a checkpoint the formatter cannot reproduce faithfully.
//!
//! The formatter prints the gaps between text as spaces in the pen of the text before them, and drops rows
//! holding only background-colored erased cells. Here every cell is read ([`Terminal::row_info`]) and
//! reproduced: text in its exact style, empty cells skipped with cursor movement, background-only cells
//! erased with ECH in their color, and soft wraps recreated by printing through the last column. Where a
//! wrap needs a printed cell that should stay empty, a space is printed and erased again afterwards (a
//! [`Fixup`]). Reading cells costs about 0.1 µs each, so this is used for the active area, not history.

use std::io::Write;

use crate::error::Result;
use crate::ffi;
use crate::inspect::{CellInfo, Color, RowInfo, Style};
use crate::terminal::Terminal;

/// A cell printed as a space to carry a soft wrap, to be erased once all rows are laid down.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fixup {
    /// Screen row (0 = oldest history row).
    pub(crate) y: usize,
    /// Column.
    pub(crate) x: u16,
    /// The background the erased cell must keep.
    pub(crate) bg: Color,
}

/// Emits rows `first..total` exactly. The cursor must be at column 0 of row `first` with a reset pen; it
/// ends on the last row. Returns the fixups to apply with [`apply_fixups`].
pub(crate) fn emit_rows(terminal: &Terminal, first: usize, total: usize, out: &mut Vec<u8>) -> Result<Vec<Fixup>> {
    let (cols, _) = terminal.size();
    let mut fixups = Vec::new();
    let mut pen = Style::default();
    let mut next = if first < total { Some(terminal.row_info(first)?) } else { None };
    // True when the previous row soft-wraps into this one: its first cell must be printed to force the wrap.
    let mut continues = false;
    for y in first..total {
        let row = next.take().unwrap_or_default();
        next = if y + 1 < total { Some(terminal.row_info(y + 1)?) } else { None };
        // A wrapped row is printed through its last column, so the next printed cell wraps. When the next row
        // does not continue it (IL/DL and erasures leave such rows), that cell's line is deleted again.
        let wraps = row.wrap && next.is_some();
        let orphan = wraps && next.as_ref().is_some_and(|n| !n.wrap_continuation);
        let mut x = 0u16;
        let last = last_significant(&row);
        let end = if wraps { cols } else { last.map_or(0, |l| l + 1).max(u16::from(continues)) };
        while x < end {
            let cell = &row.cells[usize::from(x)];
            let must_print = (continues && x == 0) || (wraps && x + 1 == cols);
            match cell.wide {
                ffi::GHOSTTY_CELL_WIDE_SPACER_TAIL => {
                    x += 1;
                    continue;
                }
                // The wide character of the next row lands here and leaves the spacer head itself.
                ffi::GHOSTTY_CELL_WIDE_SPACER_HEAD if wraps => break,
                _ => {}
            }
            if !cell.text.is_empty() {
                set_pen(out, &mut pen, cell.style);
                out.extend_from_slice(cell.text.as_bytes());
                x += if cell.wide == ffi::GHOSTTY_CELL_WIDE_WIDE { 2 } else { 1 };
            } else if must_print {
                set_pen(out, &mut pen, Style::default());
                out.push(b' ');
                fixups.push(Fixup { y, x, bg: cell.style.bg });
                x += 1;
            } else {
                // A run of empty cells of one background: erase them in that color, or just skip them.
                let bg = cell.style.bg;
                let run = (x..end)
                    .take_while(|&i| {
                        let c = &row.cells[usize::from(i)];
                        c.text.is_empty() && c.style.bg == bg && !((wraps && i + 1 == cols) || (continues && i == 0))
                    })
                    .count() as u16;
                if bg != Color::Default {
                    set_pen(out, &mut pen, Style { bg, ..Style::default() });
                    let _ = write!(out, "\x1b[{run}X");
                }
                if x + run < cols {
                    let _ = write!(out, "\x1b[{run}C");
                }
                x += run;
            }
        }
        continues = wraps && !orphan;
        if orphan {
            set_pen(out, &mut pen, Style::default());
            out.extend_from_slice(b" \x1b[M\r");
        } else if !wraps && y + 1 < total {
            set_pen(out, &mut pen, Style::default());
            out.extend_from_slice(b"\r\n");
        }
    }
    set_pen(out, &mut pen, Style::default());
    Ok(fixups)
}

/// Erases the filler cells of [`emit_rows`]. `top` is the screen row shown at the top of the active area.
pub(crate) fn apply_fixups(fixups: &[Fixup], top: usize, out: &mut Vec<u8>) {
    for fixup in fixups.iter().filter(|f| f.y >= top) {
        let _ = write!(out, "\x1b[{};{}H", fixup.y - top + 1, fixup.x + 1);
        let mut pen = Style::default();
        set_pen(out, &mut pen, Style { bg: fixup.bg, ..Style::default() });
        out.extend_from_slice(b"\x1b[X\x1b[0m");
    }
}

/// The index of the last cell that holds text or a background color, if any.
fn last_significant(row: &RowInfo) -> Option<u16> {
    row.cells.iter().rposition(|c| !c.text.is_empty() || c.style.bg != Color::Default).map(|i| i as u16)
}

/// Switches the pen to `style` (with a full reset when it changes).
pub(crate) fn set_pen(out: &mut Vec<u8>, pen: &mut Style, style: Style) {
    if *pen == style {
        return;
    }
    out.extend_from_slice(&sgr(&style));
    *pen = style;
}

/// An SGR sequence that sets exactly `style` from any pen.
pub(crate) fn sgr(style: &Style) -> Vec<u8> {
    let mut out = b"\x1b[0".to_vec();
    let flags = [
        (style.bold, "1"),
        (style.faint, "2"),
        (style.italic, "3"),
        (style.blink, "5"),
        (style.inverse, "7"),
        (style.invisible, "8"),
        (style.strikethrough, "9"),
        (style.overline, "53"),
    ];
    for (on, code) in flags {
        if on {
            out.push(b';');
            out.extend_from_slice(code.as_bytes());
        }
    }
    for (color, base) in [(style.fg, 38), (style.bg, 48), (style.underline_color, 58)] {
        let _ = match color {
            Color::Default => Ok(()),
            Color::Palette(i) => write!(out, ";{base};5;{i}"),
            Color::Rgb(r, g, b) => write!(out, ";{base};2;{r};{g};{b}"),
        };
    }
    out.push(b'm');
    if style.underline != 0 {
        let _ = write!(out, "\x1b[4:{}m", style.underline);
    }
    out
}

/// The exact style of a cell, for re-printing it.
pub(crate) fn cell_bytes(cell: &CellInfo) -> Vec<u8> {
    let mut out = sgr(&cell.style);
    out.extend_from_slice(cell.text.as_bytes());
    out
}

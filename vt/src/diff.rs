//! Compares the observable state of two terminals: what a checkpoint must reproduce.

use crate::error::Result;
use crate::inspect::CellInfo;
use crate::terminal::{ModeKind, Terminal};

/// Modes compared by [`Terminal::state_diff`]: `(number, kind, name)`.
/// (Mouse tracking and report format are compared as the mode in effect, not as each mode's flag.)
pub const COMPARED_MODES: [(u16, ModeKind, &str); 8] = [
    (1, ModeKind::Dec, "DECCKM"),
    (6, ModeKind::Dec, "DECOM"),
    (7, ModeKind::Dec, "DECAWM"),
    (25, ModeKind::Dec, "DECTCEM"),
    (1049, ModeKind::Dec, "alternate screen"),
    (2004, ModeKind::Dec, "bracketed paste"),
    (2048, ModeKind::Dec, "in-band resize"),
    (4, ModeKind::Ansi, "IRM"),
];

/// How [`Terminal::state_diff`] compares blank cells (empty, or one space).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Blanks {
    /// Like every other cell: text, width and the whole style.
    Exact,
    /// By what shows of them: background, inverse video (which shows the foreground), underline,
    /// strikethrough and overline. An empty cell and a space, or two blanks that differ only in foreground or
    /// weight, look the same, and a VT stream cannot always tell them apart.
    Visible,
}

impl Terminal {
    /// The first difference between `self` and `other` in size, active screen, row count, every row's
    /// cells (text, width, style) and wrap flag, cursor (with pending wrap and visibility), the
    /// [`COMPARED_MODES`] and the title; `None` when they match.
    ///
    /// Blank cells are compared as `blanks` says.
    pub fn state_diff(&self, other: &Terminal, blanks: Blanks) -> Result<Option<String>> {
        if self.total_rows() != other.total_rows() {
            return Ok(Some(format!("total rows: {} != {}", self.total_rows(), other.total_rows())));
        }
        self.recent_state_diff(other, blanks)
    }

    /// [`Terminal::state_diff`] of a checkpoint that left out the oldest history: `other` may have fewer
    /// rows, and its rows are compared with the most recent ones of `self`.
    pub fn recent_state_diff(&self, other: &Terminal, blanks: Blanks) -> Result<Option<String>> {
        macro_rules! differ {
            ($what:expr, $a:expr, $b:expr) => {
                let (a, b) = ($a, $b);
                if a != b {
                    return Ok(Some(format!("{}: {:?} != {:?}", $what, a, b)));
                }
            };
        }
        differ!("size", self.size(), other.size());
        differ!("active screen", self.active_screen(), other.active_screen());
        let (total, kept) = (self.total_rows(), other.total_rows());
        if kept > total {
            return Ok(Some(format!("total rows: {total} < {kept}")));
        }
        for (y, z) in (total - kept..total).zip(0..kept) {
            let (a, b) = (self.row_info(y)?, other.row_info(z)?);
            differ!(format!("row {y} wrap"), a.wrap, b.wrap);
            for (x, (ca, cb)) in a.cells.iter().zip(&b.cells).enumerate() {
                if blanks == Blanks::Visible && blank(ca) && blank(cb) && ca.style.on_blank() == cb.style.on_blank() {
                    continue;
                }
                if ca != cb {
                    let show = |c: &CellInfo| format!("{:?} wide {} {:?}", c.text, c.wide, c.style);
                    let (sa, sb) = if ca.style == cb.style {
                        (format!("{:?} wide {}", ca.text, ca.wide), format!("{:?} wide {}", cb.text, cb.wide))
                    } else {
                        (show(ca), show(cb))
                    };
                    return Ok(Some(format!("row {y} cell {x}: {sa} != {sb}")));
                }
            }
        }
        differ!("cursor", self.cursor(), other.cursor());
        for (number, kind, name) in COMPARED_MODES {
            differ!(format!("mode {name}"), self.mode(number, kind)?, other.mode(number, kind)?);
        }
        differ!("mouse tracking and format", self.mouse_modes()?, other.mouse_modes()?);
        differ!("cursor style", self.cursor_style()?, other.cursor_style()?);
        differ!("kitty keyboard flags", self.kitty_keyboard_flags()?, other.kitty_keyboard_flags()?);
        differ!("palette", self.palette()?, other.palette()?);
        differ!("dynamic colours", self.dynamic_colors()?, other.dynamic_colors()?);
        differ!("cursor blink", self.mode(12, ModeKind::Dec)?, other.mode(12, ModeKind::Dec)?);
        differ!("title", self.title(), other.title());
        Ok(None)
    }
}

fn blank(cell: &CellInfo) -> bool {
    cell.text.is_empty() || cell.text == " "
}

//! VT checkpoints: bytes that rebuild history, screen, cursor, modes and title in a fresh terminal of the
//! same size.
//!
//! The formatter's raw VT output does not round-trip, so the checkpoint is assembled in three parts:
//! 1. Content. The whole active screen is formatted in segments with soft wraps joined. A segment ends at a
//!    "bad join", a wrapped row whose next row is blank or not its continuation, which the formatter would
//!    otherwise swallow. After each segment, line feeds are added for the rows the formatter left out
//!    (trailing blank rows), so exactly `total_rows` rows are laid down and the cursor ends on the last.
//! 2. State. One formatter run over active row 0 with every extra but palette and pwd re-prints that row in
//!    place and carries modes, margins, tab stops, cursor (with pending wrap), pen, charsets and keyboard.
//! 3. Order. Alternate-screen modes move to the very front (the content must land on that screen), and
//!    autowrap-off and insert mode move to the very end (they would corrupt the re-printed row). The title
//!    goes first as OSC 2.
//!
//! Known limits: the primary screen while the alternate one is active, the DECSC saved cursor, hyperlinks
//! already on cells and a tab stop in the last column are not carried.

use crate::error::Result;
use crate::format::{Format, Space};
use crate::terminal::{Screen, Terminal};

/// Modes that select the alternate screen: they must precede the content.
const ALT_SCREEN_MODES: [&str; 3] = ["1049", "1047", "47"];

impl Terminal {
    /// VT bytes that rebuild this terminal's history, screen, cursor, modes and title when written to a
    /// fresh terminal of the same size (see the module docs for what cannot be carried).
    pub fn vt_checkpoint(&self) -> Result<Vec<u8>> {
        let total = self.total_rows();
        let mut content = Vec::new();
        let mut start = 0;
        while start < total {
            let end = self.segment_end(start, total)?;
            let bytes = self.format_rows(Format::vt_cells(true), Space::Screen, start, end, usize::MAX)?;
            let laid = self.rows_laid(&bytes, start, end)?;
            content.extend_from_slice(&bytes);
            // The cursor is on row `start + laid - 1` (or still on `start` when nothing was laid); move to the
            // next segment's first row, or stay on the last row at the very end.
            let on = start + laid.max(1) - 1;
            let target = if end + 1 < total { end + 1 } else { end };
            if target > on {
                // Line feeds scroll in rows of the current background: reset the pen first.
                content.extend_from_slice(b"\x1b[0m");
            }
            for _ in on..target {
                content.extend_from_slice(b"\r\n");
            }
            start = end + 1;
        }

        let mut state_format = Format::vt_cells(true);
        let extra = &mut state_format.extra;
        (extra.modes, extra.scrolling_region, extra.tabstops, extra.keyboard) = (true, true, true, true);
        let screen = &mut extra.screen;
        (screen.cursor, screen.style, screen.hyperlink) = (true, true, true);
        (screen.protection, screen.kitty_keyboard, screen.charsets) = (true, true, true);
        let state = self.format_rows(state_format, Space::Active, 0, 0, usize::MAX)?;

        let (front, state, back) = reorder_modes(&state);
        let mut out = Vec::with_capacity(content.len() + state.len() + 64);
        if let Some(title) = self.title() {
            out.extend_from_slice(b"\x1b]2;");
            out.extend(title.bytes().filter(|b| !b.is_ascii_control()));
            out.extend_from_slice(b"\x1b\\");
        }
        out.extend_from_slice(&front);
        if self.active_screen() == Screen::Alternate && front.is_empty() {
            out.extend_from_slice(b"\x1b[?1049h");
        }
        out.extend_from_slice(&content);
        out.extend_from_slice(&state);
        out.extend_from_slice(&back);
        Ok(out)
    }

    /// The last row of the segment starting at `start`: the first bad join, or the last row.
    fn segment_end(&self, start: usize, total: usize) -> Result<usize> {
        let mut y = start;
        while y + 1 < total {
            if !self.row_flags(y)?.wrap {
                y += 1;
                continue;
            }
            let next = self.row_flags(y + 1)?;
            if !next.continuation || !self.row_has_text(y + 1)? {
                return Ok(y);
            }
            y += 1;
        }
        Ok(total - 1)
    }

    /// How many physical rows of `first..=last` the formatted `bytes` lay down: the formatter leaves out
    /// trailing blank rows, and each of its line breaks ends one logical (possibly soft-wrapped) line.
    fn rows_laid(&self, bytes: &[u8], first: usize, last: usize) -> Result<usize> {
        if bytes.is_empty() {
            return Ok(0);
        }
        let lines = bytes.windows(2).filter(|w| w == b"\r\n").count() + 1;
        let mut ended = 0;
        for y in first..=last {
            if y == last || !self.row_flags(y)?.wrap {
                ended += 1;
                if ended == lines {
                    return Ok(y - first + 1);
                }
            }
        }
        Ok(last - first + 1)
    }
}

/// Splits the state run's mode sequences out: alternate-screen modes go to the front, autowrap-off (`?7l`)
/// and insert mode (`4h`) to the back; everything else stays in place.
fn reorder_modes(state: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let (mut front, mut middle, mut back) = (Vec::new(), Vec::new(), Vec::new());
    let mut i = 0;
    while i < state.len() {
        let Some(len) = csi_len(&state[i..]) else {
            middle.push(state[i]);
            i += 1;
            continue;
        };
        let seq = &state[i..i + len];
        let (params, last) = (&seq[2..len - 1], seq[len - 1]);
        let private = params.first() == Some(&b'?');
        let numbers = if private { &params[1..] } else { params };
        let is = |n: &str| numbers == n.as_bytes();
        if private && (last == b'h' || last == b'l') && ALT_SCREEN_MODES.iter().any(|m| is(m)) {
            front.extend_from_slice(seq);
        } else if (private && last == b'l' && is("7")) || (!private && last == b'h' && is("4")) {
            back.extend_from_slice(seq);
        } else {
            middle.extend_from_slice(seq);
        }
        i += len;
    }
    (front, middle, back)
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
    fn modes_are_moved_to_their_places() {
        let (front, middle, back) = reorder_modes(b"\x1b[4h\x1b[?7l\x1b[?1049h\x1b[?25lX\x1b[1;2H");
        assert_eq!(front, b"\x1b[?1049h");
        assert_eq!(middle, b"\x1b[?25lX\x1b[1;2H");
        assert_eq!(back, b"\x1b[4h\x1b[?7l");
    }
}

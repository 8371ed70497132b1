//! What a checkpoint leaves out to stay under its size limit, and at what cost.
//!
//! The content (every row, C1 step 3) gets the room the title, modes, cursor and pen leave. In order, as
//! long as the rest does not fit:
//! 1. the oldest formatted history goes, whole logical lines at a time: history is laid backwards from the
//!    exact part in blocks of [`HISTORY_BLOCK_ROWS`] rows, each under what room is left, and the block that
//!    does not fit is narrowed by a binary search over its line starts. Every row is laid at most twice
//!    (once in the first attempt at the whole, which gives up at the budget) plus a few times
//!    `log2(HISTORY_BLOCK_ROWS)` block attempts.
//! 2. with no formatted history left, the oldest rows of the exact history go, one row at a time, cut
//!    from the one emission of the exact part's rows that can fit ([`tail::exact_tail`], which records each
//!    row's start and pen and leaves out the rows above the first one whose rest is over the room).
//! 3. with no history left, the top rows of the active area are laid in the plain form (text only,
//!    [`Form::Plain`]), as few as it takes, from one emission of the active area in that form.
//!
//! A screen laid wholly in the plain form takes at most `rows * (cols * MAX_PLAIN_CELL_BYTES +
//! MAX_PLAIN_ROW_BYTES)` bytes: when that fits, so does the checkpoint.

use crate::emit::{self, Entry, Form, RowStart, State};
use crate::error::{Error, Result};
use crate::inspect::Style;
use crate::sgr;
use crate::tail::{self, Tail};
use crate::terminal::Terminal;

/// Old history laid per attempt once the whole does not fit: large enough that the formatter's fixed cost
/// per call stays small, small enough that narrowing the last block takes few rows twice.
pub(crate) const HISTORY_BLOCK_ROWS: usize = 256;

/// Bytes kept free where two emissions meet: a row's bytes can change by a pen switch (at most about 100
/// bytes) or a wrap fix-up when the row before it comes from somewhere else.
const SEAM_SLACK: usize = 512;

impl Terminal {
    /// The content of a checkpoint in at most `room` bytes: rows `exact..total` cell by cell (the active
    /// area starts at `top`), preceded by as much formatted history as fits, or less (see the module docs).
    /// [`Error::BudgetExceeded`] only when even the plain form of the active area is larger than `room`. The
    /// flag says whether every row is laid from row 0 on (nothing of the oldest history left out).
    pub(crate) fn fit_content(&self, exact: usize, top: usize, total: usize, room: usize) -> Result<(Vec<u8>, bool)> {
        // Only as much of the exact part as the room can hold: the rows above it would be cut anyway.
        let tail = tail::exact_tail(self, exact, total, room)?;
        let exact_part = &tail.bytes;
        if exact == 0 && exact_part.len() <= room {
            return Ok((tail.bytes, true));
        }
        // Laid in front of the exact part as emitted, history may use all the room left; when the exact part
        // starts inside a logical line the history began, it is emitted again, so leave it some slack.
        for slack in [0, SEAM_SLACK] {
            let Some(history_room) = room.checked_sub(exact_part.len() + slack) else { break };
            let (mut content, entry, whole) = self.fit_history(exact, total, history_room)?;
            if entry == Entry::default() {
                content.extend_from_slice(exact_part);
            } else {
                emit::emit_rows(self, exact, total, total, entry, &mut content)?;
            }
            if content.len() <= room {
                return Ok((content, whole));
            }
        }
        // No formatted history: the exact part from the first row whose rest fits (rows the tail left out have
        // more than the room below them).
        let rest = |start: &RowStart| pen_bytes(start.pen).len() + exact_part.len() - start.offset;
        if let Some(start) = (exact..=top).filter_map(|y| tail.mark(y)).find(|start| rest(start) <= room) {
            let mut content = pen_bytes(start.pen);
            content.extend_from_slice(&exact_part[start.offset..]);
            return Ok((content, false));
        }
        self.fit_plain(top, total, &tail, room).map(|bytes| (bytes, false))
    }

    /// The active area `top..total` with its top rows in the plain form and the rest cut from the exact
    /// `tail`, in at most `room` bytes.
    fn fit_plain(&self, top: usize, total: usize, tail: &Tail, room: usize) -> Result<Vec<u8>> {
        let exact_part = &tail.bytes;
        // Rows `top..top + n` plain, the rest exact: the plain ones take about `plain.offset(n)` bytes. Where
        // the tail has no mark (above `tail.from`), the exact rest alone is over the room, so plain rows are
        // emitted only from there on as needed.
        let mut plain = PlainPrefix::new(top);
        let mut estimate = |n: usize| -> Result<usize> {
            let Some(mark) = tail.mark(top + n) else { return Ok(usize::MAX) };
            let rest = pen_bytes(mark.pen).len() + exact_part.len() - mark.offset + SEAM_SLACK;
            // The exact rest alone over the room needs no plain rows to tell.
            if rest > room { Ok(usize::MAX) } else { Ok(plain.offset(self, n, total)? + rest) }
        };
        let mut n = total - top;
        for candidate in tail.from.saturating_sub(top).max(1)..total - top {
            if estimate(candidate)? <= room {
                n = candidate;
                break;
            }
        }
        // The plain rows before row `n` are the first bytes of the whole plain emission: each row's bytes
        // depend only on it and the row after it, in the same form.
        while n < total - top {
            let Some(mark) = tail.mark(top + n) else { break };
            let offset = plain.offset(self, n, total)?;
            let mut content = plain.bytes[..offset].to_vec();
            content.extend_from_slice(&pen_bytes(mark.pen));
            content.extend_from_slice(&exact_part[mark.offset..]);
            if content.len() <= room {
                return Ok(content);
            }
            n += 1;
        }
        plain.offset(self, total - top, total)?;
        if plain.bytes.len() > room {
            return Err(Error::BudgetExceeded { limit: room });
        }
        Ok(plain.bytes)
    }

    /// As much history before row `exact` as fits `room`, whole logical lines, the newest kept; how it leaves
    /// the cursor for row `exact`; and whether all of it fitted (laid from row 0).
    fn fit_history(&self, exact: usize, total: usize, room: usize) -> Result<(Vec<u8>, Entry, bool)> {
        // One wrap-flag read per row (plus the row after the last), shared by every attempt.
        let flags = (0..(exact + 1).min(total)).map(|y| self.row_scan(y)).collect::<Result<Vec<_>>>()?;
        let mut whole = Vec::new();
        match self.lay_history(&flags, 0, exact, total, room, &mut whole) {
            Ok(entry) => return Ok((whole, entry, true)),
            Err(Error::BudgetExceeded { .. }) => {}
            Err(other) => return Err(other),
        }
        drop(whole);
        let starts: Vec<usize> = (0..exact).filter(|&y| y == 0 || !flags[y - 1].wrap).collect();
        // Blocks laid from the newest back: `end` indexes `starts` (`starts.len()` stands for `exact`).
        let (mut blocks, mut entry, mut left, mut end) = (Vec::new(), Entry::default(), room, starts.len());
        while end > 0 {
            let upto = starts.get(end).copied().unwrap_or(exact);
            // The latest line start at least a block above `upto` (or the first line).
            let first = starts[..end].partition_point(|&s| s + HISTORY_BLOCK_ROWS <= upto).saturating_sub(1);
            let mut block = Vec::new();
            match self.lay_history(&flags, starts[first], upto, total, left, &mut block) {
                Ok(laid) => {
                    if end == starts.len() {
                        entry = laid;
                    }
                    left -= block.len();
                    blocks.push(block);
                    end = first;
                }
                Err(Error::BudgetExceeded { .. }) => {
                    // The latest line start from which the rest of this block fits, by binary search.
                    let (mut lo, mut hi, mut best) = (first + 1, end, None);
                    while lo < hi {
                        let mid = lo + (hi - lo) / 2;
                        let mut block = Vec::new();
                        match self.lay_history(&flags, starts[mid], upto, total, left, &mut block) {
                            Ok(laid) => {
                                best = Some((block, laid));
                                hi = mid;
                            }
                            Err(Error::BudgetExceeded { .. }) => lo = mid + 1,
                            Err(other) => return Err(other),
                        }
                    }
                    if let Some((block, laid)) = best {
                        if end == starts.len() {
                            entry = laid;
                        }
                        blocks.push(block);
                    }
                    break;
                }
                Err(other) => return Err(other),
            }
        }
        Ok((blocks.into_iter().rev().flatten().collect(), entry, false))
    }
}

/// The plain emission of the rows from `top`, emitted only as far as asked: its first rows are the same
/// bytes whether or not the rest follows.
#[derive(Debug)]
struct PlainPrefix {
    top: usize,
    bytes: Vec<u8>,
    /// Rows emitted so far, and the state the emission is in after them.
    rows: usize,
    state: State,
}

impl PlainPrefix {
    fn new(top: usize) -> Self {
        PlainPrefix { top, bytes: Vec::new(), rows: 0, state: State { entry: Entry::default(), pen: Style::default() } }
    }

    /// The length of the plain emission of the first `n` rows (of `total` on the whole screen).
    fn offset(&mut self, terminal: &Terminal, n: usize, total: usize) -> Result<usize> {
        if n > self.rows {
            let rows = self.top + self.rows..self.top + n;
            let span = emit::emit_span(terminal, rows, total, self.state, Form::Plain, &mut self.bytes, usize::MAX)?;
            let Some((state, _)) = span else { unreachable!("no limit") };
            (self.rows, self.state) = (n, state);
            if self.top + n == total {
                sgr::set_pen(&mut self.bytes, &mut self.state.pen, Style::default());
            }
        }
        Ok(self.bytes.len())
    }
}

/// The SGR that sets `pen` on a fresh terminal: nothing for the default pen.
fn pen_bytes(pen: Style) -> Vec<u8> {
    if pen == Style::default() { Vec::new() } else { sgr::sgr(&pen) }
}

#[cfg(test)]
mod tests {
    use crate::emit::{self, EXACT_BYTES, Entry, Form};
    use crate::inspect::ROWS_READ;
    use crate::terminal::Terminal;
    use opencode_pty_testkit::screens::StyledCells;

    /// Every cell in its own style with two combining marks; every third cell a wide character with one.
    fn adversarial_screen(cols: usize, rows: usize) -> Vec<u8> {
        StyledCells { attributes: "0;1;3;9", wide: true, between_rows: b"\r\n" }.screen(cols, rows)
    }

    /// A screen whose exact form is ten times the limit: the checkpoint emits exactly only about what the
    /// limit holds (a forward attempt that stops past it, then the bottom rows up to just past it), and reads
    /// the rows it lays plain once, not the whole screen twice.
    #[test]
    fn an_oversized_screen_is_emitted_exactly_only_as_far_as_the_limit_reaches() {
        let (cols, rows) = (100u16, 400u16);
        let mut t = Terminal::new(cols, rows, 1000).expect("terminal");
        t.write(&adversarial_screen(usize::from(cols), usize::from(rows)));
        let total = t.total_rows();
        assert_eq!(total, usize::from(rows), "no history");
        let mut whole = Vec::new();
        emit::emit_rows_marked(&t, 0, total, total, Entry::default(), Form::Exact, &mut whole).expect("emit");
        let limit = whole.len() / 10;

        EXACT_BYTES.with(|n| n.set(0));
        ROWS_READ.with(|n| n.set(0));
        let fitted = t.vt_checkpoint_within(limit).expect("fits");
        let (emitted, read) = (EXACT_BYTES.with(|n| n.get()), ROWS_READ.with(|n| n.get()));
        assert!(fitted.len() <= limit);
        eprintln!("exact form {} bytes, limit {limit}: emitted {emitted} bytes exactly, read {read} rows", whole.len());
        assert!(emitted < whole.len() * 2 / 5, "emitted {emitted} bytes of a {}-byte exact form", whole.len());
        assert!(read < total * 3 / 2, "read {read} rows of {total}");
    }
}

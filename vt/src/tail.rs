//! The exact part of a checkpoint emitted under a budget: the bytes of its last rows, as far up as the budget
//! reaches, without emitting the rows above them.
//!
//! A checkpoint only ever keeps a suffix of the exact part (C4 cuts its oldest rows), so when the whole is
//! over budget only the rows from the bottom up to just past the budget matter. They are emitted in chunks of
//! [`TAIL_CHUNK_ROWS`] from the bottom up, each from the state (entry and pen) a forward emission of all the
//! rows would be in at the chunk's first row. That state follows from the one or two rows above it:
//! - the entry into row `y` is what emitting row `y - 1` returns, which depends only on rows `y - 1` and `y`;
//! - the pen is the default unless row `y - 1` wraps into `y`; otherwise it is the last pen row `y - 1` sets
//!   (emitted from its own entry), or, when it sets none, the pen before it, found the same way.
//!
//! So the bytes are exactly those of the forward emission from the first row kept (tested against it).

use crate::emit::{self, Entry, Form, RowStart, State};
use crate::error::Result;
use crate::inspect::Style;
use crate::sgr;
use crate::terminal::Terminal;

/// Rows emitted per step from the bottom up: each step costs up to two rows more (to find its state), and the
/// last one can take up to this many rows past the budget.
pub(crate) const TAIL_CHUNK_ROWS: usize = 32;

/// A pen no cell has (underline kinds are small and non-negative): a row emitted from it that still has it
/// at the end set no pen of its own.
const NO_PEN: Style = Style {
    fg: crate::inspect::Color::Default,
    bg: crate::inspect::Color::Default,
    underline_color: crate::inspect::Color::Default,
    bold: false,
    italic: false,
    faint: false,
    blink: false,
    inverse: false,
    invisible: false,
    strikethrough: false,
    overline: false,
    underline: i32::MIN,
};

/// Rows `from..total` of an exact emission of `first..total` (from column 0 of a fresh terminal's first row
/// with the default pen): their bytes and where each starts, exactly as in the emission of all the rows.
#[derive(Debug)]
pub(crate) struct Tail {
    /// The first row emitted: `first` when the whole fits, else the row that took the bytes past the budget
    /// (or a row above it in the same chunk).
    pub(crate) from: usize,
    /// The bytes of rows `from..total`, ending with the pen reset.
    pub(crate) bytes: Vec<u8>,
    /// Where each row of `from..total` starts in `bytes`, with its pen.
    pub(crate) marks: Vec<RowStart>,
}

impl Tail {
    /// The start of row `y`, or `None` when it was not emitted (its rest is over the budget).
    pub(crate) fn mark(&self, y: usize) -> Option<RowStart> {
        y.checked_sub(self.from).and_then(|i| self.marks.get(i)).copied()
    }
}

/// The exact emission of rows `first..total`, whole when it takes at most `budget` bytes; otherwise only its
/// last rows, down from the first one whose bytes (with those of every row below it) pass `budget`.
pub(crate) fn exact_tail(terminal: &Terminal, first: usize, total: usize, budget: usize) -> Result<Tail> {
    exact_tail_in(terminal, first, total, budget, TAIL_CHUNK_ROWS)
}

/// [`exact_tail`] in chunks of `chunk_rows` (at least 1).
fn exact_tail_in(terminal: &Terminal, first: usize, total: usize, budget: usize, chunk_rows: usize) -> Result<Tail> {
    let start = State { entry: Entry::default(), pen: Style::default() };
    // The common case, a whole that fits, in one pass; it gives up once past the budget.
    let mut bytes = Vec::new();
    if let Some((mut state, marks)) =
        emit::emit_span(terminal, first..total, total, start, Form::Exact, &mut bytes, budget)?
    {
        sgr::set_pen(&mut bytes, &mut state.pen, Style::default());
        return Ok(Tail { from: first, bytes, marks });
    }
    // Chunks from the bottom up, the last pushed first, until past the budget.
    let mut chunks: Vec<(Vec<u8>, Vec<RowStart>)> = Vec::new();
    let (mut end, mut size) = (total, 0);
    while end > first && size <= budget {
        let begin = end.saturating_sub(chunk_rows.max(1)).max(first);
        let state = state_before(terminal, first, begin, total)?;
        let mut chunk = Vec::new();
        let span = emit::emit_span(terminal, begin..end, total, state, Form::Exact, &mut chunk, usize::MAX)?;
        let Some((mut after, marks)) = span else { unreachable!("no limit") };
        if end == total {
            sgr::set_pen(&mut chunk, &mut after.pen, Style::default());
        }
        size += chunk.len();
        chunks.push((chunk, marks));
        end = begin;
    }
    let mut tail = Tail { from: end, bytes: Vec::with_capacity(size), marks: Vec::with_capacity(total - end) };
    for (chunk, marks) in chunks.into_iter().rev() {
        let base = tail.bytes.len();
        tail.marks.extend(marks.into_iter().map(|m| RowStart { offset: base + m.offset, ..m }));
        tail.bytes.extend_from_slice(&chunk);
    }
    Ok(tail)
}

/// The state a forward emission of rows `first..total` is in at row `y` (see the module docs).
fn state_before(terminal: &Terminal, first: usize, y: usize, total: usize) -> Result<State> {
    let entry = entry_into(terminal, first, y, total)?;
    if entry == Entry::default() {
        // A row that does not wrap into the next ends with the pen reset (and the first starts with it).
        return Ok(State { entry, pen: Style::default() });
    }
    // Row `k` wraps into row `k + 1`: the pen it leaves is the last it sets.
    let mut k = y - 1;
    loop {
        let into_k = entry_into(terminal, first, k, total)?;
        let mut scratch = Vec::new();
        let from = State { entry: into_k, pen: NO_PEN };
        let span = emit::emit_span(terminal, k..k + 1, total, from, Form::Exact, &mut scratch, usize::MAX)?;
        let Some((after, _)) = span else { unreachable!("no limit") };
        if after.pen != NO_PEN {
            return Ok(State { entry, pen: after.pen });
        }
        if into_k == Entry::default() {
            return Ok(State { entry, pen: Style::default() });
        }
        k -= 1;
    }
}

/// How the emission leaves the cursor for row `y`: what emitting row `y - 1` returns, whatever its own entry.
fn entry_into(terminal: &Terminal, first: usize, y: usize, total: usize) -> Result<Entry> {
    if y == first {
        return Ok(Entry::default());
    }
    let mut scratch = Vec::new();
    let from = State { entry: Entry::default(), pen: Style::default() };
    let span = emit::emit_span(terminal, y - 1..y, total, from, Form::Exact, &mut scratch, usize::MAX)?;
    let Some((after, _)) = span else { unreachable!("no limit") };
    Ok(after.entry)
}

#[cfg(test)]
#[path = "../tests/support/screens.rs"]
#[allow(dead_code)]
mod screens;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tail, in chunks of every few sizes and under budgets cutting anywhere, is byte for byte the end of
    /// the forward emission of all the rows, with the same row starts and pens.
    #[test]
    fn the_tail_is_the_end_of_the_forward_emission() {
        let (mut cases, mut cut) = (0, 0);
        for class in super::screens::Class::ALL {
            for seed in 0..60 {
                let case = super::screens::generate(class, seed);
                let mut t = Terminal::new(case.cols, case.rows, 1000).expect("terminal");
                t.write(&case.input);
                let total = t.total_rows();
                for first in [0, total.saturating_sub(usize::from(case.rows) + 3)] {
                    let mut whole = Vec::new();
                    let (_, marks) =
                        emit::emit_rows_marked(&t, first, total, total, Entry::default(), Form::Exact, &mut whole)
                            .expect("emit");
                    for budget in [usize::MAX, whole.len(), whole.len() / 2, whole.len() / 5, 0] {
                        for chunk in [1, 2, 5, TAIL_CHUNK_ROWS] {
                            let tail = exact_tail_in(&t, first, total, budget, chunk).expect("tail");
                            let at = tail.from - first;
                            let offset = marks.get(at).map_or(whole.len(), |m| m.offset);
                            let context =
                                format!("{} seed {seed} first {first} budget {budget} chunk {chunk}", class.name());
                            assert_eq!(tail.bytes, whole[offset..], "{context}");
                            assert_eq!(tail.marks.len(), marks.len() - at, "{context}");
                            for (got, want) in tail.marks.iter().zip(&marks[at..]) {
                                assert_eq!(got.offset + offset, want.offset, "{context}");
                                assert_eq!(got.pen, want.pen, "{context}");
                            }
                            if tail.from > first {
                                assert!(tail.bytes.len() > budget, "{context}: stopped early");
                                cut += 1;
                            } else if budget >= whole.len() {
                                assert_eq!(tail.bytes.len(), whole.len(), "{context}");
                            }
                            cases += 1;
                        }
                    }
                }
            }
        }
        assert!(cut > cases / 4, "{cut} of {cases} cases were cut");
    }
}

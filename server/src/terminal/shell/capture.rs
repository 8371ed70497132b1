//! The text of one command's output, as `run` and `wait_command` answer it: the output bytes go through an
//! emulator of their own (the terminal's size when the command started, a short history), whose rows are taken as
//! they scroll into its history, and whose screen gives the last rows. The first rows are kept up to half of [`MAX_ROWS_BYTES`] (the head), the last rows in a ring of the
//! other half (the tail); rows in between are counted and left out, and a marker row says how many.
//!
//! The bytes are fed in pieces of at most [`CAPTURE_PIECE_BYTES`], and after each the rows new in the history are
//! read. The history is cleared (by a `CSI 3 J` of ours) only where the output stands between two of its own
//! sequences ([`ground::Ground`]), so that the clear never lands inside one of them; so the emulator rarely holds
//! more than a few pieces' rows of history, and no row leaves it unread (a row pushed out of a full history
//! anyway, by a huge scroll count, makes the text `truncated`).

mod ground;

use std::collections::VecDeque;

use opencode_pty_protocol::MAX_ROWS_BYTES;
use opencode_pty_vt::{Terminal, row_json_cost};

/// The most output bytes fed to a capture's emulator between two reads of its history: a byte makes at most one
/// row but for a scroll with a count (`CSI n S`), so its history ([`CAPTURE_HISTORY_LINES`]) holds every row a
/// piece or two make.
pub(crate) const CAPTURE_PIECE_BYTES: usize = 4096;

/// The history of a capture's emulator, in rows: more than a piece can make.
const CAPTURE_HISTORY_LINES: usize = 2 * CAPTURE_PIECE_BYTES;

/// The JSON cost of the rows kept from the start of the output (see `row_json_cost`).
const HEAD_BUDGET: usize = MAX_ROWS_BYTES / 2;

/// The JSON cost of the rows kept from the end of the output, the marker row's room left aside.
const TAIL_BUDGET: usize = MAX_ROWS_BYTES / 2 - 256;

/// What the capture made of a command's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandText {
    /// The rows, joined by `\n`, trailing blank rows left out.
    pub(crate) text: String,
    /// Whether rows were left out (a marker row stands where they were).
    pub(crate) truncated: bool,
}

/// The rows of one command's output so far.
pub(crate) struct Capture {
    vt: Terminal,
    head: Vec<String>,
    head_cost: usize,
    /// The head is full: later rows go to the tail.
    head_done: bool,
    tail: VecDeque<String>,
    tail_cost: usize,
    /// Rows between the head and the tail that were left out.
    left_out: u64,
    /// Whether the capture started after the command's first bytes had left the replay buffer.
    missed_start: bool,
    /// The rows of the emulator's history already taken.
    taken: usize,
    /// Where the output stands: the history is cleared only between sequences.
    ground: ground::Ground,
    /// Rows may have left the emulator's history unread.
    lost: bool,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture").field("head", &self.head.len()).field("tail", &self.tail.len()).finish()
    }
}

impl Capture {
    /// A capture for output on a screen of `cols` by `rows` (its rows wrap at `cols`). `missed_start`: its first bytes are gone,
    /// which the text then says in its first row.
    pub(crate) fn new(cols: u16, rows: u16, missed_start: bool) -> Result<Capture, opencode_pty_vt::Error> {
        Ok(Capture {
            vt: Terminal::new(cols.max(1), rows.max(1), CAPTURE_HISTORY_LINES)?,
            head: Vec::new(),
            head_cost: 0,
            head_done: missed_start,
            tail: VecDeque::new(),
            tail_cost: 0,
            left_out: 0,
            missed_start,
            taken: 0,
            ground: ground::Ground::default(),
            lost: false,
        })
    }

    /// More of the command's output.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for piece in bytes.chunks(CAPTURE_PIECE_BYTES) {
            self.vt.write(piece);
            self.ground.feed(piece);
            // Replies (to a query in the output) are the terminal's business, not the capture's.
            drop(self.vt.take_replies());
            self.take_history();
        }
    }

    /// The rows that scrolled into the emulator's history since the last time, which no later byte can change;
    /// the history is then cleared when the output stands between sequences.
    fn take_history(&mut self) {
        let count = self.vt.scrollback_rows();
        if count >= CAPTURE_HISTORY_LINES {
            // Full: the oldest rows may have gone unread, and the numbering has moved.
            self.lost = true;
            self.taken = self.taken.min(count);
        }
        if count > self.taken {
            let rows = self.vt.read_row_range(self.taken, count - self.taken, usize::MAX).unwrap_or_default();
            self.taken = count;
            for row in rows {
                self.keep(row);
            }
        }
        if self.taken > 0 && self.ground.at_ground() {
            self.vt.clear_history();
            self.taken = 0;
        }
    }

    /// One more row, to the head while it has room, else to the tail.
    fn keep(&mut self, row: String) {
        let cost = row_json_cost(&row);
        if !self.head_done {
            if self.head_cost + cost <= HEAD_BUDGET {
                self.head_cost += cost;
                self.head.push(row);
                return;
            }
            self.head_done = true;
        }
        self.tail_cost += cost;
        self.tail.push_back(row);
        while self.tail_cost > TAIL_BUDGET {
            let Some(dropped) = self.tail.pop_front() else { break };
            self.tail_cost -= row_json_cost(&dropped);
            self.left_out += 1;
        }
    }

    /// The text of the output fed so far (the command ended).
    pub(crate) fn finish(mut self) -> CommandText {
        self.take_history();
        // Then the screen, filled from its top (below the history not yet cleared); trailing blank rows are
        // trimmed below.
        let screen = self.vt.read_row_range(self.taken, self.vt.total_rows(), usize::MAX).unwrap_or_default();
        for row in screen {
            self.keep(row);
        }
        let mut rows: Vec<String> = Vec::with_capacity(self.head.len() + self.tail.len() + 1);
        let truncated = self.left_out > 0 || self.missed_start || self.lost;
        if self.missed_start {
            rows.push("[... the start of the output is no longer kept ...]".to_owned());
        }
        rows.append(&mut self.head);
        if self.left_out > 0 {
            rows.push(format!("[... {} rows left out ...]", self.left_out));
        }
        rows.extend(self.tail);
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        CommandText { text: rows.join("\n"), truncated }
    }
}

#[cfg(test)]
mod tests;

//! Row reads: the last `n` physical rows of the active buffer, one plain-text string each, under a budget.

use crate::error::{Error, Result};
use crate::format::{Format, Space};
use crate::terminal::Terminal;

/// What one row costs in a JSON response: its escaped text with quotes, a separator and an owned-string slot.
pub fn row_json_cost(line: &str) -> usize {
    let escaped: usize = line
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if u32::from(c) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum();
    escaped + 2 + 1 + size_of::<String>()
}

impl Terminal {
    /// The last `n` physical rows of the active buffer, history included: each row formatted separately as
    /// plain text, soft wraps not joined, trailing whitespace trimmed, blank rows as empty strings. Fewer rows
    /// come back only when the buffer holds fewer than `n`.
    ///
    /// `budget` bounds the JSON cost of the result (array brackets plus [`crate::row_json_cost`] of every
    /// row); a read that would exceed it fails with [`Error::BudgetExceeded`] rather than truncating.
    pub fn read_rows(&self, n: usize, budget: usize) -> Result<Vec<String>> {
        if n == 0 {
            return Err(Error::ZeroRows);
        }
        let total = self.total_rows();
        let count = n.min(total);
        self.read_row_range(total - count, count, budget)
    }

    /// The `count` physical rows of the active buffer from row `first` (0: the oldest row of its history),
    /// formatted as [`Self::read_rows`] formats them and under the same kind of budget. A range past the
    /// buffer's last row is cut at it.
    pub fn read_row_range(&self, first: usize, count: usize, budget: usize) -> Result<Vec<String>> {
        let total = self.total_rows();
        let count = count.min(total.saturating_sub(first));
        if count == 0 {
            return Ok(Vec::new());
        }
        let total = first + count;
        let over = || Error::BudgetExceeded { limit: budget };
        // Brackets plus the fixed part of every row's cost, before any text is formatted.
        let mut cost = 2 + count * row_json_cost("");
        if cost > budget {
            return Err(over());
        }
        // The formatted text (with its line breaks) never exceeds the JSON cost, so the budget bounds it too.
        let text = self.format_rows(Format::plain(), Space::Screen, first, total - 1, budget)?;
        let text = String::from_utf8_lossy(&text);
        let mut lines: Vec<String> = text.split('\n').map(|l| l.trim_end_matches('\r').to_owned()).collect();
        if text.ends_with('\n') {
            lines.pop();
        }
        if lines.len() > count {
            // A row that formatted as several lines: fall back to one selection per row.
            lines = (first..total)
                .map(|y| self.format_rows(Format::plain(), Space::Screen, y, y, budget))
                .map(|r| r.map(|bytes| String::from_utf8_lossy(&bytes).replace(['\r', '\n'], "")))
                .collect::<Result<_>>()?;
        }
        // Only trailing blank rows are left out of the formatted text.
        debug_assert!(lines.len() <= count, "{} formatted lines for {count} rows", lines.len());
        lines.resize(count, String::new());
        for line in &lines {
            cost += row_json_cost(line) - row_json_cost("");
            if cost > budget {
                return Err(over());
            }
        }
        Ok(lines)
    }

    /// Forgets the rows of history (what `CSI 3 J` does): the rows [`Self::read_row_range`] numbers from 0
    /// start at the top of the active area again.
    pub fn clear_history(&mut self) {
        self.write(b"\x1b[3J");
    }
}

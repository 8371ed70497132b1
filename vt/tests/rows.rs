//! `Terminal::read_rows`: the last physical rows of the active buffer, one plain-text string each.

use opencode_pty_vt::{Error, Terminal, row_json_cost};

const BUDGET: usize = 1 << 20;

fn terminal(cols: u16, rows: u16, input: &str) -> Terminal {
    let mut t = Terminal::new(cols, rows, 1000).expect("terminal");
    t.write(input.as_bytes());
    t
}

#[test]
fn keeps_blank_rows_and_leading_spaces() {
    let t = terminal(20, 6, "one\r\n\r\n   indented  \r\n\r\nlast");
    assert_eq!(t.read_rows(6, BUDGET).unwrap(), ["one", "", "   indented", "", "last", ""]);
}

#[test]
fn keeps_combining_marks_and_wide_cells() {
    let t = terminal(20, 3, "e\u{301}clair 漢字 ok\r\n🙂x");
    assert_eq!(t.read_rows(3, BUDGET).unwrap(), ["e\u{301}clair 漢字 ok", "🙂x", ""]);
}

#[test]
fn keeps_soft_wrapped_rows_separate() {
    let t = terminal(5, 4, "abcdefghij\r\nk");
    assert_eq!(t.read_rows(4, BUDGET).unwrap(), ["abcde", "fghij", "k", ""]);
}

#[test]
fn reads_into_history_and_stops_at_its_start() {
    let t = terminal(10, 3, "h1\r\nh2\r\nh3\r\nv1\r\nv2");
    assert_eq!(t.read_rows(2, BUDGET).unwrap(), ["v1", "v2"]);
    assert_eq!(t.read_rows(5, BUDGET).unwrap(), ["h1", "h2", "h3", "v1", "v2"]);
    assert_eq!(t.read_rows(500, BUDGET).unwrap().len(), 5, "never more rows than the buffer holds");
}

#[test]
fn alternate_screen_never_shows_primary_history() {
    let mut t = terminal(10, 3, "h1\r\nh2\r\nh3\r\nv1\r\nv2");
    t.write(b"\x1b[?1049h\x1b[Halt");
    assert_eq!(t.read_rows(100, BUDGET).unwrap(), ["alt", "", ""]);
    t.write(b"\x1b[?1049l");
    assert_eq!(t.read_rows(100, BUDGET).unwrap(), ["h1", "h2", "h3", "v1", "v2"]);
}

#[test]
fn fails_past_its_budget_instead_of_truncating() {
    let t = terminal(40, 3, "0123456789012345678901234567890123456789\r\nx");
    let rows = t.read_rows(3, BUDGET).unwrap();
    let cost: usize = 2 + rows.iter().map(|r| row_json_cost(r)).sum::<usize>();
    assert_eq!(t.read_rows(3, cost).unwrap(), rows, "exactly the budget is enough");
    assert_eq!(t.read_rows(3, cost - 1), Err(Error::BudgetExceeded { limit: cost - 1 }));
    // The fixed per-row cost alone can exceed the budget: many blank rows fail too.
    let blank = terminal(10, 100, "");
    assert!(matches!(blank.read_rows(100, 100), Err(Error::BudgetExceeded { .. })));
}

#[test]
fn zero_rows_are_refused() {
    assert_eq!(terminal(10, 3, "x").read_rows(0, BUDGET), Err(Error::ZeroRows));
}

#[test]
fn json_cost_counts_escapes() {
    let slot = size_of::<String>() + 1 + 2;
    assert_eq!(row_json_cost(""), slot);
    assert_eq!(row_json_cost("ab"), slot + 2);
    assert_eq!(row_json_cost("\"\\"), slot + 4);
    assert_eq!(row_json_cost("\u{1}"), slot + 6);
    assert_eq!(row_json_cost("漢"), slot + 3);
}

#[test]
fn a_row_range_reads_history_from_its_first_row_and_clearing_history_renumbers() {
    let mut terminal = Terminal::new(20, 3, 100).unwrap();
    for n in 0..8 {
        terminal.write(format!("line {n}\r\n").as_bytes());
    }
    // Eight lines and the cursor's empty row: six rows went to history.
    assert_eq!(terminal.scrollback_rows(), 6);
    let history = terminal.read_row_range(0, terminal.scrollback_rows(), 1 << 20).unwrap();
    assert_eq!(history, ["line 0", "line 1", "line 2", "line 3", "line 4", "line 5"]);
    assert_eq!(terminal.read_row_range(7, 5, 1 << 20).unwrap(), ["line 7", ""], "cut at the last row");
    terminal.clear_history();
    assert_eq!(terminal.scrollback_rows(), 0);
    assert_eq!(terminal.read_row_range(0, 3, 1 << 20).unwrap(), ["line 6", "line 7", ""]);
    terminal.write(b"line 8\r\nline 9\r\n");
    assert_eq!(terminal.read_row_range(0, terminal.scrollback_rows(), 1 << 20).unwrap(), ["line 6", "line 7"]);
}

//! Checkpoints that would be over their limit: the oldest history is left out (formatted lines first, then
//! the exact rows), and a screen too large even alone keeps its bottom rows exact and its top rows as text;
//! what is kept replays exactly as the source's most recent rows.

use opencode_pty_testkit::screens::{self, StyledCells};
use opencode_pty_vt::{
    Blanks, CellInfo, MAX_CHECKPOINT_BYTES, MAX_PLAIN_CELL_BYTES, MAX_PLAIN_ROW_BYTES, Style, Terminal,
};

const SCROLLBACK: usize = 10_000;

/// `lines` lines exactly `cols` wide, a new 256-colour pen every 8 characters, each ending in a reset and CRLF.
fn coloured_lines(cols: usize, lines: usize) -> Vec<u8> {
    screens::coloured_lines(cols, lines, b"\x1b[0m\r\n")
}

/// The worst case for the exact form: every cell in its own style (three truecolour colours, every
/// attribute, concealed too, curly underline), with two combining marks; every third cell a wide character
/// instead.
fn adversarial_screen(cols: usize, rows: usize) -> Vec<u8> {
    StyledCells { attributes: "0;1;2;3;5;7;8;9;53", wide: true, between_rows: b"\r\n" }.screen(cols, rows)
}

fn terminal(cols: u16, rows: u16, input: &[u8]) -> Terminal {
    let mut t = Terminal::new(cols, rows, SCROLLBACK).expect("terminal");
    t.write(input);
    t
}

fn replay(source: &Terminal, checkpoint: &[u8]) -> Terminal {
    let (cols, rows) = source.size();
    terminal(cols, rows, checkpoint)
}

#[test]
fn the_whole_checkpoint_when_it_fits_exactly() {
    let source = terminal(80, 24, &coloured_lines(80, 1000));
    let full = source.vt_checkpoint().expect("checkpoint");
    assert_eq!(source.vt_checkpoint_within(full.len()).expect("at exactly its size"), full);
    let shorter = source.vt_checkpoint_within(full.len() - 1).expect("one byte less");
    assert!(shorter.len() < full.len());
    let replayed = replay(&source, &shorter);
    assert!(replayed.total_rows() < source.total_rows(), "the oldest history went");
    assert_eq!(source.recent_state_diff(&replayed, Blanks::Visible).expect("diff"), None);
}

#[test]
fn the_oldest_formatted_history_goes_first_and_as_little_as_practical() {
    let source = terminal(80, 24, &coloured_lines(80, 3000));
    let full = source.vt_checkpoint().expect("checkpoint");
    for limit in [full.len() * 3 / 4, full.len() / 2, full.len() / 4] {
        let fitted = source.vt_checkpoint_within(limit).expect("fits");
        assert!(fitted.len() <= limit);
        // Lines of 80 coloured cells take well under 2 KiB: no more than about one is given up.
        assert!(limit - fitted.len() < 2048, "{} bytes left unused of {limit}", limit - fitted.len());
        let replayed = replay(&source, &fitted);
        assert!(replayed.total_rows() < source.total_rows());
        assert!(replayed.total_rows() > 24 + 200, "the exact history rows stay while older history goes");
        assert_eq!(source.recent_state_diff(&replayed, Blanks::Visible).expect("diff"), None, "limit {limit}");
    }
}

#[test]
fn the_exact_history_rows_go_next_and_replay_exactly() {
    let source = terminal(80, 24, &coloured_lines(80, 3000));
    let screen_only = {
        let fresh = terminal(80, 24, &coloured_lines(80, 24)[..]);
        fresh.vt_checkpoint().expect("checkpoint").len()
    };
    let limit = screen_only * 3;
    let fitted = source.vt_checkpoint_within(limit).expect("fits");
    assert!(fitted.len() <= limit);
    let replayed = replay(&source, &fitted);
    assert!(replayed.total_rows() > 24 && replayed.total_rows() < 24 + 200, "{}", replayed.total_rows());
    assert_eq!(source.recent_state_diff(&replayed, Blanks::Exact).expect("diff"), None, "cell by cell");
}

/// A cell as the plain form lays it: text only, a narrow cell's text cut to its first code point past 4
/// bytes (a wide cell's past 8).
fn plain(cell: &CellInfo) -> CellInfo {
    let keep = if cell.wide == 1 { 8 } else { 4 };
    let text = if cell.text.len() > keep { cell.text.chars().take(1).collect() } else { cell.text.clone() };
    CellInfo { text, wide: cell.wide, style: Style::default(), link: None }
}

#[test]
fn an_adversarial_screen_of_the_largest_size_fits_with_its_bottom_rows_exact() {
    let (cols, rows) = (1000u16, 500u16);
    assert!(
        usize::from(rows) * (usize::from(cols) * MAX_PLAIN_CELL_BYTES + MAX_PLAIN_ROW_BYTES) < MAX_CHECKPOINT_BYTES / 2,
        "the plain form of the largest screen fits with room to spare"
    );
    let mut input = coloured_lines(usize::from(cols), 300);
    input.extend_from_slice(&adversarial_screen(usize::from(cols), usize::from(rows)));
    let source = terminal(cols, rows, &input);
    let exact = source.vt_checkpoint_within(usize::MAX).expect("unlimited").len();
    assert!(exact > 4 * MAX_CHECKPOINT_BYTES, "the exact form is far over the limit ({exact} bytes)");

    let fitted = source.vt_checkpoint().expect("the checkpoint fits");
    assert!(fitted.len() <= MAX_CHECKPOINT_BYTES);
    let replayed = replay(&source, &fitted);
    assert_eq!(replayed.total_rows(), usize::from(rows), "no history is left");
    assert_eq!(replayed.cursor(), source.cursor());
    // Top rows as text, then the rest exact, down to the last.
    let top = source.total_rows() - usize::from(rows);
    let mut exact_from = None;
    for y in 0..usize::from(rows) {
        let (a, b) = (source.row_info(top + y).expect("row"), replayed.row_info(y).expect("row"));
        assert_eq!(a.wrap, b.wrap, "row {y} wrap");
        if a.cells == b.cells {
            exact_from.get_or_insert(y);
        } else {
            assert_eq!(exact_from, None, "row {y} differs below an exact row");
            let expected: Vec<_> = a.cells.iter().map(plain).collect();
            assert_eq!(b.cells, expected, "row {y} is the plain form");
        }
    }
    let exact_from = exact_from.expect("the bottom rows are exact");
    assert!(exact_from > 0, "some rows are plain");
    eprintln!("{exact_from} of {rows} rows plain, checkpoint {} bytes (exact: {exact})", fitted.len());
}

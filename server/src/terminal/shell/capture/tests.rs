//! The capture's text: rows as the emulator shows them, the head and the tail of a long output, a marker row.

use super::*;

fn text(cols: u16, rows: u16, bytes: &[u8]) -> CommandText {
    let mut capture = Capture::new(cols, rows, false).unwrap();
    capture.feed(bytes);
    capture.finish()
}

#[test]
fn rows_as_the_emulator_shows_them_trailing_blank_rows_left_out() {
    let got = text(20, 5, b"one\r\n\x1b[31mtwo\x1b[0m\r\nprogress 10%\rprogress 100%\r\n");
    assert_eq!(got, CommandText { text: "one\ntwo\nprogress 100%".into(), truncated: false });
    // A row longer than the width wraps into rows of the width; no output is no text.
    assert_eq!(text(4, 5, b"abcdefghij\r\n").text, "abcd\nefgh\nij");
    assert_eq!(text(80, 24, b"").text, "");
    // Output that never ends its last line keeps it.
    assert_eq!(text(80, 24, b"a\r\nb").text, "a\nb");
}

#[test]
fn fed_in_any_pieces_the_rows_are_the_same() {
    let mut bytes = Vec::new();
    for n in 0..3000 {
        bytes.extend_from_slice(format!("row {n}\r\n").as_bytes());
    }
    let whole = text(80, 24, &bytes);
    let mut capture = Capture::new(80, 24, false).unwrap();
    for piece in bytes.chunks(7) {
        capture.feed(piece);
    }
    assert_eq!(capture.finish(), whole);
    let rows: Vec<&str> = whole.text.split('\n').collect();
    assert_eq!(rows.len(), 3000);
    assert_eq!((rows[0], rows[2999]), ("row 0", "row 2999"));
}

#[test]
fn a_long_output_keeps_its_head_and_tail_with_a_marker_between() {
    let mut bytes = Vec::new();
    let total = 200_000;
    for n in 0..total {
        bytes.extend_from_slice(format!("row {n:08}\r\n").as_bytes());
    }
    let got = text(80, 24, &bytes);
    assert!(got.truncated);
    let rows: Vec<&str> = got.text.split('\n').collect();
    assert_eq!(rows[0], "row 00000000", "the head starts with the first row");
    assert_eq!(*rows.last().unwrap(), format!("row {:08}", total - 1), "the tail ends with the last");
    let marker = rows.iter().position(|row| row.starts_with("[... ")).expect("a marker row");
    let left_out: u64 = rows[marker].trim_start_matches("[... ").split(' ').next().unwrap().parse().unwrap();
    // Every row is there once: the head, the rows left out, the tail.
    assert_eq!(marker as u64 + left_out + (rows.len() - marker - 1) as u64, total);
    assert_eq!(rows[marker - 1], format!("row {:08}", marker - 1));
    assert_eq!(rows[marker + 1], format!("row {:08}", marker as u64 + left_out));
    let cost: usize = rows.iter().map(|row| row_json_cost(row)).sum();
    assert!(cost <= MAX_ROWS_BYTES, "within the budget: {cost}");
}

#[test]
fn a_capture_that_missed_the_start_says_so() {
    let mut capture = Capture::new(80, 24, true).unwrap();
    capture.feed(b"late\r\n");
    let got = capture.finish();
    assert!(got.truncated);
    assert_eq!(got.text, "[... the start of the output is no longer kept ...]\nlate");
}

#[test]
fn a_piece_that_ends_inside_a_sequence_or_a_character_leaves_it_whole() {
    let mut rows = String::new();
    for n in 0..40 {
        rows.push_str(&format!("row {n}\r\n"));
    }
    // Each split lands where the history has rows to take: the capture's own clear must wait for the end of
    // the sequence (or character) the output is in.
    let splits: [(&[u8], &[u8], &str); 3] = [
        (b"xx\x1b[3", b"1mRED\x1b[m\r\n", "xxRED"),
        (b"see \x1b]8;;http://exa", b"mple.com\x07link\x1b]8;;\x07\r\n", "see link"),
        (b"caf\xc3", b"\xa9\r\n", "caf\u{e9}"),
    ];
    for (first, second, row) in splits {
        let mut capture = Capture::new(20, 5, false).unwrap();
        let mut bytes = rows.clone().into_bytes();
        bytes.extend_from_slice(first);
        capture.feed(&bytes);
        capture.feed(second);
        let got = capture.finish();
        let lines: Vec<&str> = got.text.split('\n').collect();
        assert_eq!(lines.len(), 41, "{got:?}");
        assert_eq!((lines[39], lines[40]), ("row 39", row));
    }
}

//! Hyperlinks (OSC 8) on cells of the screen and of recent history survive a checkpoint: each run of linked
//! text keeps its URI, unlinked text stays unlinked, wide characters and links that wrap included.

mod support;

use opencode_pty_vt::Blanks;
use support::round_trip;

fn link(uri: &str, text: &str) -> String {
    format!("\x1b]8;;{uri}\x1b\\{text}\x1b]8;;\x1b\\")
}

#[test]
fn linked_text_keeps_its_links() {
    let cases = [
        format!("see {} and {} here", link("https://a.example/x", "docs"), link("file:///tmp/b", "file")),
        format!("{}{}", link("https://one.example", "ab"), link("https://two.example", "cd")),
        format!("wide {} end", link("https://w.example", "\u{4e16}\u{754c}")),
        // A link that wraps onto the next row, then lines that push it into history.
        format!("{}\r\nmore\r\nmore\r\nmore\r\nmore\r\nmore\r\n", link("https://wrap.example", &"z".repeat(30))),
        format!("\x1b[31m{}\x1b[0m plain", link("https://red.example", "red link")),
    ];
    for input in &cases {
        let (source, replay) = round_trip(20, 6, input.as_bytes());
        assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{input:?}");
    }
    // The comparison sees links: a row read back holds its URI.
    let (source, _) = round_trip(20, 6, cases[0].as_bytes());
    let row = source.row_info(source.total_rows() - 6).unwrap();
    assert_eq!(row.cells[4].link.as_deref(), Some("https://a.example/x"));
    assert_eq!(row.cells[0].link, None);
}

#[test]
fn a_link_longer_than_the_bound_is_left_off_and_the_text_kept() {
    let uri = format!("https://long.example/{}", "a".repeat(opencode_pty_vt::MAX_LINK_BYTES));
    let (source, replay) = round_trip(20, 6, link(&uri, "long").as_bytes());
    let row = source.row_info(0).unwrap();
    assert_eq!(row.cells[0].text, "l");
    assert_eq!(row.cells[0].link, None, "a URI over MAX_LINK_BYTES reads as no link");
    assert_eq!(replay.row_info(0).unwrap().cells[0].text, "l");
    // A link within the bound on the same screen is still carried.
    let (source, replay) = round_trip(20, 6, link("https://short.example", "ok").as_bytes());
    assert_eq!(source.state_diff(&replay, Blanks::Exact).unwrap(), None);
}

//! Scrollback recycling goes through the crate's `madvise` (pages zeroed in place, no interrupts), and the
//! screen's contents after many recycled pages are exactly what was written (the checkpoint tests cover
//! history, through the same `madvise`).

use opencode_pty_vt::{Terminal, zeroed_in_place};

#[test]
fn recycled_scrollback_pages_are_zeroed_in_place_and_history_stays_exact() {
    let before = zeroed_in_place();
    let mut terminal = Terminal::new(80, 24, 100).expect("terminal");
    // Far more lines than the 100 of history kept: libghostty recycles its oldest pages many times over.
    let lines = 200_000;
    let mut chunk = Vec::new();
    for n in 0..lines {
        chunk.extend_from_slice(format!("\x1b[3{}mline {n:06} {}\x1b[0m\r\n", n % 8, "x".repeat(n % 60)).as_bytes());
        if chunk.len() > 64 * 1024 {
            terminal.write(&chunk);
            chunk.clear();
        }
    }
    terminal.write(&chunk);
    assert!(zeroed_in_place() > before, "libghostty's madvise reached this crate's definition");
    // The screen's lines, written into recycled pages, read back exactly: no stale cells.
    let text = terminal.plain_text().expect("plain text");
    let kept: Vec<&str> = text.lines().filter(|line| !line.is_empty()).collect();
    let last = kept.last().expect("some history");
    // Plain text drops trailing blanks, so a line without x's ends at its number.
    let expected = |n: usize| format!("line {n:06} {}", "x".repeat(n % 60)).trim_end().to_owned();
    assert_eq!(*last, expected(lines - 1));
    for (offset, line) in kept.iter().rev().enumerate() {
        let n = lines - 1 - offset;
        assert_eq!(*line, expected(n), "line {n}");
    }
    // The screen shows the 23 last lines above the cursor's empty row.
    assert_eq!(kept.len(), 23);
}

//! Scrollback recycling goes through the crate's `madvise` (pages zeroed in place, no interrupts), every page
//! libghostty recycles is one the crate recorded when libghostty mapped it (none goes to the kernel), and the
//! screen's contents after many recycled pages are exactly what was written (the checkpoint tests cover
//! history, through the same `madvise`); the pages a growing terminal maps while parsing go through the crate's
//! `mmap64` and are populated up front.

use opencode_pty_vt::{Terminal, kernel_discards, populated_mappings, zeroed_in_place};

#[test]
fn recycled_scrollback_pages_are_zeroed_in_place_and_history_stays_exact() {
    let before = zeroed_in_place();
    // (The other test of this binary also discards only pages its terminal mapped, so this stays exact.)
    let missed = kernel_discards();
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
    assert_eq!(kernel_discards(), missed, "every page libghostty recycled was zeroed in place");
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

#[test]
fn pages_mapped_while_parsing_are_populated_up_front() {
    let mut terminal = Terminal::new(80, 24, 10_000).expect("terminal");
    // (Other tests of this binary may parse meanwhile, so the counter is only compared as growing.)
    let created = populated_mappings();
    // 5,000 lines need several more pages than a new terminal has.
    let mut text = Vec::new();
    for n in 0..5_000 {
        text.extend_from_slice(format!("line {n:05} \u{4e16}\u{754c} {}\r\n", "y".repeat(n % 70)).as_bytes());
    }
    terminal.write(&text);
    assert!(populated_mappings() > created, "libghostty's mmap64 during a write reached this crate's definition");
    let screen = terminal.plain_text().expect("plain text");
    assert!(screen.lines().any(|line| line.starts_with("line 04999 ")), "the last line is on screen");
}

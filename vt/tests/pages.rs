//! Scrollback recycling goes through the crate's `madvise` (pages zeroed in place, no interrupts), and the
//! screen's contents after many recycled pages are exactly what was written (the checkpoint tests cover
//! history, through the same `madvise`); the pages a growing terminal maps while parsing go through the crate's
//! `mmap64` and are populated up front; pages a full scrollback swaps go through the crate's `munmap` and come
//! back for the next page of the same length, and the history stays exact across a release of those kept.

use opencode_pty_vt::{
    Terminal, holds_kept_mappings, populated_mappings, release_kept_mappings, reused_mappings, zeroed_in_place,
};

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

/// Line `n` of the many-styled text: spans in 256 colours, so pages run out of room for styles and libghostty
/// replaces them with larger ones (mapped and unmapped instead of recycled in place).
fn styled_line(n: usize) -> String {
    let mut line = format!("{n:06}");
    for span in 0..6 {
        let colour = (n * 7 + span * 31) % 256;
        line.push_str(&format!("\x1b[38;5;{colour};48;5;{}m span{span} \x1b[0m", 255 - colour));
    }
    line
}

#[test]
fn swapped_pages_are_reused_and_history_stays_exact_across_a_release() {
    // (Other tests of this binary may parse meanwhile, but only on their own threads: the kept ranges are this
    // thread's, and the counter is only compared as growing.)
    let mut terminal = Terminal::new(80, 24, 2_000).expect("terminal");
    let before = reused_mappings();
    let lines = 60_000;
    let mut chunk = String::new();
    let mut released = false;
    for n in 0..lines {
        chunk.push_str(&styled_line(n));
        chunk.push_str("\r\n");
        if chunk.len() > 64 * 1024 {
            terminal.write(chunk.as_bytes());
            chunk.clear();
            // Halfway, as the daemon does when a terminal goes quiet: what was kept goes back to the kernel.
            if n > lines / 2 && !released && holds_kept_mappings() {
                release_kept_mappings();
                assert!(!holds_kept_mappings());
                released = true;
            }
        }
    }
    terminal.write(chunk.as_bytes());
    assert!(reused_mappings() > before, "libghostty's munmap reached this crate's definition and was reused");
    assert!(released, "a full scrollback kept a swapped page");
    // Every row of history and screen, written into swapped, reused and released pages, reads back exactly.
    let rows = terminal.read_rows(terminal.total_rows(), 64 << 20).expect("rows");
    let written: Vec<&String> = rows.iter().filter(|row| !row.is_empty()).collect();
    assert!(written.len() > 1_000, "history was kept: {} rows", written.len());
    let first = lines - written.len();
    for (offset, row) in written.iter().enumerate() {
        assert_eq!(**row, plain(&styled_line(first + offset)), "line {}", first + offset);
    }
}

/// `line` without its escape sequences.
fn plain(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('\x1b') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('m').expect("an SGR ends with m");
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out.trim_end().to_owned()
}

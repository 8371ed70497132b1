//! Compressing a quiet terminal really gives its history's memory back to the kernel: the process's resident
//! size falls. A test binary of its own with one test, so no other test's terminals share the process; it
//! fails if compression ever runs under the `pages` mark that zeroes discarded pages in place.

use opencode_pty_vt::{Compression, CompressionMode, Terminal};

/// The process's resident memory in bytes.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
    let pages: usize = statm.split_whitespace().nth(1).and_then(|field| field.parse().ok()).expect("resident");
    // Safety: sysconf has no preconditions.
    pages * usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).expect("page size")
}

#[test]
fn compressing_a_full_history_gives_most_of_its_memory_back() {
    let mut input = Vec::new();
    for n in 0..12_000 {
        input.extend_from_slice(
            format!("INFO request {n} GET /api/items/{} done in {} ms\r\n", n * 7 % 1000, n % 97).as_bytes(),
        );
    }
    let before = rss();
    let mut terminal = Terminal::new(80, 24, 10_000).expect("terminal");
    terminal.write(&input);
    let full = rss();
    let zeroed = opencode_pty_vt::zeroed_in_place();
    assert_eq!(terminal.compress(CompressionMode::Full).expect("compress"), Compression::Complete);
    let compressed = rss();
    assert_eq!(opencode_pty_vt::zeroed_in_place(), zeroed, "compression's discards go to the kernel");
    let held = full.saturating_sub(before);
    assert!(held > 2 << 20, "the history holds memory: {held} bytes");
    assert!(
        full.saturating_sub(compressed) > held / 2,
        "compression gave back {} of the terminal's {held} bytes",
        full.saturating_sub(compressed)
    );
}

//! A terminal whose history was compressed (`Terminal::compress`) answers every read exactly as an uncompressed
//! twin fed the same bytes: state, plain text, VT checkpoint, rows and snapshot, and still after more output
//! and after a resize; and compression is driven the way the header says (activity token, incremental steps).

use opencode_pty_vt::{Blanks, Compression, CompressionMode, Terminal};

const COLS: u16 = 80;
const ROWS: u16 = 24;
/// The daemon's default history.
const SCROLLBACK: usize = 10_000;
/// Lines fed: more than the history holds, so the oldest pages have been recycled too.
const LINES: usize = 12_000;
/// How many incremental steps a pass may take before the test calls it stuck.
const MAX_STEPS: usize = 100_000;

/// Deterministic mixed output: SGR colours (16, 256 and true colour), bold and underline, wide characters,
/// lines that wrap and lines left short.
fn output(lines: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut out = Vec::new();
    for line in 0..lines {
        out.extend_from_slice(format!("{line:05} ").as_bytes());
        for _ in 0..next(14) {
            match next(8) {
                0 => out.extend_from_slice(format!("\x1b[3{}m", next(8)).as_bytes()),
                1 => out.extend_from_slice(format!("\x1b[38;5;{}m", next(256)).as_bytes()),
                2 => {
                    out.extend_from_slice(format!("\x1b[1;48;2;{};{};{}m", next(256), next(256), next(256)).as_bytes())
                }
                3 => out.extend_from_slice(b"\x1b[4m"),
                4 => out.extend_from_slice(b"\x1b[0m"),
                _ => {}
            }
            let word: String = match next(10) {
                0 => "\u{6f22}\u{5b57}".into(),
                1 => "caf\u{e9}".into(),
                _ => (0..1 + next(9)).map(|_| char::from(b'a' + next(26) as u8)).collect(),
            };
            out.extend_from_slice(word.as_bytes());
            out.push(b' ');
        }
        out.extend_from_slice(b"\x1b[0m\r\n");
    }
    out
}

/// Two terminals fed the same history.
fn twins(seed: u64) -> (Terminal, Terminal) {
    let input = output(LINES, seed);
    let mut a = Terminal::new(COLS, ROWS, SCROLLBACK).expect("terminal");
    let mut b = Terminal::new(COLS, ROWS, SCROLLBACK).expect("terminal");
    for chunk in input.chunks(8 << 10) {
        a.write(chunk);
        b.write(chunk);
    }
    (a, b)
}

/// Steps `terminal` with incremental compression until the pass completes; answers the number of steps.
fn compress_incrementally(terminal: &mut Terminal) -> usize {
    for step in 1..=MAX_STEPS {
        match terminal.compress(CompressionMode::Incremental).expect("compress") {
            Compression::Pending => {}
            Compression::Complete => return step,
            Compression::Unsupported => panic!("compression is unsupported on this platform"),
        }
    }
    panic!("no complete pass within {MAX_STEPS} incremental steps");
}

/// Every read the daemon makes answers the same on both.
fn assert_same(compressed: &Terminal, plain: &Terminal, when: &str) {
    assert_eq!(compressed.state_diff(plain, Blanks::Exact).expect("diff"), None, "{when}: state");
    assert_eq!(compressed.scrollback_rows(), plain.scrollback_rows(), "{when}: history rows");
    assert_eq!(compressed.plain_text().expect("text"), plain.plain_text().expect("text"), "{when}: plain text");
    assert_eq!(compressed.vt_checkpoint().expect("ckpt"), plain.vt_checkpoint().expect("ckpt"), "{when}: checkpoint");
    assert_eq!(compressed.raw_vt().expect("vt"), plain.raw_vt().expect("vt"), "{when}: raw VT");
    assert_eq!(compressed.read_rows(50, 1 << 20).expect("rows"), plain.read_rows(50, 1 << 20).expect("rows"));
    let all = compressed.total_rows();
    assert_eq!(
        compressed.read_row_range(0, all, 16 << 20).expect("rows"),
        plain.read_row_range(0, all, 16 << 20).expect("rows"),
        "{when}: every row"
    );
    assert_eq!(compressed.snapshot().expect("snapshot"), plain.snapshot().expect("snapshot"), "{when}: snapshot");
}

#[test]
fn a_compressed_terminal_reads_exactly_as_its_uncompressed_twin() {
    let (mut compressed, plain) = twins(0x5eed);
    assert!(compressed.scrollback_rows() > 9_000, "a full history: {}", compressed.scrollback_rows());
    let steps = compress_incrementally(&mut compressed);
    assert!(steps > 1, "a history of {} rows takes more than one step", compressed.scrollback_rows());
    assert_same(&compressed, &plain, "compressed");
}

#[test]
fn output_after_compression_and_a_resize_keep_the_twins_equal() {
    let (mut compressed, mut plain) = twins(0xfeed);
    assert_eq!(compressed.compress(CompressionMode::Full).expect("compress"), Compression::Complete);
    // More output scrolls compressed pages further up and recycles the oldest (compressed) ones.
    let more = output(3_000, 0xbeef);
    for terminal in [&mut compressed, &mut plain] {
        terminal.write(&more);
    }
    assert_same(&compressed, &plain, "more output");
    // Compress again, then reflow every page (compressed ones included) to another width, then back.
    assert_eq!(compressed.compress(CompressionMode::Full).expect("compress"), Compression::Complete);
    for (cols, rows) in [(57, 19), (COLS, ROWS)] {
        for terminal in [&mut compressed, &mut plain] {
            terminal.resize(cols, rows).expect("resize");
        }
        assert_same(&compressed, &plain, &format!("resized to {cols}x{rows}"));
    }
}

#[test]
fn a_terminal_decoded_from_a_compressed_snapshot_is_the_twin() {
    let (mut compressed, plain) = twins(0xd1ce);
    compress_incrementally(&mut compressed);
    let decoded = Terminal::from_snapshot(&compressed.snapshot().expect("snapshot"), SCROLLBACK).expect("decode");
    assert_eq!(decoded.state_diff(&plain, Blanks::Exact).expect("diff"), None);
}

#[test]
fn activity_changes_with_output_not_with_compression_or_reads() {
    let (mut terminal, _) = twins(0xac7);
    let before = terminal.compression_activity();
    assert_eq!(terminal.compression_activity(), before, "reading the token changes nothing");
    compress_incrementally(&mut terminal);
    let quiet = terminal.compression_activity();
    assert_eq!(quiet, before, "compressing is no activity");
    // Reading restores compressed pages, which is no activity either: the daemon need not compress again.
    terminal.plain_text().expect("text");
    terminal.snapshot().expect("snapshot");
    assert_eq!(terminal.compression_activity(), quiet, "reads are no activity");
    // Called again after a complete pass, a new pass starts and finds nothing to do: the caller is the one
    // that must wait for the token to change.
    let again = compress_incrementally(&mut terminal);
    assert!(again < 10, "a pass over compressed history is a few steps: {again}");
    terminal.write(b"one more line\r\n");
    assert_ne!(terminal.compression_activity(), quiet, "output is activity");
}

#[test]
fn a_small_terminal_completes_in_a_step_or_two_and_reads_the_same() {
    let mut terminal = Terminal::new(COLS, ROWS, SCROLLBACK).expect("terminal");
    terminal.write(b"\x1b[1;31mhello\x1b[0m\r\n$ ");
    let text = terminal.plain_text().expect("text");
    assert!(compress_incrementally(&mut terminal) <= 2);
    assert_eq!(terminal.compress(CompressionMode::Full).expect("compress"), Compression::Complete);
    assert_eq!(terminal.plain_text().expect("text"), text);
}

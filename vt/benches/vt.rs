//! Measures libghostty-vt parse throughput and the cost of `vt_checkpoint`, `read_rows` and `plain_text` on
//! terminals with 10,000 lines of history, each against a baseline measured in the same run (a UTF-8 scan of
//! the same input; the formatter's single raw pass over the same terminal), since these machines are shared
//! and noisy; and what compressing a quiet terminal's history gives back (the process's RSS) and costs (the
//! steps, and reads of a compressed terminal against an uncompressed twin). Run: `just bench-vt` (`cargo bench
//! -p opencode-pty-vt --bench vt`); `-- compression` runs only the compression part.

use std::hint::black_box;
use std::time::{Duration, Instant};

use opencode_pty_vt::Terminal;

#[path = "vt/compression.rs"]
mod compression;

const INPUT_BYTES: usize = 64 << 20;
const WRITE_BYTES: usize = 8 << 10;
const PARSE_RUNS: usize = 3;
/// The baseline is cheaper than parsing, so it gets more runs.
const BASELINE_RUNS: usize = 10;
const HISTORY_LINES: usize = 10_000;
const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

/// Deterministic xorshift64 PRNG, so every run parses the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform-ish in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn char_in(&mut self, lo: u32, hi: u32) -> char {
        char::from_u32(lo + self.below(u64::from(hi - lo)) as u32).unwrap_or('?')
    }
}

/// Compiler/log words, space separated.
const VOCAB: &str =
    "error[E0308]: warning: Compiling src/main.rs:42:17 expected found `u32` --> INFO request done 0x7ffd1c";

/// Appends one log/compiler-like line: words, ~12% of them UTF-8 (CJK, emoji, accents), frequent SGR, CRLF.
fn push_line(rng: &mut Rng, out: &mut Vec<u8>) {
    for w in 0..3 + rng.below(12) {
        if w > 0 {
            out.push(b' ');
        }
        match rng.below(10) {
            0 => out.extend_from_slice(format!("\x1b[{}m", 30 + rng.below(8) + 60 * rng.below(2)).as_bytes()),
            1 => out.extend_from_slice(format!("\x1b[38;5;{}m", rng.below(256)).as_bytes()),
            2 => {
                let (r, g, b) = (rng.below(256), rng.below(256), rng.below(256));
                out.extend_from_slice(format!("\x1b[1;38;2;{r};{g};{b}m").as_bytes());
            }
            3 => out.extend_from_slice(b"\x1b[0m"),
            _ => {}
        }
        let mut word = String::new();
        match rng.below(100) {
            0..4 => (0..1 + rng.below(4)).for_each(|_| word.push(rng.char_in(0x4E00, 0x9FA0))),
            4..8 => (0..1 + rng.below(2)).for_each(|_| word.push(rng.char_in(0x1F300, 0x1F650))),
            8..12 => (0..2 + rng.below(6)).for_each(|_| word.push(rng.char_in(0xC0, 0x17F))),
            12..40 => word.push_str(VOCAB.split(' ').nth(rng.below(12) as usize).unwrap_or("")),
            _ => (0..2 + rng.below(9)).for_each(|_| word.push(rng.char_in(0x61, 0x7B))),
        }
        out.extend_from_slice(word.as_bytes());
    }
    if rng.below(2) == 0 {
        out.extend_from_slice(b"\x1b[0m");
    }
    out.extend_from_slice(b"\r\n");
}

fn generate(rng: &mut Rng, bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 1024);
    while out.len() < bytes {
        push_line(rng, &mut out);
    }
    out.truncate(bytes);
    out
}

/// (min, median) of some samples.
fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[0], samples[samples.len() / 2])
}

fn time<T>(iterations: usize, mut f: impl FnMut() -> T) -> Vec<Duration> {
    (0..iterations)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn mbps(d: Duration) -> f64 {
    INPUT_BYTES as f64 / 1e6 / d.as_secs_f64()
}

/// The same input in the same writes, decoded as UTF-8 and its characters counted instead of parsed.
fn baseline(input: &[u8]) -> usize {
    let mut chars = 0;
    for chunk in input.chunks(WRITE_BYTES) {
        for piece in black_box(chunk).utf8_chunks() {
            chars += piece.valid().chars().count() + piece.invalid().len();
        }
    }
    black_box(chars)
}

fn parse(input: &[u8], cols: u16, rows: u16) -> Duration {
    let mut terminal = Terminal::new(cols, rows, HISTORY_LINES).expect("terminal");
    let start = Instant::now();
    for chunk in input.chunks(WRITE_BYTES) {
        terminal.write(chunk);
    }
    let elapsed = start.elapsed();
    black_box(terminal.take_replies());
    elapsed
}

/// A terminal with `HISTORY_LINES` rows of mixed SGR history (limit 11,000: it is enforced a page at a time).
fn filled(rng: &mut Rng, cols: u16, rows: u16) -> Terminal {
    let mut terminal = Terminal::new(cols, rows, HISTORY_LINES + 1_000).expect("terminal");
    let mut batch = Vec::new();
    for _ in 0..100 {
        if terminal.scrollback_rows() >= HISTORY_LINES {
            break;
        }
        batch.clear();
        (0..500).for_each(|_| push_line(rng, &mut batch));
        terminal.write(&batch);
    }
    terminal
}

fn main() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    if std::env::args().any(|arg| arg == "compression") {
        compression::run(&mut rng);
        return;
    }
    let input = generate(&mut rng, INPUT_BYTES);
    println!("libghostty-vt {}", opencode_pty_vt::library_version());
    println!(
        "parse: {} MiB in {} KiB writes, {PARSE_RUNS} runs each on a fresh terminal ({HISTORY_LINES} lines scrollback)",
        INPUT_BYTES >> 20,
        WRITE_BYTES >> 10
    );
    let (base_min, base_med) = stats(time(BASELINE_RUNS, || baseline(&input)));
    println!("  {:<22} {:>9} {:>9} {:>9} {:>9}", "", "min ms", "med ms", "MB/s", "x base");
    let row = |name: &str, min: Duration, med: Duration| {
        let ratio = min.as_secs_f64() / base_min.as_secs_f64();
        println!("  {name:<22} {:>9.1} {:>9.1} {:>9.1} {ratio:>9.1}", ms(min), ms(med), mbps(min));
    };
    row("baseline UTF-8 scan", base_min, base_med);
    for (cols, rows) in SIZES {
        let (min, med) = stats((0..PARSE_RUNS).map(|_| parse(&input, cols, rows)).collect());
        row(&format!("parse {cols}x{rows}"), min, med);
    }
    println!("  (MB/s from min; x base = parse min / baseline min; baseline: {BASELINE_RUNS} runs)");

    println!("\nreads on a filled terminal (min / median)");
    println!(
        "  {:<8} {:>8} {:>15} {:>10} {:>15} {:>9} {:>18} {:>18}",
        "size", "history", "checkpoint ms", "ckpt KB", "raw VT ms", "x raw", "read_rows(50) µs", "plain_text µs"
    );
    for (cols, rows) in SIZES {
        let terminal = filled(&mut rng, cols, rows);
        let size = terminal.vt_checkpoint().expect("checkpoint").len();
        let (c_min, c_med) = stats(time(20, || terminal.vt_checkpoint().expect("checkpoint")));
        let (v_min, v_med) = stats(time(20, || terminal.raw_vt().expect("raw VT")));
        let (r_min, r_med) = stats(time(200, || terminal.read_rows(50, 1 << 20).expect("rows")));
        let (p_min, p_med) = stats(time(200, || terminal.plain_text().expect("plain text")));
        println!(
            "  {:<8} {:>8} {:>15} {:>10.1} {:>15} {:>9.1} {:>18} {:>18}",
            format!("{cols}x{rows}"),
            terminal.scrollback_rows(),
            format!("{:.2} / {:.2}", ms(c_min), ms(c_med)),
            size as f64 / 1024.0,
            format!("{:.2} / {:.2}", ms(v_min), ms(v_med)),
            c_min.as_secs_f64() / v_min.as_secs_f64(),
            format!("{:.1} / {:.1}", us(r_min), us(r_med)),
            format!("{:.1} / {:.1}", us(p_min), us(p_med)),
        );
    }
    println!("  (checkpoint and raw VT: 20 iterations; x raw = checkpoint min / raw VT min, where raw VT is the");
    println!("   formatter's one pass over history and screen, which does not round-trip; read_rows(50, 1 MiB");
    println!("   budget) and plain_text: 200 iterations)");

    println!();
    compression::run(&mut rng);
}

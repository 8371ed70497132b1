//! What compressing a quiet terminal's history gives back and costs: the process's resident memory before and
//! after, the incremental steps (how many, how long each), and the reads the daemon makes (plain text, VT
//! checkpoint, the last 50 rows, snapshot) and further output on a compressed terminal against an uncompressed
//! twin fed the same bytes, as ratios measured in the same run.

use std::hint::black_box;
use std::time::{Duration, Instant};

use opencode_pty_vt::{Compression, CompressionMode, Terminal};

use super::{Rng, WRITE_BYTES, generate, ms, stats, time, us};

/// What the terminal printed before it went quiet: the "full terminal".
const PRINTED_BYTES: usize = 64 << 20;
/// The daemon's default history.
const SCROLLBACK_LINES: usize = 10_000;
const COLS: u16 = 80;
const ROWS: u16 = 24;
/// Iterations of each read, on each terminal.
const READ_RUNS: usize = 20;
/// Output written to both terminals after compression, to time ingest over compressed history.
const MORE_BYTES: usize = 8 << 20;
/// A pass that takes more steps than this is reported as stuck.
const MAX_STEPS: usize = 100_000;

/// The process's resident memory in bytes (`/proc/self/statm`, second field, in pages).
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
    let pages: usize = statm.split_whitespace().nth(1).and_then(|field| field.parse().ok()).expect("resident");
    // Safety: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * usize::try_from(page).unwrap_or(4096)
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// The difference `after - before` in MiB, signed.
fn delta(after: usize, before: usize) -> f64 {
    (after as f64 - before as f64) / (1 << 20) as f64
}

fn fed(input: &[u8]) -> Terminal {
    let mut terminal = Terminal::new(COLS, ROWS, SCROLLBACK_LINES).expect("terminal");
    for chunk in input.chunks(WRITE_BYTES) {
        terminal.write(chunk);
    }
    terminal
}

/// Compresses with incremental steps until a pass completes; the duration of each step.
fn compress(terminal: &mut Terminal) -> Vec<Duration> {
    let mut steps = Vec::new();
    while steps.len() < MAX_STEPS {
        let start = Instant::now();
        let result = terminal.compress(CompressionMode::Incremental).expect("compress");
        steps.push(start.elapsed());
        match result {
            Compression::Pending => {}
            Compression::Complete => return steps,
            Compression::Unsupported => panic!("compression is unsupported here"),
        }
    }
    panic!("no complete pass within {MAX_STEPS} steps");
}

/// What a read costs on the compressed terminal (compressed again, untimed, before each run, so every run
/// reads a compressed terminal) and on the twin, and how much memory the first read on the compressed terminal
/// brought back (MiB): (compressed min, median), (twin min, median), restored.
type ReadCost = ((Duration, Duration), (Duration, Duration), f64);

fn read_cost<T>(compressed: &mut Terminal, twin: &Terminal, read: impl Fn(&Terminal) -> T) -> ReadCost {
    let mut on_compressed = Vec::with_capacity(READ_RUNS);
    let mut restored = 0.0;
    for run in 0..READ_RUNS {
        compressed.compress(CompressionMode::Full).expect("compress");
        let before = rss();
        let start = Instant::now();
        let answer = read(compressed);
        on_compressed.push(start.elapsed());
        if run == 0 {
            restored = delta(rss(), before);
        }
        black_box(answer);
    }
    (stats(on_compressed), stats(time(READ_RUNS, || read(twin))), restored)
}

/// Plain log lines: words and numbers, no colour, the kind of output that compresses best.
fn plain_log(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 128);
    let mut n = 0u64;
    while out.len() < bytes {
        n += 1;
        let line = format!(
            "2025-01-01T00:00:{:02} INFO request {n} GET /api/items/{} done in {} ms\r\n",
            n % 60,
            n * 7 % 1000,
            n % 97
        );
        out.extend_from_slice(line.as_bytes());
    }
    out.truncate(bytes);
    out
}

pub(crate) fn run(rng: &mut Rng) {
    let mixed = generate(rng, PRINTED_BYTES);
    run_case("mixed SGR output (the parse input above)", &mixed, &generate(rng, MORE_BYTES));
    drop(mixed);
    run_case("plain log lines", &plain_log(PRINTED_BYTES), &plain_log(MORE_BYTES));
}

fn run_case(what: &str, input: &[u8], more: &[u8]) {
    println!(
        "compression: {COLS}x{ROWS}, {SCROLLBACK_LINES} lines of history, {} MiB of {what} printed",
        PRINTED_BYTES >> 20
    );
    let base = rss();
    let mut quiet = fed(input);
    let with_one = rss();
    let twin = fed(input);
    let with_two = rss();
    let rows = twin.read_row_range(0, twin.total_rows(), usize::MAX).expect("rows");
    let history_text: usize = rows.iter().map(|row| row.len() + 1).sum();
    let history_vt = twin.raw_vt().expect("raw VT").len();
    println!(
        "  history: {} rows; as text (read_rows) {:.2} MiB, as VT (raw_vt) {:.2} MiB",
        twin.scrollback_rows(),
        mib(history_text),
        mib(history_vt)
    );
    println!(
        "  RSS: process before {:.1} MiB; + first terminal {:.2} MiB; + its twin {:.2} MiB",
        mib(base),
        delta(with_one, base),
        delta(with_two, with_one)
    );

    let (zeroed, discards) = (opencode_pty_vt::zeroed_in_place(), opencode_pty_vt::kernel_discards());
    let activity = quiet.compression_activity();
    let steps = compress(&mut quiet);
    let compressed = rss();
    let total: Duration = steps.iter().sum();
    let (step_min, step_med) = stats(steps.clone());
    let step_max = steps.iter().max().copied().unwrap_or_default();
    println!(
        "  incremental pass: {} steps (the last answers complete), {:.2} ms in all; per step min {:.0} µs, median \
         {:.0} µs, max {:.0} µs",
        steps.len(),
        ms(total),
        us(step_min),
        us(step_med),
        us(step_max)
    );
    let one = delta(with_one, base);
    let after = one + delta(compressed, with_two);
    println!(
        "  RSS after compressing the first: {:+.2} MiB; the terminal now holds about {after:.2} MiB ({:.0}% of \
         {one:.2})",
        delta(compressed, with_two),
        100.0 * after / one
    );
    println!(
        "  during the pass: {} discards zeroed in place, {} sent to the kernel from inside libghostty; activity \
         token {}",
        opencode_pty_vt::zeroed_in_place() - zeroed,
        opencode_pty_vt::kernel_discards() - discards,
        if quiet.compression_activity() == activity { "unchanged" } else { "changed" }
    );
    let again = compress(&mut quiet);
    println!("  a second pass with nothing to do: {} steps, {:.0} µs", again.len(), us(again.iter().sum()));

    // Reads restore what they touch: how much comes back, and whether the token says so.
    let before_reads = rss();
    black_box(quiet.read_rows(50, 1 << 20).expect("rows"));
    let after_rows = rss();
    black_box(quiet.plain_text().expect("text"));
    let after_text = rss();
    let token = if quiet.compression_activity() == activity { "unchanged" } else { "changed" };
    let recompress = compress(&mut quiet);
    let after_recompress = rss();
    println!(
        "  RSS after read_rows(50): {:+.2} MiB; after plain_text: {:+.2} MiB more (token {token}); a pass then \
         ({} steps, {:.2} ms): {:+.2} MiB",
        delta(after_rows, before_reads),
        delta(after_text, after_rows),
        recompress.len(),
        ms(recompress.iter().sum()),
        delta(after_recompress, after_text)
    );

    println!("  reads, compressed (compressed again before each run) against the twin, {READ_RUNS} runs each:");
    println!(
        "  {:<20} {:>22} {:>22} {:>12} {:>14}",
        "", "compressed min / med", "twin min / med", "x twin (med)", "restored MiB"
    );
    let row = |name: &str, ((c_min, c_med), (t_min, t_med), restored): ReadCost| {
        println!(
            "  {name:<20} {:>22} {:>22} {:>12.2} {restored:>+14.2}",
            format!("{:.0} / {:.0} µs", us(c_min), us(c_med)),
            format!("{:.0} / {:.0} µs", us(t_min), us(t_med)),
            c_med.as_secs_f64() / t_med.as_secs_f64()
        );
    };
    row("read_rows(50)", read_cost(&mut quiet, &twin, |t| t.read_rows(50, 1 << 20).expect("rows")));
    row("plain_text (screen)", read_cost(&mut quiet, &twin, |t| t.plain_text().expect("text")));
    row("vt_checkpoint", read_cost(&mut quiet, &twin, |t| t.vt_checkpoint().expect("checkpoint")));
    row("snapshot", read_cost(&mut quiet, &twin, |t| t.snapshot().expect("snapshot")));

    // Output resumes: the compressed terminal's oldest pages are recycled as it scrolls.
    let mut twin = twin;
    compress(&mut quiet);
    let write = |terminal: &mut Terminal| {
        let start = Instant::now();
        for chunk in more.chunks(WRITE_BYTES) {
            terminal.write(chunk);
        }
        start.elapsed()
    };
    let before_more = rss();
    let on_compressed = write(&mut quiet);
    let on_twin = write(&mut twin);
    println!(
        "  {} MiB more output: compressed {:.1} ms, twin {:.1} ms ({:.2}x); RSS {:+.2} MiB",
        MORE_BYTES >> 20,
        ms(on_compressed),
        ms(on_twin),
        on_compressed.as_secs_f64() / on_twin.as_secs_f64(),
        delta(rss(), before_more)
    );
    let before_full = rss();
    let start = Instant::now();
    let full = twin.compress(CompressionMode::Full).expect("compress");
    let took = start.elapsed();
    println!("  one full pass on the twin: {full:?} in {:.2} ms, RSS {:+.2} MiB", ms(took), delta(rss(), before_full));
    black_box((quiet, twin));
}

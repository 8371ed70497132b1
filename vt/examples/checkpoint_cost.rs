//! Times `vt_checkpoint` and a resize down and back (each followed by a checkpoint, as the daemon does) for the
//! worst screens the limits allow, against 80x24 in the same run, without a daemon:
//! `cargo run --release -p opencode-pty-vt --example checkpoint_cost` (optionally `-- NAME` to run one case).

use std::time::{Duration, Instant};

use opencode_pty_testkit::screens::{self, EVERY_ATTRIBUTE, StyledCells};
use opencode_pty_vt::Terminal;

/// Runs of each operation; the median is reported.
const RUNS: usize = 5;

/// Scrollback lines kept, as the daemon does.
const SCROLLBACK: usize = 10_000;

/// `lines` lines exactly `cols` wide, a new 256-colour pen every 8 characters, each ending in a reset and CRLF.
fn coloured_lines(cols: usize, lines: usize) -> Vec<u8> {
    screens::coloured_lines(cols, lines, b"\x1b[0m\r\n")
}

/// Every cell in its own style with two combining marks; every third cell a wide character instead.
fn adversarial_screen(cols: usize, rows: usize) -> Vec<u8> {
    StyledCells { attributes: EVERY_ATTRIBUTE, wide: true, between_rows: b"\r\n" }.screen(cols, rows)
}

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

/// FNV-1a of the checkpoint, to compare its bytes across builds.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// Median milliseconds of a checkpoint, a resize to half plus checkpoint, and a resize back plus checkpoint;
/// and the checkpoint's size and hash.
fn measure(cols: u16, rows: u16, input: &[u8]) -> (f64, f64, f64, usize, u64) {
    let mut t = Terminal::new(cols, rows, SCROLLBACK).expect("terminal");
    t.write(input);
    let (mut snaps, mut downs, mut backs, mut checkpoint) = (vec![], vec![], vec![], vec![]);
    for _ in 0..RUNS {
        let started = Instant::now();
        checkpoint = t.vt_checkpoint().expect("checkpoint");
        snaps.push(started.elapsed());
        let started = Instant::now();
        t.resize(cols.div_ceil(2), rows.div_ceil(2)).expect("resize");
        t.vt_checkpoint().expect("checkpoint");
        downs.push(started.elapsed());
        let started = Instant::now();
        t.resize(cols, rows).expect("resize");
        t.vt_checkpoint().expect("checkpoint");
        backs.push(started.elapsed());
    }
    (median(snaps), median(downs), median(backs), checkpoint.len(), fnv(&checkpoint))
}

fn main() {
    let only = std::env::args().nth(1);
    type Case = (&'static str, fn(usize, usize) -> Vec<u8>);
    let cases: [Case; 2] = [
        ("every cell styled", |cols, rows| adversarial_screen(cols, rows)),
        ("full coloured history", |cols, rows| coloured_lines(cols, SCROLLBACK + rows)),
    ];
    for (name, make) in cases {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let base = measure(80, 24, &make(80, 24));
        println!(
            "{name}: 80x24 checkpoint {:.2} ms, down {:.2} ms, back {:.2} ms, {} bytes (hash {:016x})",
            base.0, base.1, base.2, base.3, base.4
        );
        for (cols, rows) in [(1000u16, 500u16), (500, 1000)] {
            let big = measure(cols, rows, &make(usize::from(cols), usize::from(rows)));
            println!(
                "  {cols}x{rows}: checkpoint {:.1} ms ({:.0}x), down {:.1} ms ({:.0}x), back {:.1} ms ({:.0}x), {} bytes (hash {:016x})",
                big.0,
                big.0 / base.0,
                big.1,
                big.1 / base.1,
                big.2,
                big.2 / base.2,
                big.3,
                big.4
            );
        }
    }
}

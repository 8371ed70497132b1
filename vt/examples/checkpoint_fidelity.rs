//! Measures VT checkpoint fidelity: `cargo run --release -p opencode-pty-vt --example checkpoint_fidelity -- N`
//! (or `just checkpoint-fidelity N`) checkpoints N seeded adversarial screens per class, replays each into a
//! fresh terminal and prints the share that match, exactly and up to blank-versus-space cells. A case that
//! ends on the alternate screen matches only if, after both leave it (`?1049l`), the primary screens match
//! too; the last column counts those cases, and how many of them match in full.

#[path = "../tests/support/screens.rs"]
mod screens;

use opencode_pty_vt::{Blanks, Terminal};
use screens::{Class, generate};

/// History kept by both terminals; larger than anything a case can scroll.
const SCROLLBACK: usize = 10_000;

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let verbose = std::env::args().any(|a| a == "-v");
    println!("{:<42} {:>9} {:>9} {:>14}", "class", "visible", "exact", "alt: left ok");
    for class in Class::ALL {
        let (mut visible, mut exact, mut on_alternate, mut left) = (0u64, 0u64, 0u64, 0u64);
        for seed in 0..n {
            let case = generate(class, seed);
            let mut source = Terminal::new(case.cols, case.rows, SCROLLBACK).expect("terminal");
            source.write(&case.input);
            let checkpoint = source.vt_checkpoint().expect("checkpoint");
            let mut replay = Terminal::new(case.cols, case.rows, SCROLLBACK).expect("terminal");
            replay.write(&checkpoint);
            let mut seen = source.state_diff(&replay, Blanks::Visible).expect("diff");
            let mut exactly = source.state_diff(&replay, Blanks::Exact).expect("diff").is_none();
            if source.active_screen() == opencode_pty_vt::Screen::Alternate {
                on_alternate += 1;
                source.write(b"\x1b[?1049l");
                replay.write(b"\x1b[?1049l");
                let after = source.state_diff(&replay, Blanks::Visible).expect("diff");
                left += u64::from(seen.is_none() && after.is_none());
                seen = seen.or(after.map(|diff| format!("after leaving the alternate screen: {diff}")));
                exactly = exactly && source.state_diff(&replay, Blanks::Exact).expect("diff").is_none();
            }
            match seen {
                None => visible += 1,
                Some(diff) if verbose => println!("  {} seed {seed}: {diff}", class.name()),
                Some(_) => {}
            }
            exact += u64::from(exactly);
        }
        let pct = |k: u64| 100.0 * k as f64 / n as f64;
        let alt = format!("{left}/{on_alternate}");
        println!("{:<42} {:>8.1}% {:>8.1}% {alt:>14}", class.name(), pct(visible), pct(exact));
    }
}

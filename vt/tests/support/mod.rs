//! Helpers shared by the vt integration tests (each test binary uses only part of them).
#![allow(dead_code)]

pub(crate) mod screens;

use opencode_pty_vt::Terminal;

/// History both terminals of [`round_trip`] keep: larger than anything a test scrolls.
pub(crate) const SCROLLBACK: usize = 10_000;

/// Feeds `input` to a `cols` x `rows` terminal, checkpoints it and replays the checkpoint into a fresh one of
/// the same size: the source and the replay.
pub(crate) fn round_trip(cols: u16, rows: u16, input: &[u8]) -> (Terminal, Terminal) {
    let mut source = Terminal::new(cols, rows, SCROLLBACK).expect("terminal");
    source.write(input);
    let checkpoint = source.vt_checkpoint().expect("checkpoint");
    let mut replay = Terminal::new(cols, rows, SCROLLBACK).expect("terminal");
    replay.write(&checkpoint);
    (source, replay)
}

/// Lines of colourful words (16, 256 and RGB colours, bold and underline, wide characters), `count` of them: the
/// same lines as the daemon's compression tests print (`server/src/terminal/compaction_tests.rs`).
pub(crate) fn colourful_words(count: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    let mut next = move |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    let mut out = Vec::new();
    for line in 0..count {
        out.extend_from_slice(format!("{line:05} ").as_bytes());
        for _ in 0..(4 + next(6)) {
            let pen = match next(5) {
                0 => format!("\x1b[3{}m", next(8)),
                1 => format!("\x1b[38;5;{}m", next(256)),
                2 => format!("\x1b[38;2;{};{};{}m", next(256), next(256), next(256)),
                3 => "\x1b[1;4m".to_owned(),
                _ => "界".to_owned(),
            };
            let word: String = (0..(2 + next(8))).map(|_| char::from(b'a' + next(26) as u8)).collect();
            out.extend_from_slice(format!("{pen}{word}\x1b[0m ").as_bytes());
        }
        out.extend_from_slice(b"\n");
    }
    out
}

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

//! Colours a program set survive a checkpoint: palette entries (OSC 4, also after a partial reset with
//! OSC 104) and the foreground, background and cursor colours (OSC 10, 11, 12, also after OSC 110).

mod support;

use opencode_pty_vt::{Blanks, Terminal};
use support::round_trip;

#[test]
fn palette_entries_and_dynamic_colours_are_set_again() {
    let cases: [&[u8]; 5] = [
        b"\x1b]4;1;rgb:12/34/56\x1b\\\x1b]4;200;#abcdef\x07\x1b[31mred\x1b[0m",
        b"\x1b]4;1;rgb:12/34/56;2;rgb:65/43/21\x1b\\\x1b]104;1\x1b\\",
        b"\x1b]10;rgb:ff/ee/dd\x1b\\\x1b]11;rgb:01/02/03\x1b\\\x1b]12;rgb:aa/bb/cc\x1b\\",
        b"\x1b]10;rgb:ff/ee/dd\x1b\\\x1b]110\x1b\\\x1b]11;rgb:01/02/03\x1b\\",
        b"plain text, no colour changed",
    ];
    for input in cases {
        let (source, replay) = round_trip(30, 6, input);
        let name = String::from_utf8_lossy(input);
        assert_eq!(source.palette().unwrap(), replay.palette().unwrap(), "{name}: palette");
        assert_eq!(source.dynamic_colors().unwrap(), replay.dynamic_colors().unwrap(), "{name}: dynamic colours");
        assert_eq!(source.state_diff(&replay, Blanks::Exact).unwrap(), None, "{name}");
    }
    // The source really changed something (so the comparison above could fail).
    let (changed, _) = round_trip(30, 6, cases[0]);
    assert_ne!(changed.palette().unwrap()[1], Terminal::new(2, 2, 0).unwrap().palette().unwrap()[1]);
    let (dynamic, _) = round_trip(30, 6, cases[2]);
    assert_eq!(dynamic.dynamic_colors().unwrap()[1], Some([1, 2, 3]));
}

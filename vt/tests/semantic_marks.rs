//! Shell integration's marks (OSC 133 with extra fields, SPEC §10) change nothing a client can see: a terminal
//! fed a prompt cycle with the marks holds the same screen, cursor and modes as one fed the same bytes without
//! them (so a renderer that ignores OSC 133, such as xterm.js, shows what the daemon's checkpoint does), and the
//! checkpoint of the first rebuilds it.

mod support;

use opencode_pty_vt::{Blanks, Terminal};
use support::round_trip;

const NONCE: &str = "0123456789abcdef0123456789abcdef";

/// A prompt cycle as the script writes it, with or without the marks: a partial line left by the last command,
/// the prompt, a command's output, its end.
fn cycle(marks: bool) -> String {
    let mark = |kind: &str, n: u32, extra: &str| {
        if marks { format!("\x1b]133;{kind};opty={NONCE}.{n}{extra}\x07") } else { String::new() }
    };
    let mut text = String::from("partial");
    for round in 0..3 {
        text += &mark("D;0", 4 * round + 1, "");
        text += &mark("P", 4 * round + 2, ";cwd=/home/me");
        text += "\x1b]7;file://host/home/me\x07$ ";
        text += &mark("B", 4 * round + 3, "");
        text += "ls -l\r\n";
        text += &mark("C", 4 * round + 4, ";cmdline_url=ls%20-l");
        text += "total 0\r\nfile\r\nno newline";
    }
    text
}

#[test]
fn marks_leave_the_screen_as_the_same_bytes_without_them() {
    let mut with = Terminal::new(40, 6, 100).expect("terminal");
    let mut without = Terminal::new(40, 6, 100).expect("terminal");
    with.write(cycle(true).as_bytes());
    without.write(cycle(false).as_bytes());
    assert_eq!(with.state_diff(&without, Blanks::Exact).expect("diff"), None);
    assert_eq!((with.cursor().x, with.cursor().y), (without.cursor().x, without.cursor().y));
    let (source, replay) = round_trip(40, 6, cycle(true).as_bytes());
    assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None);
}

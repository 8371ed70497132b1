//! The primary screen and its history survive a checkpoint taken while the alternate screen is active:
//! after the replay, leaving the alternate screen shows in the replay what it shows in the source (text,
//! styles, wraps, history, and the cursor `?1049` saved on entry), for each way of entering it.

use opencode_pty_vt::{Blanks, Screen, Terminal};

fn terminal() -> Terminal {
    Terminal::new(40, 10, 1_000).expect("terminal")
}

/// A shell-like primary screen with history, a prompt with a pen and a cursor mid-line.
fn shell() -> Vec<u8> {
    let mut out = Vec::new();
    for n in 0..60 {
        out.extend_from_slice(format!("\x1b[3{}mline {n:02}\x1b[0m {}\r\n", n % 8, "w".repeat(n % 45)).as_bytes());
    }
    out.extend_from_slice(b"\x1b[1m$ \x1b[0mvim notes.txt");
    out
}

fn check(enter: &str, leave: &str) {
    let mut source = terminal();
    source.write(&shell());
    source.write(enter.as_bytes());
    source.write(b"\x1b[2J\x1b[H\x1b[44m~ full-screen program \x1b[0m\r\n~\r\n\x1b[5;3Hcursor here");
    assert_eq!(source.active_screen(), Screen::Alternate);
    let checkpoint = source.vt_checkpoint().expect("checkpoint");
    let mut replay = terminal();
    replay.write(&checkpoint);
    assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{enter:?}: the alternate screen");
    // The program quits: both leave the alternate screen the same way.
    source.write(leave.as_bytes());
    replay.write(leave.as_bytes());
    assert_eq!(replay.active_screen(), Screen::Primary);
    assert_eq!(
        source.state_diff(&replay, Blanks::Exact).expect("diff"),
        None,
        "{enter:?}: the primary screen after leaving"
    );
    assert_eq!(source.plain_text().unwrap(), replay.plain_text().unwrap(), "{enter:?}");
    // And the shell goes on where it was.
    source.write(b"\r\n$ ");
    replay.write(b"\r\n$ ");
    assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{enter:?}: after more output");
}

#[test]
fn leaving_1049_restores_the_primary_screen_history_and_saved_cursor() {
    check("\x1b[?1049h", "\x1b[?1049l");
}

#[test]
fn leaving_1047_and_47_restores_the_primary_screen_and_history() {
    check("\x1b[?1047h", "\x1b[?1047l");
    check("\x1b[?47h", "\x1b[?47l");
}

#[test]
fn without_room_for_the_primary_screen_the_alternate_one_still_comes_whole() {
    let mut source = terminal();
    source.write(&shell());
    source.write(b"\x1b[?1049h\x1b[2J\x1b[Hfull screen");
    let alone = {
        let mut scratch = terminal();
        scratch.write(b"\x1b[?1049h\x1b[2J\x1b[Hfull screen");
        scratch.vt_checkpoint().unwrap().len()
    };
    // Room for the alternate screen's part only: the primary one is left out, the rest is as before.
    let checkpoint = source.vt_checkpoint_within(alone + 40).expect("checkpoint");
    let mut replay = terminal();
    replay.write(&checkpoint);
    assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None);
}

#[test]
fn the_cursor_a_full_screen_program_saved_is_restored_after_a_reattach() {
    for enter in ["\x1b[?1049h", "\x1b[?47h"] {
        let mut source = terminal();
        source.write(&shell());
        source.write(enter.as_bytes());
        // The program saves the cursor at row 4, column 7 with a pen and a charset, then draws elsewhere.
        source.write(b"\x1b[2J\x1b[4;7H\x1b[1;35m\x1b(0\x1b7\x1b[0m\x1b(B\x1b[9;1Hstatus line");
        let checkpoint = source.vt_checkpoint().expect("checkpoint");
        let mut replay = terminal();
        replay.write(&checkpoint);
        assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{enter:?}");
        // It restores the cursor and prints: same place, same pen, same charset (`q` is a line in DEC graphics).
        for t in [&mut source, &mut replay] {
            t.write(b"\x1b8q!");
        }
        assert_eq!(source.cursor(), replay.cursor(), "{enter:?}");
        assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{enter:?}: after DECRC");
    }
}

#[test]
fn a_checkpoint_taken_mid_sequence_on_the_alternate_screen_still_restores_that_screen() {
    // Found by fuzzing: libghostty will not copy a terminal whose parser holds an incomplete sequence, which
    // is what output cut between two reads leaves. The checkpoint must not fail for it.
    for pending in ["\x1b", "\x1b[", "\x1b[38;5", "\x1b]0;title"] {
        let mut source = terminal();
        source.write(&shell());
        source.write(b"\x1b[?1049h\x1b[2J\x1b[H\x1b[44m~ full-screen program \x1b[0m\r\n~\r\n\x1b[5;3Hcursor here");
        source.write(pending.as_bytes());
        let checkpoint = source.vt_checkpoint().unwrap_or_else(|e| panic!("{pending:?}: {e:?}"));
        let mut replay = terminal();
        replay.write(&checkpoint);
        assert_eq!(replay.active_screen(), Screen::Alternate, "{pending:?}");
        assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{pending:?}: the alternate screen");
    }
}

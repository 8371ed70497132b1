//! What decides how input is reported survives a checkpoint, in every order and combination: the mouse
//! tracking mode in effect (of `?9`, `?1000`, `?1002`, `?1003`, the last one set, or none after a reset), the
//! mouse report format in effect (of `?1005`, `?1006`, `?1015`, `?1016` likewise, X10 after a reset), and the
//! cursor's shape and blink, carried as DECSCUSR (`CSI n SP q`) so that renderers that take the blink from it
//! alone (xterm.js, ghostty-web) draw what the source shows.

mod support;

use opencode_pty_vt::{Blanks, CursorShape, CursorStyle, ModeKind, MouseFormat, MouseTracking, Screen};
use support::round_trip;

/// Every ordered pair of `modes` set, then optionally a third, then optionally a reset of the first or the
/// second: the input and the mode expected in effect (`off` after a reset).
fn sequences<T: Copy>(modes: &[(u16, T)], off: T) -> Vec<(String, T)> {
    let mut out = Vec::new();
    for a in modes {
        for b in modes {
            for c in [None, Some(modes[0]), Some(modes[modes.len() - 1])] {
                for reset in [None, Some(a.0), Some(b.0)] {
                    let mut input = format!("\x1b[?{}h\x1b[?{}h", a.0, b.0);
                    let mut expected = b.1;
                    if let Some(c) = c {
                        input.push_str(&format!("\x1b[?{}h", c.0));
                        expected = c.1;
                    }
                    if let Some(reset) = reset {
                        input.push_str(&format!("\x1b[?{reset}l"));
                        expected = off;
                    }
                    out.push((input, expected));
                }
            }
        }
    }
    out
}

#[test]
fn the_mouse_tracking_mode_in_effect_is_the_one_restored() {
    let modes = [
        (9, MouseTracking::X10),
        (1000, MouseTracking::Normal),
        (1002, MouseTracking::Button),
        (1003, MouseTracking::Any),
    ];
    let cases = sequences(&modes, MouseTracking::None);
    assert_eq!(cases.len(), 4 * 4 * 3 * 3);
    for (input, expected) in cases {
        let (source, replay) = round_trip(40, 10, input.as_bytes());
        assert_eq!(source.mouse_tracking().unwrap(), expected, "{input:?}: the source (the last one set wins)");
        assert_eq!(replay.mouse_tracking().unwrap(), expected, "{input:?}: the replay");
        assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{input:?}");
    }
}

#[test]
fn the_mouse_format_in_effect_is_the_one_restored_with_tracking_on_or_off() {
    let modes = [
        (1005, MouseFormat::Utf8),
        (1006, MouseFormat::Sgr),
        (1015, MouseFormat::Urxvt),
        (1016, MouseFormat::SgrPixels),
    ];
    for tracking in ["", "\x1b[?1002h"] {
        for (input, expected) in sequences(&modes, MouseFormat::X10) {
            let input = format!("{tracking}{input}");
            let (source, replay) = round_trip(40, 10, input.as_bytes());
            assert_eq!(source.mouse_format().unwrap(), expected, "{input:?}: the source (the last one set wins)");
            assert_eq!(replay.mouse_format().unwrap(), expected, "{input:?}: the replay");
            assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{input:?}");
        }
    }
}

/// Every DECSCUSR parameter, the style it sets, and the cases made of it: alone, with the blink changed
/// afterwards by `?12`, and on the alternate screen entered after it and set again there.
fn cursor_cases() -> Vec<String> {
    let mut out = Vec::new();
    for n in 0..=6 {
        for blink in ["", "\x1b[?12h", "\x1b[?12l"] {
            out.push(format!("\x1b[{n} q{blink}"));
            out.push(format!("\x1b[{n} q{blink}\x1b[?1049h"));
            out.push(format!("\x1b[5 q\x1b[?1049h\x1b[{n} q{blink}"));
        }
    }
    out
}

/// What a renderer that follows DECSCUSR and ignores `?12` shows after `bytes`: the style of the last
/// `CSI n SP q` (0 and no parameter: its default, here a steady block), or the default without one.
fn decscusr_style(bytes: &[u8]) -> CursorStyle {
    let mut style = CursorStyle::DEFAULT;
    for (at, window) in bytes.windows(2).enumerate() {
        if window != b"\x1b[" {
            continue;
        }
        let rest = &bytes[at + 2..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if rest[digits..].starts_with(b" q") {
            let n: u8 = std::str::from_utf8(&rest[..digits]).unwrap().parse().unwrap_or(0);
            let shape = match n {
                3 | 4 => CursorShape::Underline,
                5 | 6 => CursorShape::Bar,
                _ => CursorShape::Block,
            };
            style = CursorStyle { shape, blinking: n % 2 == 1 };
        }
    }
    style
}

#[test]
fn the_cursor_shape_and_its_blink_are_restored() {
    let shapes = [
        (0, CursorShape::Block),
        (1, CursorShape::Block),
        (2, CursorShape::Block),
        (3, CursorShape::Underline),
        (4, CursorShape::Underline),
        (5, CursorShape::Bar),
        (6, CursorShape::Bar),
    ];
    for (n, shape) in shapes {
        // DECSCUSR alone, then with the blink changed afterwards by `?12`.
        for blink in ["", "\x1b[?12h", "\x1b[?12l"] {
            let input = format!("\x1b[{n} q{blink}");
            let (source, replay) = round_trip(40, 10, input.as_bytes());
            assert_eq!(source.cursor_shape().unwrap(), shape, "{input:?}: the source");
            assert_eq!(replay.cursor_shape().unwrap(), shape, "{input:?}: the replay's shape");
            assert_eq!(
                replay.mode(12, ModeKind::Dec).unwrap(),
                source.mode(12, ModeKind::Dec).unwrap(),
                "{input:?}: blink"
            );
            assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{input:?}");
        }
    }
}

#[test]
fn the_cursor_style_and_blink_are_carried_as_decscusr() {
    let (mut seen_blinking_block, mut seen_default) = (false, false);
    for input in cursor_cases() {
        let (source, replay) = round_trip(40, 10, input.as_bytes());
        let style = source.cursor_style().unwrap();
        assert_eq!(style.blinking, source.mode(12, ModeKind::Dec).unwrap(), "{input:?}: the blink is mode ?12");
        let checkpoint = source.vt_checkpoint().unwrap();
        let decscusr = format!("\x1b[{} q", style.decscusr());
        let carried = checkpoint.windows(decscusr.len()).any(|w| w == decscusr.as_bytes());
        if style == CursorStyle::DEFAULT {
            seen_default = true;
            // On the alternate screen the primary screen's part before it may have set another style.
            let reset = checkpoint.windows(5).any(|w| w == b"\x1b[0 q");
            assert_eq!(reset, source.active_screen() == Screen::Alternate, "{input:?}: the default set again");
        } else {
            assert!(carried, "{input:?}: {style:?} is carried as {decscusr:?}");
        }
        seen_blinking_block |= style == CursorStyle { shape: CursorShape::Block, blinking: true };
        assert_eq!(decscusr_style(&checkpoint), style, "{input:?}: a renderer that follows DECSCUSR");
        assert_eq!(replay.cursor_style().unwrap(), style, "{input:?}: the replay");
        assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{input:?}");
    }
    assert!(seen_blinking_block && seen_default, "the cases include a blinking block and the default");
}

#[test]
fn a_blinking_block_is_carried_as_decscusr_not_only_as_mode_12() {
    let blinking_block = CursorStyle { shape: CursorShape::Block, blinking: true };
    for input in ["\x1b[1 q", "\x1b[?12h", "\x1b[2 q\x1b[?12h", "\x1b[6 q\x1b[1 q"] {
        let (source, replay) = round_trip(40, 10, input.as_bytes());
        assert_eq!(source.cursor_style().unwrap(), blinking_block, "{input:?}: the source");
        let checkpoint = source.vt_checkpoint().unwrap();
        assert!(checkpoint.windows(5).any(|w| w == b"\x1b[1 q"), "{input:?}: CSI 1 SP q in the checkpoint");
        assert_eq!(decscusr_style(&checkpoint), blinking_block, "{input:?}: a renderer that follows DECSCUSR");
        assert_eq!(replay.cursor_style().unwrap(), blinking_block, "{input:?}: the replay");
    }
}

#[test]
fn decscusr_parameters_name_each_style() {
    for n in 1..=6u8 {
        let (source, _) = round_trip(20, 4, format!("\x1b[{n} q").as_bytes());
        assert_eq!(source.cursor_style().unwrap().decscusr(), n, "CSI {n} SP q");
    }
    assert_eq!(CursorStyle::DEFAULT.decscusr(), 2, "a fresh terminal's cursor is a steady block");
}

#[test]
fn the_kitty_keyboard_flags_in_effect_are_restored() {
    let cases: [(&[u8], u8); 7] = [
        (b"", 0),
        (b"\x1b[>1u", 1),
        (b"\x1b[>1u\x1b[>31u", 31),
        (b"\x1b[>1u\x1b[>3u\x1b[<u", 1),
        (b"\x1b[=5;1u", 5),
        (b"\x1b[=5;1u\x1b[=2;2u", 7),
        (b"\x1b[>9u\x1b[=1;3u", 8),
    ];
    for (input, expected) in cases {
        let (source, replay) = round_trip(40, 10, input);
        let name = String::from_utf8_lossy(input);
        assert_eq!(source.kitty_keyboard_flags().unwrap(), expected, "{name}: the source");
        assert_eq!(replay.kitty_keyboard_flags().unwrap(), expected, "{name}: the replay");
        assert_eq!(source.state_diff(&replay, Blanks::Exact).expect("diff"), None, "{name}");
    }
}

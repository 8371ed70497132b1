//! What decides how input is reported survives a checkpoint, in every order and combination: the mouse
//! tracking mode in effect (of `?9`, `?1000`, `?1002`, `?1003`, the last one set, or none after a reset), the
//! mouse report format in effect (of `?1005`, `?1006`, `?1015`, `?1016` likewise, X10 after a reset), and the
//! cursor's shape (DECSCUSR) with its blink (`?12`).

mod support;

use opencode_pty_vt::{CursorShape, MouseFormat, MouseTracking};
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
        assert_eq!(source.state_diff(&replay, true).expect("diff"), None, "{input:?}");
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
            assert_eq!(source.state_diff(&replay, true).expect("diff"), None, "{input:?}");
        }
    }
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
            assert_eq!(replay.mode(12, false).unwrap(), source.mode(12, false).unwrap(), "{input:?}: blink");
            assert_eq!(source.state_diff(&replay, true).expect("diff"), None, "{input:?}");
        }
    }
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
        assert_eq!(source.state_diff(&replay, true).expect("diff"), None, "{name}");
    }
}

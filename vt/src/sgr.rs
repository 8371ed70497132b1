//! SGR sequences that set an exact style from any pen, written by hand: every styled cell of a checkpoint's
//! exact part can need one, and the formatting machinery made them most of an emission's cost.

use std::io::Write;

use crate::inspect::{Color, Style};

/// Switches the pen to `style` (with a full reset when it changes).
pub(crate) fn set_pen(out: &mut Vec<u8>, pen: &mut Style, style: Style) {
    if *pen == style {
        return;
    }
    push_sgr(out, &style);
    *pen = style;
}

/// An SGR sequence that sets exactly `style` from any pen.
pub(crate) fn sgr(style: &Style) -> Vec<u8> {
    let mut out = Vec::new();
    push_sgr(&mut out, style);
    out
}

/// Appends [`sgr`] of `style` to `out`. Every styled cell of a screen can need one, so the numbers are written
/// by hand rather than through the formatting machinery (which made this most of an emission's cost).
fn push_sgr(out: &mut Vec<u8>, style: &Style) {
    out.extend_from_slice(b"\x1b[0");
    let flags = [
        (style.bold, &b";1"[..]),
        (style.faint, b";2"),
        (style.italic, b";3"),
        (style.blink, b";5"),
        (style.inverse, b";7"),
        (style.invisible, b";8"),
        (style.strikethrough, b";9"),
        (style.overline, b";53"),
    ];
    for (on, code) in flags {
        if on {
            out.extend_from_slice(code);
        }
    }
    for (color, base) in [(style.fg, b";38"), (style.bg, b";48"), (style.underline_color, b";58")] {
        match color {
            Color::Default => {}
            Color::Palette(i) => {
                out.extend_from_slice(base);
                out.extend_from_slice(b";5");
                push_u8(out, i);
            }
            Color::Rgb(r, g, b) => {
                out.extend_from_slice(base);
                out.extend_from_slice(b";2");
                for c in [r, g, b] {
                    push_u8(out, c);
                }
            }
        }
    }
    out.push(b'm');
    if style.underline != 0 {
        let _ = write!(out, "\x1b[4:{}m", style.underline);
    }
}

/// Appends `;` and `value` in decimal.
fn push_u8(out: &mut Vec<u8>, value: u8) {
    out.push(b';');
    if value >= 100 {
        out.push(b'0' + value / 100);
    }
    if value >= 10 {
        out.push(b'0' + value / 10 % 10);
    }
    out.push(b'0' + value % 10);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SGR as the formatting machinery writes it: what `push_sgr` must reproduce byte for byte.
    fn formatted_sgr(style: &Style) -> Vec<u8> {
        let mut out = b"\x1b[0".to_vec();
        let flags = [
            (style.bold, "1"),
            (style.faint, "2"),
            (style.italic, "3"),
            (style.blink, "5"),
            (style.inverse, "7"),
            (style.invisible, "8"),
            (style.strikethrough, "9"),
            (style.overline, "53"),
        ];
        for (on, code) in flags {
            if on {
                write!(out, ";{code}").expect("write");
            }
        }
        for (color, base) in [(style.fg, 38), (style.bg, 48), (style.underline_color, 58)] {
            match color {
                Color::Default => {}
                Color::Palette(i) => write!(out, ";{base};5;{i}").expect("write"),
                Color::Rgb(r, g, b) => write!(out, ";{base};2;{r};{g};{b}").expect("write"),
            }
        }
        out.push(b'm');
        if style.underline != 0 {
            write!(out, "\x1b[4:{}m", style.underline).expect("write");
        }
        out
    }

    #[test]
    fn sgr_writes_every_style_as_the_formatter_would() {
        let values = [0u8, 1, 9, 10, 42, 99, 100, 101, 199, 200, 255];
        let mut checked = 0;
        for (i, &v) in values.iter().enumerate() {
            let w = values[(i * 7 + 3) % values.len()];
            let colors = [Color::Default, Color::Palette(v), Color::Rgb(v, w, 255 - v)];
            for (k, flags) in (0u16..512).step_by(37).enumerate() {
                let style = Style {
                    fg: colors[k % 3],
                    bg: colors[(k + 1) % 3],
                    underline_color: colors[(k + 2) % 3],
                    bold: flags & 1 != 0,
                    faint: flags & 2 != 0,
                    italic: flags & 4 != 0,
                    blink: flags & 8 != 0,
                    inverse: flags & 16 != 0,
                    invisible: flags & 32 != 0,
                    strikethrough: flags & 64 != 0,
                    overline: flags & 128 != 0,
                    underline: i32::from(flags >> 8) * 3 + (k % 6) as i32,
                };
                assert_eq!(sgr(&style), formatted_sgr(&style), "{style:?}");
                checked += 1;
            }
        }
        assert_eq!(sgr(&Style::default()), b"\x1b[0m");
        assert!(checked > 100);
    }
}

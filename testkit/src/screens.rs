//! Generated terminal input for the tests and measurements of checkpoints, limits and compression: lines of coloured text,
//! and screens whose every cell has a style of its own (the worst case for a checkpoint's exact form). The same
//! arguments always give the same bytes.

/// The SGR attributes [`StyledCells`] usually sets in every cell: reset, bold, faint, italic, blink, inverse,
/// strikethrough and overline.
pub const EVERY_ATTRIBUTE: &str = "0;1;2;3;5;7;9;53";

/// `lines` lines of exactly `cols` letters with a new 256-colour pen every 8 characters, each followed by `end`
/// (such as `\n` for a PTY, which adds the carriage return, or `\x1b[0m\r\n` for a terminal fed directly).
pub fn coloured_lines(cols: usize, lines: usize, end: &[u8]) -> Vec<u8> {
    let mut text = Vec::new();
    for line in 0..lines {
        for col in 0..cols {
            if col % 8 == 0 {
                text.extend_from_slice(format!("\x1b[38;5;{}m", (line + col) % 256).as_bytes());
            }
            let letter = u8::try_from((line + col) % 26).unwrap_or(0);
            text.push(b'a' + letter);
        }
        text.extend_from_slice(end);
    }
    text
}

/// A screen whose every cell has a style of its own: the given attributes, a curly underline and three
/// truecolour colours (foreground, background, underline) that follow the cell's position, on `e` with two
/// combining marks, or, when `wide`, on a wide character with one combining mark in every third cell.
#[derive(Debug, Clone, Copy)]
pub struct StyledCells<'a> {
    /// The SGR attributes set before the colours, such as [`EVERY_ATTRIBUTE`].
    pub attributes: &'a str,
    /// Whether every third cell (when two columns are left) is a wide character.
    pub wide: bool,
    /// What goes between two rows (nothing after the last).
    pub between_rows: &'a [u8],
}

impl StyledCells<'_> {
    /// `rows` rows of `cols` columns.
    pub fn screen(&self, cols: usize, rows: usize) -> Vec<u8> {
        let mut text = Vec::new();
        for y in 0..rows {
            let mut x = 0;
            while x < cols {
                let (r, g, b) = ((x * 7 + y) % 256, (x * 13 + y * 3) % 256, (x + y * 11) % 256);
                let style =
                    format!("\x1b[{};38;2;{r};{g};{b};48;2;{g};{b};{r};58;2;{b};{r};{g}m\x1b[4:3m", self.attributes);
                text.extend_from_slice(style.as_bytes());
                if self.wide && x % 3 == 2 && x + 1 < cols {
                    text.extend_from_slice("\u{6f22}\u{0301}".as_bytes());
                    x += 2;
                } else {
                    text.extend_from_slice("e\u{0301}\u{0302}".as_bytes());
                    x += 1;
                }
            }
            if y + 1 < rows {
                text.extend_from_slice(self.between_rows);
            }
        }
        text
    }
}

/// `count` lines of dense terminal output: numbered words in 16, 256 and RGB colours, bold and underline, and
/// wide characters, so a history of them spans many pages of varied cells (the compression tests of `vt` and
/// of the daemon feed both the same lines). `seed` picks the words.
pub fn colourful_words(count: usize, seed: u64) -> Vec<u8> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coloured_lines_are_as_wide_as_asked_with_a_pen_every_eight_letters() {
        let text = coloured_lines(10, 2, b"|");
        assert_eq!(text, b"\x1b[38;5;0mabcdefgh\x1b[38;5;8mij|\x1b[38;5;1mbcdefghi\x1b[38;5;9mjk|");
    }

    #[test]
    fn styled_cells_follow_the_position_and_put_wide_characters_where_two_columns_are_left() {
        let cells = StyledCells { attributes: "0;1", wide: true, between_rows: b"/" };
        let text = String::from_utf8(cells.screen(4, 2)).unwrap();
        let rows: Vec<&str> = text.split('/').collect();
        assert_eq!(rows.len(), 2);
        assert!(rows[0].starts_with("\x1b[0;1;38;2;0;0;0;48;2;0;0;0;58;2;0;0;0m\x1b[4:3me\u{301}\u{302}"), "{text:?}");
        // Columns 0 and 1 narrow, 2 and 3 one wide character; on a width of 3 the last column stays narrow.
        assert_eq!(rows[0].matches('\u{6f22}').count(), 1);
        assert_eq!(rows[0].matches('e').count(), 2);
        let narrow = StyledCells { wide: false, ..cells };
        assert_eq!(String::from_utf8(narrow.screen(3, 1)).unwrap().matches('e').count(), 3);
        assert_eq!(String::from_utf8(cells.screen(3, 1)).unwrap().matches('e').count(), 3);
    }
}

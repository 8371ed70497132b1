//! Whether a byte stream is, after its last byte, between two sequences: not inside an escape sequence, a
//! control string (OSC, DCS, APC, PM, SOS) or a UTF-8 character. The capture injects its own `CSI 3 J` only
//! there, so that it never lands inside the output's own sequences. A coarse model of a VT parser's states: it
//! only has to agree on where they end.

/// Where the stream stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// Between sequences.
    #[default]
    Ground,
    /// After ESC (and any intermediates).
    Escape,
    /// In a control sequence (`ESC [`), until its final byte.
    Csi,
    /// In a control string, until BEL or ST.
    String,
    /// ESC inside a control string: ST if `\` follows.
    StringEscape,
    /// Inside a UTF-8 character: this many continuation bytes to come.
    Utf8(u8),
}

/// The stream's state, byte after byte.
#[derive(Debug, Default)]
pub(super) struct Ground {
    state: State,
}

impl Ground {
    /// Whether the bytes so far end between sequences.
    pub(super) fn at_ground(&self) -> bool {
        self.state == State::Ground
    }

    /// Takes more of the stream.
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.byte(byte);
        }
    }

    fn byte(&mut self, byte: u8) {
        const ESC: u8 = 0x1b;
        const BEL: u8 = 0x07;
        // CAN and SUB abort any sequence.
        if matches!(byte, 0x18 | 0x1a) {
            self.state = State::Ground;
            return;
        }
        self.state = match self.state {
            State::Ground => Self::from_ground(byte),
            State::Escape => match byte {
                b'[' => State::Csi,
                b']' | b'P' | b'_' | b'^' | b'X' => State::String,
                // Intermediates, and C0 controls (executed within the sequence), ESC (which starts it again).
                0x00..=0x2f => State::Escape,
                _ => State::Ground,
            },
            State::Csi => match byte {
                ESC => State::Escape,
                0x40..=0x7e => State::Ground,
                _ => State::Csi,
            },
            State::String => match byte {
                BEL => State::Ground,
                ESC => State::StringEscape,
                _ => State::String,
            },
            State::StringEscape => match byte {
                b'\\' => State::Ground,
                // ESC ends the string and starts another sequence with this byte.
                _ => {
                    self.state = State::Escape;
                    return self.byte(byte);
                }
            },
            State::Utf8(left) => match byte {
                0x80..=0xbf if left > 1 => State::Utf8(left - 1),
                0x80..=0xbf => State::Ground,
                // A broken character ends; this byte starts afresh.
                _ => Self::from_ground(byte),
            },
        };
    }

    /// The state a byte leads to from ground.
    fn from_ground(byte: u8) -> State {
        match byte {
            0x1b => State::Escape,
            0xc2..=0xdf => State::Utf8(1),
            0xe0..=0xef => State::Utf8(2),
            0xf0..=0xf4 => State::Utf8(3),
            _ => State::Ground,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends_at_ground(bytes: &[u8]) -> bool {
        let mut ground = Ground::default();
        ground.feed(bytes);
        ground.at_ground()
    }

    #[test]
    fn sequences_strings_and_characters_are_inside_until_they_end() {
        for inside in [
            &b"x\x1b"[..],
            b"\x1b[3",
            b"\x1b[31;",
            b"\x1b]8;;http://exa",
            b"\x1bP1$q",
            b"\x1b]0;t\x1b",
            b"\xc3",
            b"\xe2\x82",
        ] {
            assert!(!ends_at_ground(inside), "{inside:?}");
        }
        for done in [
            &b"plain"[..],
            b"\x1b[31m",
            b"\x1b]0;title\x07",
            b"\x1b]0;t\x1b\\",
            b"\x1b7",
            b"\x1b(B",
            b"\xc3\xa9",
            b"\x1b[3\x18",
            b"\xe2\x82\xac",
        ] {
            assert!(ends_at_ground(done), "{done:?}");
        }
        // ESC inside a string ends it and starts a sequence of its own.
        assert!(!ends_at_ground(b"\x1b]0;t\x1b["));
        assert!(ends_at_ground(b"\x1b]0;t\x1b[m"));
    }
}

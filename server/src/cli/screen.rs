//! Which screen `attach` left the local terminal on: the bytes it draws are scanned for the private modes that
//! switch to the alternate screen and back (1049, 1047, 47), so that leaving a full-screen program can clear
//! the main screen it comes back to instead of leaving the prompt wherever that screen's cursor was.

/// The longest sequence looked for (`ESC [ ? 1049 ; ... h` with a few other modes) that may be cut between two
/// writes: this many bytes of each write's end are kept and looked at again with the next one.
const CARRY_BYTES: usize = 32;

/// Follows the alternate-screen modes in a stream of terminal output.
#[derive(Debug, Default)]
pub(super) struct ScreenTracker {
    /// Whether the last switch seen went to the alternate screen.
    alternate: bool,
    /// The end of the previous write, where a sequence cut in two began.
    carry: Vec<u8>,
}

impl ScreenTracker {
    /// Whether the output so far left the terminal on the alternate screen.
    pub(super) fn alternate(&self) -> bool {
        self.alternate
    }

    /// Takes the next bytes written to the terminal.
    pub(super) fn write(&mut self, bytes: &[u8]) {
        let mut text = std::mem::take(&mut self.carry);
        text.extend_from_slice(bytes);
        let mut at = 0;
        // The last complete `ESC [ ? Pm h|l` decides; an unfinished one at the end is carried over.
        let mut unfinished = None;
        while let Some(start) = find(&text[at..], b"\x1b[?").map(|i| at + i) {
            let params = start + 3;
            let end = text[params..].iter().position(|b| !(b.is_ascii_digit() || *b == b';')).map(|i| params + i);
            let Some(end) = end else {
                unfinished = Some(start);
                break;
            };
            let set = match text[end] {
                b'h' => Some(true),
                b'l' => Some(false),
                _ => None,
            };
            if let Some(set) = set {
                let switches =
                    text[params..end].split(|b| *b == b';').any(|mode| matches!(mode, b"1049" | b"1047" | b"47"));
                if switches {
                    self.alternate = set;
                }
            }
            at = end;
        }
        let keep_from = unfinished.unwrap_or_else(|| {
            // A lone `ESC` or `ESC [` at the very end may start a sequence.
            let tail = text.len().saturating_sub(2);
            tail + text[tail..].iter().position(|b| *b == 0x1b).unwrap_or(text.len() - tail)
        });
        if text.len() - keep_from <= CARRY_BYTES {
            self.carry = text[keep_from..].to_vec();
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(chunks: &[&[u8]]) -> bool {
        let mut tracker = ScreenTracker::default();
        chunks.iter().for_each(|chunk| tracker.write(chunk));
        tracker.alternate()
    }

    #[test]
    fn the_last_switch_decides() {
        assert!(!after(&[b"plain text"]));
        assert!(after(&[b"a\x1b[?1049hb"]));
        assert!(!after(&[b"\x1b[?1049h top \x1b[?1049l$ "]));
        assert!(after(&[b"\x1b[?47h"]));
        assert!(after(&[b"\x1b[?1;1047;25h"]));
        assert!(!after(&[b"\x1b[?1049h", b"\x1b[?25l\x1b[?1047l"]));
        assert!(!after(&[b"\x1b[?10490h", b"\x1b[?147h"]), "other modes are not switches");
    }

    #[test]
    fn a_sequence_cut_between_writes_counts() {
        for cut in 1..9 {
            let (first, second) = b"x\x1b[?1049hy".split_at(cut);
            assert!(after(&[first, second]), "cut at {cut}");
        }
        assert!(after(&[b"\x1b[?1049h", b"\x1b", b"[", b"?1", b"049", b"l", b"\x1b[?1049", b"h"]));
    }
}

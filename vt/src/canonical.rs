//! The formatter's history made independent of how libghostty lays its pages: the formatter restarts a style
//! run where a page ends (a style is an id in its page, and the next page's id is another), so the same history
//! laid in pages cut at other rows (a terminal decoded from a snapshot packs its pages afresh) comes out with
//! `…text\e[0m\e[38;5;7mmore` where the other has `…textmore`. Both render the same; a checkpoint is compared
//! byte for byte (a quiet terminal's answers against a twin's, an upgrade's), so the pen changes that change
//! nothing are dropped.
//!
//! The rule: a group of SGR sequences with nothing between them that contains a reset leaves the pen its last
//! reset and what follows it set; when that is exactly the pen in effect before the group (as the same bytes,
//! the formatter writing each style the same way), the group changes nothing and is dropped. A group without a
//! reset adds to the pen and is kept; other bytes (text, other sequences) leave the pen as it is.

/// `bytes` without the groups of SGR sequences that set the pen already in effect (see the module).
pub(crate) fn drop_unchanged_pens(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    // The pen in effect: the SGR bytes from its last reset on, once one was seen.
    let mut pen: Option<Vec<u8>> = None;
    let mut at = 0;
    while at < bytes.len() {
        let Some(first) = sgr_len(&bytes[at..]) else {
            out.push(bytes[at]);
            at += 1;
            continue;
        };
        // The group: SGR sequences back to back.
        let start = at;
        let mut ends = vec![(at, at + first)];
        at += first;
        while let Some(len) = sgr_len(&bytes[at..]) {
            ends.push((at, at + len));
            at += len;
        }
        let group = &bytes[start..at];
        match ends.iter().rposition(|&(from, to)| resets(&bytes[from..to])) {
            Some(last_reset) => {
                let after = &bytes[ends[last_reset].0..at];
                if pen.as_deref() != Some(after) {
                    out.extend_from_slice(group);
                    pen = Some(after.to_vec());
                }
            }
            None => {
                out.extend_from_slice(group);
                if let Some(pen) = &mut pen {
                    pen.extend_from_slice(group);
                }
            }
        }
    }
    out
}

/// The length of the SGR sequence (`ESC [ params m`, params digits, `;` and `:`) `bytes` starts with.
fn sgr_len(bytes: &[u8]) -> Option<usize> {
    let rest = bytes.strip_prefix(b"\x1b[")?;
    let params = rest.iter().take_while(|b| b.is_ascii_digit() || **b == b';' || **b == b':').count();
    (rest.get(params) == Some(&b'm')).then_some(2 + params + 1)
}

/// Whether an SGR sequence starts with a reset (`ESC [ m`, `ESC [ 0 m`, `ESC [ 0 ; … m`).
fn resets(sgr: &[u8]) -> bool {
    let params = &sgr[2..sgr.len() - 1];
    params.is_empty() || params == b"0" || params.starts_with(b"0;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_restarted_with_the_pen_in_effect_is_joined() {
        let split = b"\x1b[0m\x1b[38;5;7mvbh\x1b[0m\x1b[0m\x1b[38;5;7mdkwfa\x1b[0m x";
        assert_eq!(drop_unchanged_pens(split), b"\x1b[0m\x1b[38;5;7mvbhdkwfa\x1b[0m x");
        let joined = b"\x1b[0m\x1b[38;5;7mvbhdkwfa\x1b[0m x";
        assert_eq!(drop_unchanged_pens(joined), joined);
    }

    #[test]
    fn pens_that_change_something_stay() {
        // Another colour; a reset after text; the first pen (nothing known before it); an addition without a
        // reset; the same colour written another way (kept: the rule compares bytes).
        for bytes in [
            &b"\x1b[0m\x1b[31ma\x1b[0m\x1b[32mb"[..],
            b"\x1b[0m\x1b[31ma\x1b[0mb",
            b"\x1b[31ma",
            b"\x1b[0m\x1b[31ma\x1b[1mb\x1b[1mc",
            b"\x1b[0m\x1b[31ma\x1b[0;31mb",
        ] {
            assert_eq!(drop_unchanged_pens(bytes), bytes, "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn other_bytes_leave_the_pen_and_end_a_group() {
        // Line ends, a cursor movement and a hyperlink between: the pen is still the one set before them.
        let bytes = b"\x1b[0m\x1b[1ma\r\n\x1b[2C\x1b]8;;x\x1b\\\x1b[0m\x1b[1mb";
        assert_eq!(drop_unchanged_pens(bytes), b"\x1b[0m\x1b[1ma\r\n\x1b[2C\x1b]8;;x\x1b\\b");
        // Not an SGR: left as it is.
        assert_eq!(drop_unchanged_pens(b"\x1b[0m\x1b[1ma\x1b[0K\x1b[1m"), b"\x1b[0m\x1b[1ma\x1b[0K\x1b[1m");
        assert_eq!(drop_unchanged_pens(b"\x1b[12"), b"\x1b[12");
    }
}

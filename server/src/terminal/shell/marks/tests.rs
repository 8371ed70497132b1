//! The scanner against marks split anywhere, abandoned, too long or forged, and the parse of each kind.

use super::*;

const NONCE: &str = "0123456789abcdef0123456789abcdef";

/// Every mark `bytes` holds when fed in chunks of `size`, as (start, end, payload).
fn marks_in(bytes: &[u8], size: usize) -> Vec<(u64, u64, Vec<u8>)> {
    let mut scanner = Scanner::default();
    let mut found = Vec::new();
    for (n, chunk) in bytes.chunks(size).enumerate() {
        scanner.scan((n * size) as u64, chunk, |mark| found.push((mark.start, mark.end, mark.payload.to_vec())));
    }
    found
}

#[test]
fn marks_are_found_with_their_offsets_however_the_chunks_split_them() {
    let stream = b"ab\x1b]133;A;x=1\x07cd\x1b]133;D;0\x1b\\\x1b]0;title\x07\x1b[1m";
    let expected = vec![(2, 14, b"A;x=1".to_vec()), (16, 27, b"D;0".to_vec())];
    for size in 1..=stream.len() {
        assert_eq!(marks_in(stream, size), expected, "chunks of {size}");
    }
}

#[test]
fn an_escape_inside_a_mark_abandons_it_and_starts_the_next() {
    let stream = b"\x1b]133;A\x1b]133;B\x07";
    assert_eq!(marks_in(stream, 3), vec![(7, 15, b"B".to_vec())]);
    // Another OSC, or a CSI, is no mark.
    assert!(marks_in(b"\x1b]1330;A\x07\x1b]13;A\x07\x1b[133;A\x07", 4).is_empty());
}

#[test]
fn a_payload_is_kept_up_to_its_bound_and_the_mark_still_ends() {
    let mut stream = b"\x1b]133;C;".to_vec();
    stream.extend(std::iter::repeat_n(b'x', 3 * MAX_MARK_BYTES));
    stream.push(BEL);
    let found = marks_in(&stream, 4096);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].2.len(), MAX_MARK_BYTES);
    assert_eq!(found[0].1, stream.len() as u64);
}

#[test]
fn each_kind_parses_with_the_nonce_and_nothing_parses_without_it() {
    let mark = |payload: &str| Mark::parse(payload.as_bytes(), NONCE);
    assert_eq!(
        mark(&format!("P;opty={NONCE}.1;cwd=/tmp/a%3Bb%25")),
        Some(Mark { kind: Kind::Prompt { cwd: Some(b"/tmp/a;b%".to_vec()) }, sequence: 1 })
    );
    assert_eq!(mark(&format!("B;opty={NONCE}.2")), Some(Mark { kind: Kind::Input, sequence: 2 }));
    assert_eq!(mark(&format!("A;opty={NONCE}.7")), Some(Mark { kind: Kind::Prompt { cwd: None }, sequence: 7 }));
    assert_eq!(
        mark(&format!("C;opty={NONCE}.3;cmdline_url=echo%20hi%0Athere")),
        Some(Mark { kind: Kind::Output { command: b"echo hi\nthere".to_vec() }, sequence: 3 })
    );
    assert_eq!(
        mark(&format!("D;130;opty={NONCE}.4")),
        Some(Mark { kind: Kind::End { exit_code: Some(130) }, sequence: 4 })
    );
    assert_eq!(mark(&format!("D;opty={NONCE}.5")), Some(Mark { kind: Kind::End { exit_code: None }, sequence: 5 }));
    // Forged: no nonce, another nonce, no sequence, an unknown kind.
    assert_eq!(mark("D;0"), None);
    assert_eq!(mark("D;0;opty=ffffffffffffffffffffffffffffffff.9"), None);
    assert_eq!(mark(&format!("D;0;opty={NONCE}")), None);
    assert_eq!(mark(&format!("E;opty={NONCE}.6")), None);
}

#[test]
fn percent_decoding_keeps_what_is_not_an_escape() {
    assert_eq!(percent_decode(b"a%41%4a%zz%4"), b"aAJ%zz%4".to_vec());
}

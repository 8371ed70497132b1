//! A terminal handed on through its binary snapshot (`Terminal::snapshot`, `Terminal::from_snapshot`, what the
//! daemon's in-place upgrade does) is the same terminal: both screens and their history, the cursor, the modes,
//! the title and a sequence cut in the middle, and it answers queries and reports title changes as a new one.

mod support;

use opencode_pty_vt::{Blanks, ModeKind, Screen, Terminal};

/// A shell's history, a title, a mode, then a full-screen program, ending in the middle of an SGR sequence.
fn busy() -> Terminal {
    let mut terminal = Terminal::new(40, 10, 1_000).expect("terminal");
    for n in 0..80 {
        terminal.write(format!("\x1b[3{}mline {n:02}\x1b[0m {}\r\n", n % 8, "w".repeat(n % 37)).as_bytes());
    }
    terminal.write(b"\x1b]2;editing notes\x07\x1b[?2004h$ vim notes.txt");
    terminal.write(b"\x1b[?1049h\x1b[2J\x1b[H~ full screen\r\n~\x1b[5;3Hhere\x1b[4");
    terminal.take_title_changed();
    terminal
}

#[test]
fn a_terminal_decoded_from_its_snapshot_is_the_same_terminal() {
    let mut source = busy();
    let bytes = source.snapshot().expect("snapshot");
    let mut copy = Terminal::from_snapshot(&bytes, 1_000).expect("decoded");
    assert_eq!(source.state_diff(&copy, Blanks::Exact).expect("diff"), None);
    assert_eq!(copy.active_screen(), Screen::Alternate);
    assert_eq!(copy.title().as_deref(), Some("editing notes"));
    assert_eq!(copy.mode(2004, ModeKind::Dec), Ok(true));
    assert_eq!(copy.cursor(), source.cursor());
    assert_eq!(copy.vt_checkpoint().unwrap(), source.vt_checkpoint().unwrap());
    // The SGR cut in the middle is finished the same way in both, and leaving the alternate screen shows the
    // same primary screen and history.
    for terminal in [&mut source, &mut copy] {
        terminal.write(b"4mtail\x1b[?1049l");
    }
    assert_eq!(source.state_diff(&copy, Blanks::Exact).expect("diff"), None);
    assert_eq!(copy.plain_text().unwrap(), source.plain_text().unwrap());
    assert_eq!(copy.scrollback_rows(), source.scrollback_rows());
}

#[test]
fn a_decoded_terminal_answers_queries_and_reports_title_changes() {
    let source = busy();
    let mut copy = Terminal::from_snapshot(&source.snapshot().unwrap(), 1_000).expect("decoded");
    assert!(!copy.take_title_changed(), "nothing pending after the decode");
    copy.write(b"\x1b[c\x1b]2;next\x07");
    assert!(!copy.take_replies().is_empty(), "the primary device attributes are answered");
    assert!(copy.take_title_changed());
    assert_eq!(copy.title().as_deref(), Some("next"));
}

#[test]
fn a_decoded_terminal_keeps_the_history_limit_it_is_given() {
    let mut copy = Terminal::from_snapshot(&busy().snapshot().unwrap(), 100).expect("decoded");
    copy.write(b"\x1b[?1049l");
    for n in 0..5_000 {
        copy.write(format!("more {n}\r\n").as_bytes());
    }
    assert!(copy.scrollback_rows() < 1_000, "{} rows of history", copy.scrollback_rows());
}

#[test]
fn bytes_that_are_no_snapshot_are_refused() {
    assert!(Terminal::from_snapshot(&[], 100).is_err());
    assert!(Terminal::from_snapshot(b"not a snapshot at all", 100).is_err());
}

#[test]
fn a_snapshot_taken_inside_any_sequence_continues_it() {
    let cases: [(&[u8], &[u8]); 5] = [
        (b"\x1b[3", b"1mred\x1b[0m"),
        (b"\x1b]2;half a ti", b"tle\x07after"),
        (b"\x1b", b"[1mbold"),
        (b"\xe2\x82", b"\xac euro"),
        (b"\x1b]8;;http://exa", b"mple\x1b\\link\x1b]8;;\x1b\\"),
    ];
    for (pending, rest) in cases {
        let mut source = Terminal::new(30, 5, 100).unwrap();
        source.write(b"before ");
        source.write(pending);
        assert!(!source.in_ground(), "{pending:?}");
        let mut copy = Terminal::from_snapshot(&source.snapshot().expect("snapshot"), 100).expect("decoded");
        assert!(!copy.in_ground(), "{pending:?}: the copy is inside the sequence too");
        source.write(rest);
        copy.write(rest);
        assert!(copy.in_ground());
        assert_eq!(source.state_diff(&copy, Blanks::Exact).expect("diff"), None, "{pending:?}");
        assert_eq!(copy.plain_text().unwrap(), source.plain_text().unwrap(), "{pending:?}");
        assert_eq!(copy.title(), source.title(), "{pending:?}");
    }
}

#[test]
fn a_sequence_longer_than_the_continuation_is_fed_to_its_end_first() {
    let mut source = Terminal::new(30, 5, 100).unwrap();
    source.write(b"\x1b]2;");
    source.write(&vec![b'x'; opencode_pty_vt::MAX_CONTINUATION_BYTES + 1]);
    assert!(source.snapshot().is_err(), "too much of the sequence to carry");
    let rest = b"yz\x07shown after";
    let taken = source.write_until_ground(rest);
    assert_eq!(taken, 3, "up to the title's end");
    assert!(source.in_ground());
    assert_eq!(source.write_until_ground(&rest[taken..]), 0, "nothing is pending any more");
    let mut copy = Terminal::from_snapshot(&source.snapshot().expect("snapshot"), 100).expect("decoded");
    assert!(copy.in_ground());
    source.write(&rest[taken..]);
    copy.write(&rest[taken..]);
    assert_eq!(copy.plain_text().unwrap().trim_end(), "shown after");
    assert_eq!(source.state_diff(&copy, Blanks::Exact).expect("diff"), None);
    // A sequence that does not end in what is fed takes all of it.
    let mut open = Terminal::new(30, 5, 100).unwrap();
    open.write(b"\x1b[1");
    assert_eq!(open.write_until_ground(b";2;3"), 4);
    assert!(!open.in_ground());
}

#[test]
fn a_terminal_decoded_and_fed_on_another_thread_is_the_same_terminal_on_this_one() {
    let mut source = busy();
    let bytes = source.snapshot().expect("snapshot");
    let later = b"4mtail\x1b[?1049l\x1b]2;after\x07more\r\n\x1b[c";
    // Decoded and fed what followed on a thread of its own, its replies and title change dropped there.
    let detached = std::thread::spawn(move || {
        let mut copy = Terminal::from_snapshot(&bytes, 1_000).expect("decoded");
        copy.write(later);
        assert!(!copy.take_replies().is_empty(), "the device attributes query is answered");
        assert!(copy.take_title_changed());
        copy.detach()
    })
    .join()
    .expect("the decoding thread");
    let mut copy = detached.attach();
    source.write(later);
    assert_eq!(source.state_diff(&copy, Blanks::Exact).expect("diff"), None);
    assert_eq!(copy.plain_text().unwrap(), source.plain_text().unwrap());
    // Used on this thread from now on: it answers and reports here.
    for terminal in [&mut source, &mut copy] {
        terminal.take_replies();
        terminal.take_title_changed();
        terminal.write(b"\x1b[5n\x1b]2;here\x07");
    }
    assert_eq!(copy.take_replies(), source.take_replies());
    assert!(copy.take_title_changed());
    assert_eq!(copy.title().as_deref(), Some("here"));
}

#[test]
fn a_decoded_terminal_fed_past_its_history_limit_checkpoints_as_the_original() {
    // The decoded terminal packs its pages afresh, so the same history lies in pages cut at other rows; the
    // formatter restarts a style run at a page's end, which the checkpoint must not show (a quiet terminal and
    // an upgraded one are compared byte for byte with ones that never were decoded).
    let mut source = Terminal::new(80, 24, 10_000).expect("terminal");
    source.write(&opencode_pty_testkit::screens::colourful_words(12_000, 7));
    let mut copy = Terminal::from_snapshot(&source.snapshot().expect("snapshot"), 10_000).expect("decoded");
    assert_eq!(copy.vt_checkpoint().unwrap(), source.vt_checkpoint().unwrap());
    let more = opencode_pty_testkit::screens::colourful_words(3_000, 11);
    source.write(&more);
    copy.write(&more);
    assert_eq!(copy.read_rows(20_000, 64 << 20).unwrap(), source.read_rows(20_000, 64 << 20).unwrap());
    let (ours, theirs) = (copy.vt_checkpoint().unwrap(), source.vt_checkpoint().unwrap());
    let at = ours.iter().zip(&theirs).position(|(a, b)| a != b).unwrap_or(ours.len().min(theirs.len()));
    assert!(
        ours == theirs,
        "the checkpoints part at byte {at}: {:?}\nvs {:?}",
        String::from_utf8_lossy(&ours[at.saturating_sub(60)..(at + 60).min(ours.len())]),
        String::from_utf8_lossy(&theirs[at.saturating_sub(60)..(at + 60).min(theirs.len())]),
    );
}

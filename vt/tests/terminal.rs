//! Behaviour of `vt::Terminal`: query replies, titles, resize reflow, thread confinement.

use opencode_pty_vt::{Error, ModeKind, Screen, Terminal};

fn terminal(cols: u16, rows: u16) -> Terminal {
    Terminal::new(cols, rows, 1000).expect("terminal")
}

#[test]
fn dsr_status_is_answered_once() {
    let mut t = terminal(80, 24);
    t.write(b"\x1b[5n");
    assert_eq!(t.take_replies(), b"\x1b[0n");
    assert_eq!(t.take_replies(), b"", "a reply is taken only once");
}

#[test]
fn cursor_position_report_answers_the_cursor() {
    let mut t = terminal(80, 24);
    t.write(b"\x1b[5;10H\x1b[6n");
    assert_eq!(t.take_replies(), b"\x1b[5;10R");
    // A query split across two writes is answered once it completes.
    t.write(b"\x1b[3;4H\x1b[");
    assert_eq!(t.take_replies(), b"");
    t.write(b"6n");
    assert_eq!(t.take_replies(), b"\x1b[3;4R");
}

#[test]
fn osc_0_and_2_set_the_title_and_flag_a_change() {
    let mut t = terminal(80, 24);
    assert_eq!(t.title(), None);
    assert!(!t.take_title_changed());
    t.write(b"\x1b]0;first\x07");
    assert!(t.take_title_changed());
    assert!(!t.take_title_changed(), "the flag is taken once");
    assert_eq!(t.title().as_deref(), Some("first"));
    t.write("\x1b]2;zweite ✓\x1b\\".as_bytes());
    assert!(t.take_title_changed());
    assert_eq!(t.title().as_deref(), Some("zweite ✓"));
    t.write(b"\x1b]2;\x07");
    assert!(t.take_title_changed());
    assert_eq!(t.title(), None, "an empty OSC title reads as unset");
}

#[test]
fn resize_reflows_soft_wrapped_lines() {
    let mut t = terminal(10, 5);
    t.write(b"0123456789abcde\r\nnext");
    assert_eq!(t.plain_text().expect("plain text"), "0123456789\nabcde\nnext");
    t.resize(20, 5).expect("resize");
    assert_eq!(t.size(), (20, 5));
    assert_eq!(t.plain_text().expect("plain text"), "0123456789abcde\nnext");
    t.resize(5, 5).expect("resize");
    assert_eq!(t.read_rows(5, 1 << 20).expect("rows"), ["01234", "56789", "abcde", "next", ""]);
}

#[test]
fn zero_sizes_are_refused() {
    assert!(matches!(Terminal::new(0, 24, 10), Err(Error::ZeroSize { cols: 0, rows: 24 })));
    let mut t = terminal(80, 24);
    assert!(matches!(t.resize(80, 0), Err(Error::ZeroSize { .. })));
    assert_eq!(t.size(), (80, 24));
}

#[test]
fn state_queries_follow_the_stream() {
    let mut t = terminal(20, 4);
    assert_eq!(t.active_screen(), Screen::Primary);
    t.write(b"a\r\nb\r\nc\r\nd\r\ne\r\nf");
    assert_eq!(t.total_rows(), 6);
    assert_eq!(t.scrollback_rows(), 2);
    let cursor = t.cursor();
    assert_eq!((cursor.x, cursor.y, cursor.pending_wrap, cursor.visible), (1, 3, false, true));
    t.write(b"\x1b[?1049h\x1b[?25l");
    assert_eq!(t.active_screen(), Screen::Alternate);
    assert_eq!(t.total_rows(), 4, "the alternate screen has no history");
    assert!(!t.cursor().visible);
    assert!(t.mode(1049, ModeKind::Dec).expect("mode"));
    assert!(!t.mode(4, ModeKind::Ansi).expect("mode"));
}

#[test]
fn terminal_lives_on_a_spawned_thread() {
    let text = std::thread::spawn(|| {
        let mut t = terminal(40, 10);
        t.write(b"\x1b]2;worker\x07hello from a thread\x1b[6n");
        assert_eq!(t.take_replies(), b"\x1b[1;20R");
        let checkpoint = t.vt_checkpoint().expect("checkpoint");
        let mut replay = terminal(40, 10);
        replay.write(&checkpoint);
        assert_eq!(replay.title().as_deref(), Some("worker"));
        replay.plain_text().expect("plain text")
    })
    .join()
    .expect("thread");
    assert_eq!(text, "hello from a thread");
}

/// `Terminal` must not be `Send`: it is confined to the thread that created it.
#[test]
fn terminal_is_not_send() {
    trait AmbiguousIfSend<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfSend<()> for T {}
    #[allow(dead_code)]
    struct Invalid;
    impl<T: ?Sized + Send> AmbiguousIfSend<Invalid> for T {}
    // This resolves only while exactly one impl applies, i.e. while `Terminal: !Send`.
    <Terminal as AmbiguousIfSend<_>>::check();
}

#[test]
fn replies_are_bounded() {
    let mut t = terminal(80, 24);
    let query = b"\x1b[5n".repeat(opencode_pty_vt::MAX_PENDING_REPLY_BYTES / 4 + 10);
    t.write(&query);
    assert_eq!(t.take_replies().len(), opencode_pty_vt::MAX_PENDING_REPLY_BYTES);
    assert_eq!(t.dropped_reply_bytes(), 40);
}

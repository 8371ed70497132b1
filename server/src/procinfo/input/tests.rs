//! The detector against real programs on a real PTY (issue 29's matrix): each state checked repeatedly while it
//! holds, then again after it changed, and every answer must be the right one.

use super::{InputWait, LineDiscipline};

#[test]
fn the_line_discipline_decides_the_kind() {
    let mode = |canonical, echo| LineDiscipline { canonical, echo }.wait();
    assert_eq!(mode(true, false), InputWait::Password);
    assert_eq!(mode(true, true), InputWait::Line);
    assert_eq!(mode(false, true), InputWait::Key);
    assert_eq!(mode(false, false), InputWait::Key);
}

#[cfg(target_os = "linux")]
mod matrix {
    use std::io::Write;
    use std::time::Duration;

    use super::super::InputWait::{self, Key, Line, Password};
    use crate::procinfo::test_pty::Session;

    /// How many times a state is checked while it holds, [`SAMPLE_GAP`] apart.
    const SAMPLES: usize = 25;
    const SAMPLE_GAP: Duration = Duration::from_millis(10);

    /// Waits until the detector answers `expected` (the program got there), then checks that every one of
    /// [`SAMPLES`] answers is `expected` (it stays there while the state holds).
    fn holds(session: &Session, expected: Option<InputWait>, what: &str) {
        let reached = session.wait_for(|s| s.input() == expected);
        assert!(
            reached,
            "{what}: never {expected:?}, last {:?}, group {:?}, output {:?}",
            session.input(),
            session.group_names(),
            session.output_tail()
        );
        stays(session, expected, what);
    }

    /// Checks that each of [`SAMPLES`] answers from now on is `expected`: for states that hold from a moment
    /// the test knows (a marker printed), so that a wrong answer cannot be waited out.
    fn stays(session: &Session, expected: Option<InputWait>, what: &str) {
        for n in 0..SAMPLES {
            let answer = session.input();
            assert_eq!(answer, expected, "{what}: answer {n} while the state holds, group {:?}", session.group_names());
            std::thread::sleep(SAMPLE_GAP);
        }
    }

    /// Waits for `marker` in the output.
    fn printed(session: &Session, marker: &str) {
        let seen = session.wait_for(|s| s.has_printed(marker));
        assert!(seen, "{marker:?} never printed: {:?}", session.output_tail());
    }

    /// After `marker` (printed right before `sleep`), nothing waits for input.
    fn then_sleeps(session: &Session, marker: &str, what: &str) {
        printed(session, marker);
        holds(session, None, what);
    }

    #[test]
    fn read_s_waits_for_a_password() {
        let session = Session::start_with("bash", "read -s x; echo AFTER-$x; sleep 30");
        holds(&session, Some(Password), "read -s");
        session.type_in(b"secret\r");
        then_sleeps(&session, "AFTER-secret", "sleep after read -s");
    }

    #[test]
    fn a_getpass_prompt_waits_for_a_password() {
        // sudo -S's way: the prompt opens /dev/tty, turns echo off and reads a line.
        let session =
            Session::start("python3 -c 'import getpass; print(\"AFTER-\" + getpass.getpass(\"pw: \"))'; sleep 30");
        holds(&session, Some(Password), "getpass");
        session.type_in(b"hunter2\r");
        then_sleeps(&session, "AFTER-hunter2", "sleep after getpass");
    }

    #[test]
    fn read_waits_for_a_line() {
        let session = Session::start_with("bash", "read x; echo AFTER-$x; sleep 30");
        holds(&session, Some(Line), "read");
        session.type_in(b"abc\r");
        then_sleeps(&session, "AFTER-abc", "sleep after read");
    }

    #[test]
    fn python_input_waits_for_a_line() {
        let session = Session::start("python3 -c 'print(\"AFTER-\" + input())'; sleep 30");
        holds(&session, Some(Line), "input()");
        session.type_in(b"xyz\r");
        then_sleeps(&session, "AFTER-xyz", "sleep after input()");
    }

    #[test]
    fn less_waits_for_keys() {
        let session = Session::start("less /etc/passwd; echo AFTER-less; sleep 30");
        holds(&session, Some(Key), "less");
        session.type_in(b"q");
        then_sleeps(&session, "AFTER-less", "sleep after less");
    }

    #[test]
    fn vi_waits_for_keys() {
        let session = Session::start("vi -u NONE -i NONE -n; echo AFTER-vi; sleep 30");
        holds(&session, Some(Key), "vi");
        session.type_in(b"\x1b:q!\r");
        then_sleeps(&session, "AFTER-vi", "sleep after vi");
    }

    #[test]
    fn top_waits_for_keys() {
        // A long delay: top is not waiting for keys while it redraws (the answer is what it does at that instant).
        let session = Session::start("top -d 60; echo AFTER-top; sleep 30");
        holds(&session, Some(Key), "top");
        session.type_in(b"q");
        then_sleeps(&session, "AFTER-top", "sleep after top");
    }

    #[test]
    fn sleep_waits_for_nothing_until_a_read() {
        let session = Session::start_with("bash", "echo SLEEPING; sleep 2; read x; echo AFTER-$x; sleep 30");
        printed(&session, "SLEEPING");
        stays(&session, None, "sleep");
        holds(&session, Some(Line), "read after sleep");
        session.type_in(b"1\r");
        then_sleeps(&session, "AFTER-1", "sleep after read");
    }

    #[test]
    fn a_busy_loop_waits_for_nothing_until_a_read() {
        let session = Session::start_with(
            "bash",
            "echo BUSY; end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do :; done; read x; echo AFTER-$x; sleep 30",
        );
        printed(&session, "BUSY");
        stays(&session, None, "busy loop");
        holds(&session, Some(Line), "read after the loop");
        session.type_in(b"2\r");
        then_sleeps(&session, "AFTER-2", "sleep after read");
    }

    #[test]
    fn a_socket_wait_is_not_a_terminal_wait() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("s");
        let script = format!(
            "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"{}\"); s.listen(); \
             print(\"LISTENING\", flush=True); c, _ = s.accept(); c.recv(1); print(\"AFTER-\" + input())'; sleep 30",
            path.display()
        );
        let session = Session::start(&script);
        printed(&session, "LISTENING");
        // Accepting, then receiving: neither waits for the terminal.
        stays(&session, None, "accept");
        let mut peer = std::os::unix::net::UnixStream::connect(&path).expect("connect");
        stays(&session, None, "recv");
        peer.write_all(b"x").expect("send a byte");
        holds(&session, Some(Line), "input() after the socket");
        session.type_in(b"3\r");
        then_sleeps(&session, "AFTER-3", "sleep after input()");
    }

    #[test]
    fn reading_stdin_from_a_fifo_is_not_a_terminal_wait() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let fifo = dir.path().join("f");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
        let script = format!("cat < {} > /dev/null; read x; echo AFTER-$x; sleep 30", fifo.display());
        let session = Session::start_with("bash", &script);
        // Opening for writing waits for the reader (the shell's redirection).
        let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).expect("open the fifo");
        let cat = session.wait_for(|s| s.group_names().iter().any(|name| name == "cat"));
        assert!(cat, "cat never ran: {:?}", session.group_names());
        // `cat` is blocked reading its standard input, a fifo: not the terminal.
        stays(&session, None, "cat < fifo");
        writer.write_all(b"data\n").expect("feed cat");
        drop(writer);
        holds(&session, Some(Line), "read after cat");
        session.type_in(b"4\r");
        then_sleeps(&session, "AFTER-4", "sleep after read");
    }

    #[test]
    fn a_regular_file_on_stdin_is_not_a_terminal_wait() {
        let session = Session::start_with(
            "bash",
            "echo READING; end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do cat; done < /etc/services > /dev/null; \
             read x; echo AFTER-$x; sleep 30",
        );
        printed(&session, "READING");
        stays(&session, None, "cat < file");
        holds(&session, Some(Line), "read after the file");
        session.type_in(b"5\r");
        then_sleeps(&session, "AFTER-5", "sleep after read");
    }

    #[test]
    fn output_at_full_speed_is_not_a_terminal_wait() {
        let session = Session::start_with("bash", "timeout --foreground 4 yes; read x; echo AFTER-$x; sleep 30");
        let flowing = session.wait_for(|s| s.printed() > 1024 * 1024);
        assert!(flowing, "yes printed {} bytes", session.printed());
        stays(&session, None, "yes");
        holds(&session, Some(Line), "read after yes");
        session.type_in(b"6\r");
        then_sleeps(&session, "AFTER-6", "sleep after read");
    }

    #[test]
    fn a_process_without_a_terminal_descriptor_waits_for_nothing() {
        // Blocked in `read` of descriptor 0, which is not the terminal.
        let session = Session::start("echo PIPED; sleep 30 | cat; sleep 30");
        printed(&session, "PIPED");
        let cat = session.wait_for(|s| s.group_names().iter().any(|name| name == "cat"));
        assert!(cat, "cat never ran: {:?}", session.group_names());
        stays(&session, None, "sleep | cat");
        assert!(session.running());
    }
}

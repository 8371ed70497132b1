//! The tracker over whole prompt cycles: offsets, exit codes, forged and replayed marks, the bound on the list.

use super::*;

const NONCE: &str = "00112233445566778899aabbccddeeff";

/// Feeds `text` as one chunk at the tracker's running offset.
struct Feed {
    tracker: Tracker,
    offset: u64,
    changes: Vec<Change>,
}

impl Feed {
    fn new() -> Feed {
        Feed { tracker: Tracker::new(NONCE.into()), offset: 0, changes: Vec::new() }
    }

    fn put(&mut self, text: &str) {
        self.tracker.output(self.offset, text.as_bytes(), 7, &mut self.changes);
        self.offset += text.len() as u64;
    }
}

fn mark(kind: &str, sequence: u64, extra: &str) -> String {
    format!("\x1b]133;{kind};opty={NONCE}.{sequence}{extra}\x07")
}

#[test]
fn a_prompt_cycle_gives_a_command_with_its_offsets_and_exit_code() {
    let mut feed = Feed::new();
    assert_eq!(feed.tracker.state(), starting());
    feed.put(&mark("P", 1, ";cwd=/home/me"));
    feed.put("$ ");
    feed.put(&mark("B", 2, ""));
    feed.put("false\r\n");
    feed.put(&mark("C", 3, ";cmdline_url=false"));
    let output_start = feed.offset;
    assert_eq!(feed.tracker.state().state, ShellStateState::Running);
    assert_eq!(feed.tracker.state().command_id, Some(1));
    feed.put("oops\r\n");
    let output_end = feed.offset;
    feed.put(&mark("D", 4, "").replace("D;", "D;1;"));
    feed.put(&mark("P", 5, ";cwd=/tmp"));
    assert_eq!(
        feed.changes,
        vec![Change::Started { id: 1, at: output_start }, Change::Finished { id: 1, at: output_end }]
    );
    let state = feed.tracker.state();
    assert_eq!((state.state, state.command_id, state.cwd.as_deref()), (ShellStateState::Prompt, None, Some("/tmp")));
    let commands = feed.tracker.commands(None);
    assert_eq!(
        commands,
        vec![ShellCommand {
            command_id: 1,
            command: "false".into(),
            cwd: Some("/home/me".into()),
            output_start,
            output_end: Some(output_end),
            exit_code: Some(1),
            started_at: 7,
            finished_at: Some(7),
        }]
    );
    assert_eq!(feed.tracker.command(1), commands.first());
}

#[test]
fn forged_and_replayed_marks_start_and_end_nothing() {
    let mut feed = Feed::new();
    feed.put(&mark("A", 1, ""));
    feed.put(&mark("C", 2, ";cmdline_url=cat%20log"));
    // What the command prints: marks without the nonce, with another one, and this terminal's own old ones.
    feed.put("\x1b]133;D;0\x07\x1b]133;A\x07");
    feed.put("\x1b]133;D;0;opty=ffeeddccbbaa99887766554433221100.50\x07");
    feed.put(&mark("D", 2, "").replace("D;", "D;0;"));
    feed.put(&mark("A", 1, ""));
    assert_eq!(feed.changes.len(), 1);
    assert!(matches!(feed.changes[0], Change::Started { id: 1, .. }));
    assert_eq!(feed.tracker.state().command_id, Some(1));
    feed.put(&mark("D", 3, "").replace("D;", "D;0;"));
    assert_eq!(feed.tracker.commands(None)[0].exit_code, Some(0));
}

#[test]
fn a_command_without_its_end_ends_at_the_next_prompt_or_the_end_of_the_output() {
    let mut feed = Feed::new();
    feed.put(&mark("C", 1, ";cmdline_url=a"));
    let before_prompt = feed.offset;
    feed.put(&mark("A", 2, ""));
    feed.put(&mark("C", 3, ";cmdline_url=exit"));
    feed.tracker.output_ended(feed.offset + 5, 9, &mut feed.changes);
    let commands = feed.tracker.commands(None);
    assert_eq!(commands[0].output_end, Some(before_prompt));
    assert_eq!(commands[1].output_end, Some(feed.offset + 5));
    assert_eq!((commands[1].exit_code, commands[1].finished_at), (None, Some(9)));
    assert_eq!(feed.tracker.state().command_id, None);
}

#[test]
fn the_list_keeps_the_last_commands_and_a_limit_takes_the_newest() {
    let mut feed = Feed::new();
    let mut sequence = 0;
    for n in 0..MAX_COMMANDS + 3 {
        sequence += 2;
        feed.put(&mark("C", sequence - 1, &format!(";cmdline_url=c{n}")));
        feed.put(&mark("D", sequence, "").replace("D;", "D;0;"));
    }
    let all = feed.tracker.commands(None);
    assert_eq!(all.len(), MAX_COMMANDS);
    assert_eq!(all[0].command_id, 4);
    assert_eq!(feed.tracker.commands(Some(2)).iter().map(|c| c.command.as_str()).collect::<Vec<_>>(), ["c257", "c258"]);
    assert!(feed.tracker.command(3).is_none());
    assert_eq!(feed.tracker.command(4).map(|c| c.command.as_str()), Some("c3"));
}

#[test]
fn command_lines_and_directories_are_bounded_and_cleaned() {
    let long = "é".repeat(MAX_COMMAND_LINE_BYTES);
    let kept = command_line(long.as_bytes());
    assert_eq!(kept.len(), MAX_COMMAND_LINE_BYTES);
    assert_eq!(command_line(b"a\x1b[1m\tb\nc\xff"), "a\u{fffd}[1m\tb\nc\u{fffd}");
    assert_eq!(shell_cwd(b"/tmp"), Some("/tmp".into()));
    assert_eq!(shell_cwd(b"/tmp/a\nb"), None);
    assert_eq!(shell_cwd("/".repeat(MAX_SHELL_CWD_BYTES + 1).as_bytes()), None);
}

#[test]
fn the_largest_commands_answer_fits_one_frame() {
    // Every command line and directory at its bound, each byte one that JSON doubles (`"`, `\`).
    let worst = ShellCommand {
        command_id: opencode_pty_protocol::MAX_EXACT_INTEGER,
        command: "\"".repeat(MAX_COMMAND_LINE_BYTES),
        cwd: Some("\\".repeat(MAX_SHELL_CWD_BYTES)),
        output_start: opencode_pty_protocol::MAX_EXACT_INTEGER,
        output_end: Some(opencode_pty_protocol::MAX_EXACT_INTEGER),
        exit_code: Some(u32::MAX),
        started_at: opencode_pty_protocol::MAX_EXACT_INTEGER,
        finished_at: Some(opencode_pty_protocol::MAX_EXACT_INTEGER),
    };
    let commands = serde_json::to_vec(&vec![worst; MAX_COMMANDS]).expect("json").len();
    // What is left is far more than the largest process info (its command at most `MAX_COMMAND_BYTES`).
    let rest = 4 * opencode_pty_protocol::MAX_COMMAND_BYTES;
    assert!(commands + rest < opencode_pty_protocol::MAX_FRAME_BYTES, "{commands} bytes");
}

/// A tracker handed over by an upgrade at any byte of a session (inside a mark too) goes on as the one that
/// was not: the same commands, state and changes.
#[test]
fn a_tracker_handed_over_anywhere_goes_on_as_before() {
    let session = [
        mark("P", 1, ";cwd=/home/me"),
        "$ ".into(),
        mark("B", 2, ""),
        "make\r\n".into(),
        mark("C", 3, ";cmdline_url=make%20all"),
        "building\r\n".into(),
        mark("D", 4, "").replace("D;", "D;2;"),
        mark("P", 5, ";cwd=/tmp"),
        "$ ".into(),
        mark("B", 6, ""),
    ]
    .concat();
    let mut whole = Feed::new();
    whole.put(&session);
    whole.tracker.input_written();
    for cut in 0..=session.len() {
        let mut feed = Feed::new();
        feed.put(&session[..cut]);
        let state = feed.tracker.to_state();
        feed.tracker = Tracker::from_state(&state);
        assert_eq!(feed.tracker.to_state(), state, "cut at {cut}: the state reads back");
        feed.put(&session[cut..]);
        feed.tracker.input_written();
        assert_eq!(feed.changes, whole.changes, "cut at {cut}");
        assert_eq!(feed.tracker.state(), whole.tracker.state(), "cut at {cut}");
        assert_eq!(feed.tracker.commands(None), whole.tracker.commands(None), "cut at {cut}");
        assert_eq!(feed.tracker.to_state(), whole.tracker.to_state(), "cut at {cut}");
    }
}

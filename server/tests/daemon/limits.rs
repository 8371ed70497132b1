//! The daemon's size and length limits over its socket, against the real binary: terminal sizes refused with
//! the limit named (and a refused resize touching nothing), echoed strings bounded, program titles cut,
//! `list`, `get`, `snapshot` and `subscribe` answering at the largest sizes the limits allow, and the largest
//! terminal's checkpoint fitting its limit (in `snapshot` and every `resized`) however full its history.

use crate::support;

use std::os::unix::net::UnixStream;

use opencode_pty_protocol::{
    Frame, MAX_ARG_CHARS, MAX_CELLS, MAX_COLS, MAX_COMMAND_BYTES, MAX_FRAME_BYTES, MAX_GROUP_ID_CHARS,
    MAX_METADATA_BYTES, MAX_PATH_CHARS, MAX_ROWS, MAX_TITLE_CHARS,
};
use opencode_pty_testkit::screens::{EVERY_ATTRIBUTE, StyledCells, coloured_lines};
use opencode_pty_vt::{MAX_CHECKPOINT_BYTES, MAX_PLAIN_CELL_BYTES, MAX_PLAIN_ROW_BYTES};
use serde_json::{Value, json};
use support::{Daemon, create_sh, eventually, frames_until, message, recv_frame, replay_of};

fn sized(script: &str, cols: u16, rows: u16) -> Value {
    let mut request = create_sh(script);
    request["cols"] = json!(cols);
    request["rows"] = json!(rows);
    request
}

/// Reads a subscription until `until` accepts the output so far or an event; the events read are returned.
fn read_until(stream: &mut UnixStream, mut until: impl FnMut(&[u8], Option<&Value>) -> bool) -> Vec<Value> {
    let (mut output, mut events) = (Vec::new(), Vec::new());
    loop {
        match recv_frame(stream).expect("the subscription goes on") {
            Frame::Output { bytes, .. } => {
                output.extend_from_slice(&bytes);
                if until(&output, None) {
                    return events;
                }
            }
            Frame::Control(map) => {
                events.push(Value::Object(map));
                if until(&output, events.last()) {
                    return events;
                }
            }
        }
    }
}

#[test]
fn terminal_sizes_over_the_limits_are_refused_and_touch_nothing() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let refused = [
        ((MAX_COLS + 1, 24), "terminal width 1001 is over the 1000-column limit"),
        ((80, MAX_ROWS + 1), "terminal height 1001 is over the 1000-row limit"),
        ((1000, 501), "terminal size 1000x501 is 501000 cells, over the 500000-cell limit"),
        ((65535, 65535), "terminal width 65535 is over the 1000-column limit"),
    ];
    for ((cols, rows), expected) in refused {
        assert_eq!(message(&daemon.request(sized("exit 0", cols, rows))), expected);
    }
    assert_eq!(daemon.request(json!({"op": "list", "mode": "pty"}))["processes"], json!([]), "nothing started");

    // The largest terminal; its shell prints the PTY's size on each line it reads.
    let created = daemon.request(sized("while read x; do stty size; done", 1000, 500));
    let id = created["process"]["id"].as_u64().expect("created the largest terminal");
    let (mut stream, attached) = daemon.subscribe(id, "watcher", "observer");
    assert_eq!(attached["type"], "attached", "{attached}");

    let resize =
        |cols: u16, rows: u16| json!({"op": "resize", "id": id, "attachment_id": null, "cols": cols, "rows": rows});
    assert_eq!(message(&daemon.request(resize(1001, 24))), "terminal width 1001 is over the 1000-column limit");
    assert_eq!(
        message(&daemon.request(resize(1000, 1000))),
        "terminal size 1000x1000 is 1000000 cells, over the 500000-cell limit"
    );
    let control = json!({"op": "control", "id": id, "attachment_id": "watcher", "cols": 2000, "rows": 10});
    assert_eq!(message(&daemon.request(control)), "terminal width 2000 is over the 1000-column limit");
    let input = json!({"op": "input", "id": id, "attachment_id": "watcher", "cols": 10, "rows": 65535,
                       "data_base64": "eA=="});
    assert_eq!(message(&daemon.request(input)), "terminal height 65535 is over the 1000-row limit");

    // Neither the emulator nor the PTY changed, and nobody was promoted.
    let pty = &daemon.request(json!({"op": "get", "id": id}))["process"]["pty"];
    assert_eq!((pty["cols"].as_u64(), pty["rows"].as_u64()), (Some(1000), Some(500)));
    let write = json!({"op": "write", "id": id, "attachment_id": null, "data_base64": "DQ=="});
    assert_eq!(daemon.request(write)["type"], "ok");
    let events = read_until(&mut stream, |output, _| String::from_utf8_lossy(output).contains("500 1000"));
    // A valid resize is the first one any subscriber sees.
    assert_eq!(daemon.request(resize(80, 24))["type"], "ok");
    let later = read_until(&mut stream, |_, event| event.is_some_and(|e| e["type"] == "resized"));
    let seen: Vec<&Value> = events.iter().chain(&later).collect();
    assert!(seen.iter().all(|e| e["type"] != "controller_changed"), "nobody was promoted: {seen:?}");
    let resized: Vec<_> = seen.iter().filter(|e| e["type"] == "resized").collect();
    assert_eq!(resized.len(), 1, "only the valid resize was published");
    assert_eq!((resized[0]["cols"].as_u64(), resized[0]["rows"].as_u64()), (Some(80), Some(24)));
    // The limits cut nothing they allow: the tallest terminal is a valid size too.
    assert_eq!(daemon.request(resize(500, 1000))["type"], "ok");
    let pty = &daemon.request(json!({"op": "get", "id": id}))["process"]["pty"];
    assert_eq!((pty["cols"].as_u64(), pty["rows"].as_u64()), (Some(500), Some(1000)));
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
}

#[test]
fn echoed_strings_over_their_limits_are_refused_with_short_messages() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let five_mib = "t".repeat(5 << 20);
    let with = |field: &str, value: Value| {
        let mut request = create_sh("exit 0");
        request[field] = value;
        request
    };
    let cases = [
        (with("title", json!(five_mib)), "title is over the 256-character limit".to_owned()),
        (with("title", json!("é".repeat(MAX_TITLE_CHARS + 1))), "title is over the 256-character limit".into()),
        (with("group_id", json!(five_mib)), "group_id is over the 256-character limit".into()),
        (with("program", json!("p".repeat(MAX_PATH_CHARS + 1))), "program is over the 4096-character limit".into()),
        (with("cwd", json!("c".repeat(MAX_PATH_CHARS + 1))), "cwd is over the 4096-character limit".into()),
        (with("args", json!(["a".repeat(MAX_ARG_CHARS + 1)])), "argument 0 is over the 131072-character limit".into()),
        (with("args", json!(vec![""; 4097])), "args has 4097 items, over the 4096-item limit".into()),
    ];
    for (request, expected) in cases {
        let answer = daemon.request(request);
        assert_eq!(message(&answer), expected);
    }
    let huge_command = with("args", json!(["a".repeat(MAX_ARG_CHARS), "b".repeat(MAX_ARG_CHARS)]));
    let answer = daemon.request(huge_command);
    assert!(message(&answer).ends_with(&format!("over the {MAX_COMMAND_BYTES}-byte limit")), "{answer}");

    let dir = tempfile::tempdir().expect("tempdir");
    let output = dir.path().join("out.log");
    let pipe = json!({"op": "create_pipe", "program": "true", "args": [], "cwd": "/", "env": {},
                      "group_id": "g".repeat(MAX_GROUP_ID_CHARS + 1), "output_path": output});
    assert_eq!(message(&daemon.request(pipe)), "group_id is over the 256-character limit");
    assert!(!output.exists(), "a refused pipe process never creates its file");
    assert_eq!(daemon.request(json!({"op": "list", "mode": "pty"}))["processes"], json!([]));
    assert_eq!(daemon.request(json!({"op": "list", "mode": "pipe"}))["processes"], json!([]));

    let id = daemon.request(create_sh("read x"))["process"]["id"].as_u64().expect("a PTY");
    let rename = json!({"op": "rename", "id": id, "title": five_mib});
    assert_eq!(message(&daemon.request(rename)), "title is over the 256-character limit");
    assert_eq!(daemon.request(json!({"op": "get", "id": id}))["process"]["pty"]["title"], "t", "unchanged");
    let (_stream, answer) = daemon.subscribe(id, &"a".repeat(257), "observer");
    assert_eq!(message(&answer), "attachment_id is over the 256-character limit");
    let write = json!({"op": "write", "id": id, "attachment_id": "a".repeat(257), "data_base64": ""});
    assert_eq!(message(&daemon.request(write)), "attachment_id is over the 256-character limit");
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    // A pipe subscription's attachment id is bounded too.
    let pipe_output = dir.path().join("pipe.out");
    let pipe = json!({"op": "create_pipe", "program": "/bin/sleep", "args": ["30"], "cwd": "/", "env": {},
                      "group_id": "g", "output_path": pipe_output});
    let pipe_id = daemon.request(pipe)["process"]["id"].as_u64().expect("a pipe process");
    let (_stream, answer) = daemon.subscribe(pipe_id, &"a".repeat(257), "observer");
    assert_eq!(message(&answer), "attachment_id is over the 256-character limit");
    assert_eq!(daemon.request(json!({"op": "terminate", "id": pipe_id}))["type"], "ok");
}

#[test]
fn a_program_title_is_cut_to_the_limit() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    // 600 characters: under what the emulator accepts, over what the daemon keeps.
    let created = daemon.request(create_sh("printf '\\033]2;%s\\007' \"$(printf '%0600d' 0)\"; read x"));
    let id = created["process"]["id"].as_u64().expect("a PTY");
    // The title the program set: in `attached` if it came first, else in the `title_changed` that follows.
    let (mut observer, attached) = daemon.subscribe(id, "o", "observer");
    let mut title = attached["process"]["pty"]["title"].clone();
    if title == "t" {
        let changed = |events: &[Value]| events.iter().any(|e| e["type"] == "title_changed");
        let events = frames_until(&mut observer, &mut replay_of(&attached), "title_changed", |_, e| changed(e));
        title = events.iter().find(|e| e["type"] == "title_changed").expect("title_changed")["title"].clone();
    }
    assert_eq!(title, json!("0".repeat(MAX_TITLE_CHARS)), "the program's title, cut");
    let title = daemon.request(json!({"op": "get", "id": id}))["process"]["pty"]["title"].clone();
    assert_eq!(title, json!("0".repeat(MAX_TITLE_CHARS)));
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
}

/// The largest command the limits allow: `sh -c <script>` and two long arguments, just under
/// `MAX_COMMAND_BYTES` as JSON (and each under what Linux accepts at `exec`).
fn largest_args(script: &str) -> Value {
    let fixed = serde_json::to_string(&json!(["sh", "-c", script, "", ""])).unwrap().len();
    let room = MAX_COMMAND_BYTES - fixed;
    let (first, second) = (room / 2, room - room / 2);
    assert!(second < MAX_ARG_CHARS);
    json!(["-c", script, "x".repeat(first), "y".repeat(second)])
}

fn frame_len(daemon: &Daemon, request: Value) -> (Value, usize) {
    let answer = daemon.request(request);
    let len = serde_json::to_vec(&answer).unwrap().len();
    assert!(len <= MAX_FRAME_BYTES);
    (answer, len)
}

#[test]
fn list_get_snapshot_and_subscribe_answer_at_the_largest_sizes() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    // A PTY with every echoed string at its limit, renamed to the longest user title.
    let pty = json!({"op": "create_pty", "program": "sh", "args": largest_args("read x"), "cwd": "/", "env": {},
                     "group_id": "g".repeat(MAX_GROUP_ID_CHARS), "title": "\u{1}".repeat(MAX_TITLE_CHARS),
                     "cols": 1000, "rows": 500});
    let created = daemon.request(pty);
    let pty = created["process"]["id"].as_u64().unwrap_or_else(|| panic!("{}", created["message"]));
    let rename = json!({"op": "rename", "id": pty, "title": "\"".repeat(MAX_TITLE_CHARS)});
    assert_eq!(daemon.request(rename)["type"], "ok");
    let (got, _) = frame_len(&daemon, json!({"op": "get", "id": pty}));
    assert_eq!(got["process"]["pty"]["user_title"], json!("\"".repeat(MAX_TITLE_CHARS)));
    let (snapshot, _) = frame_len(&daemon, json!({"op": "snapshot", "id": pty}));
    assert_eq!(snapshot["type"], "snapshot", "{}", snapshot["message"]);
    let (_stream, attached) = daemon.subscribe(pty, &"a".repeat(256), "controller");
    assert_eq!(attached["type"], "attached", "{}", attached["message"]);

    // Pipe processes with the largest commands and metadata until the daemon refuses one.
    let dir = tempfile::tempdir().expect("tempdir");
    // Nearly the whole metadata total, leaving room for the empty objects of the others.
    let metadata = json!({"m": "m".repeat(MAX_METADATA_BYTES - 1024)});
    let pipe = |n: usize| {
        let mut request = json!({"op": "create_pipe", "program": "sh", "args": largest_args("exec sleep 600"),
                                 "cwd": "/", "env": {}, "group_id": "g".repeat(MAX_GROUP_ID_CHARS),
                                 "output_path": dir.path().join(format!("{n}.log"))});
        if n < 4 {
            request["metadata"] = metadata.clone();
        }
        request
    };
    let mut pipes = Vec::new();
    let refusal = loop {
        let answer = daemon.request(pipe(pipes.len()));
        match answer["process"]["id"].as_u64() {
            Some(id) => pipes.push(id),
            None => break answer,
        }
        assert!(pipes.len() < 100, "the listing budget never refused a process");
    };
    assert!(message(&refusal).starts_with("the daemon's live processes would take"), "{refusal}");
    assert!(pipes.len() >= 8, "at least 8 of the largest pipe processes fit ({})", pipes.len());

    // Both lists fit one frame, at their fullest.
    let (listed, pipe_bytes) = frame_len(&daemon, json!({"op": "list", "mode": "pipe"}));
    assert_eq!(listed["processes"].as_array().map(Vec::len), Some(pipes.len()), "{}", listed["message"]);
    assert!(pipe_bytes > 6 << 20, "the metadata and the commands are all there ({pipe_bytes} bytes)");
    let (listed, _) = frame_len(&daemon, json!({"op": "list", "mode": "pty"}));
    assert_eq!(listed["processes"][0]["id"], pty, "{}", listed["message"]);

    // Terminating gives the share back.
    assert_eq!(daemon.request(json!({"op": "terminate", "id": pipes.pop().unwrap()}))["type"], "ok");
    assert!(daemon.request(pipe(99))["process"]["id"].is_u64(), "room again after a terminate");
}

/// The worst screen for the checkpoint's exact form: every cell in its own style (truecolour foreground,
/// background and underline colour, every attribute) with combining marks, far over the checkpoint limit at the
/// largest size. Rows end with `\n`, which the PTY turns into `\r\n`.
const ADVERSARIAL: StyledCells = StyledCells { attributes: EVERY_ATTRIBUTE, wide: false, between_rows: b"\x1b[0m\n" };

/// Starts `cat` of `text` in a terminal of `cols` x `rows` and waits until the terminal has parsed it all: polled
/// with `get`, since the event (the output frames) would be the whole text streamed once more.
fn cat_into_terminal(daemon: &Daemon, dir: &std::path::Path, name: &str, text: &[u8], cols: u16, rows: u16) -> u64 {
    let file = dir.join(name);
    std::fs::write(&file, text).expect("write");
    let created = daemon.request(sized(&format!("cat '{}'; read x", file.display()), cols, rows));
    let id = created["process"]["id"].as_u64().expect("created");
    eventually("the text in the terminal", || {
        let tail = daemon.request(json!({"op": "get", "id": id}))["process"]["output_tail"].as_u64()?;
        (tail >= text.len() as u64).then_some(())
    });
    id
}

/// The size of the checkpoint a `snapshot` or `resized` carries, after checking the event's type.
fn checkpoint_len(answer: &Value, kind: &str) -> usize {
    assert_eq!(answer["type"], kind, "{}", answer["message"]);
    answer["checkpoint_base64"].as_str().expect("checkpoint").len() / 4 * 3
}

#[test]
fn the_largest_terminal_with_full_coloured_history_snapshots_and_resizes() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    // A full-width screen and history of coloured text, more than a 5 MiB checkpoint can hold whole.
    let dir = tempfile::tempdir().expect("tempdir");
    let id = cat_into_terminal(&daemon, dir.path(), "text", &coloured_lines(1000, 6000, b"\n"), 1000, 500);
    let (mut stream, attached) = daemon.subscribe(id, "watcher", "observer");
    assert_eq!(attached["type"], "attached", "{attached}");
    let snapshot = daemon.request(json!({"op": "snapshot", "id": id}));
    assert!(checkpoint_len(&snapshot, "snapshot") <= MAX_CHECKPOINT_BYTES);
    for (cols, rows) in [(500, 250), (1000, 500)] {
        let resize = json!({"op": "resize", "id": id, "attachment_id": null, "cols": cols, "rows": rows});
        assert_eq!(daemon.request(resize)["type"], "ok");
        let events = read_until(&mut stream, |_, event| event.is_some_and(|e| e["type"] == "resized"));
        let resized = events.last().expect("resized");
        assert_eq!((resized["cols"].as_u64(), resized["rows"].as_u64()), (Some(cols), Some(rows)));
        assert!(checkpoint_len(resized, "resized") <= MAX_CHECKPOINT_BYTES);
    }
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");

    // The worst screen for the checkpoint's exact form, at the largest size.
    let id = cat_into_terminal(&daemon, dir.path(), "adversarial", &ADVERSARIAL.screen(1000, 500), 1000, 500);
    let snapshot = daemon.request(json!({"op": "snapshot", "id": id}));
    assert!(checkpoint_len(&snapshot, "snapshot") <= MAX_CHECKPOINT_BYTES);
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
}

/// The plain form a checkpoint falls back to (SPEC C4) fits for every size the limits allow, with room for
/// the title, modes and tab stops.
#[test]
fn the_plain_form_of_the_largest_screen_fits_a_checkpoint() {
    let cells = MAX_CELLS as usize * MAX_PLAIN_CELL_BYTES + usize::from(MAX_ROWS) * MAX_PLAIN_ROW_BYTES;
    assert!(cells <= MAX_CHECKPOINT_BYTES / 2, "{cells} bytes");
}

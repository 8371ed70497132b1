//! Bad input must cost the daemon little, against the real binary: a frame with a wrong token costs about its
//! own size in memory however it is nested, duplicate members are refused at every level with no effect (a
//! duplicated token is never tried), and malformed frames write a bounded number of log lines.

use crate::support;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use opencode_pty::limits::LOG_BURST;
use opencode_pty_protocol::MAX_FRAME_BYTES;
use serde_json::json;
use support::{Daemon, recv, send};

/// Sends `text` as one control frame (no re-encoding, so duplicate members reach the daemon as written).
fn send_text(stream: &mut UnixStream, text: &str) {
    let len = u32::try_from(text.len()).unwrap();
    stream.write_all(&len.to_be_bytes()).unwrap();
    stream.write_all(text.as_bytes()).unwrap();
}

/// The answer to `text` sent on a new connection.
fn answer(daemon: &Daemon, text: &str) -> serde_json::Value {
    let mut stream = daemon.connect();
    send_text(&mut stream, text);
    recv(&mut stream).expect("an answer")
}

fn error_of(value: &serde_json::Value) -> &str {
    assert_eq!(value["type"], "error", "{value}");
    value["message"].as_str().unwrap()
}

#[test]
fn a_duplicated_token_is_refused_whichever_copy_is_good() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let token = &daemon.registration.token;
    for text in [
        format!(r#"{{"token":"wrong","token":"{token}","request":{{"op":"ping"}}}}"#),
        format!(r#"{{"token":"{token}","token":"wrong","request":{{"op":"ping"}}}}"#),
        format!(r#"{{"token":"{token}","request":{{"op":"ping"}},"token":"{token}"}}"#),
    ] {
        assert_eq!(error_of(&answer(&daemon, &text)), "invalid request: duplicate member `token`", "{text}");
    }
}

#[test]
fn duplicate_members_are_refused_at_every_level_with_no_effect() {
    let mut daemon = Daemon::start();
    let _owner = daemon.own();
    let token = &daemon.registration.token;
    let shutdown = format!(r#"{{"token":"{token}","request":{{"op":"ping"}},"request":{{"op":"shutdown"}}}}"#);
    assert_eq!(error_of(&answer(&daemon, &shutdown)), "invalid request: duplicate member `request`");
    let op = format!(r#"{{"token":"{token}","request":{{"op":"ping","op":"shutdown"}}}}"#);
    assert_eq!(error_of(&answer(&daemon, &op)), "invalid request: duplicate member `op`");
    let env = format!(
        r#"{{"token":"{token}","request":{{"op":"create_pty","program":"sh","args":[],"cwd":"/","env":{{"A":"1","A":"2"}},
           "group_id":"g","title":"t","cols":80,"rows":24}}}}"#
    );
    assert_eq!(error_of(&answer(&daemon, &env)), "invalid request: duplicate member `A`");
    // Nothing happened: the daemon runs and started no process.
    assert!(daemon.child_mut().try_wait().unwrap().is_none(), "the daemon must not have stopped");
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong");
    assert_eq!(daemon.request(json!({"op": "list", "mode": "pty"}))["processes"], json!([]));
    drop(_owner);
    daemon.wait_exit();
}

#[test]
fn the_owner_channel_refuses_duplicates_and_goes_on() {
    let mut daemon = Daemon::start();
    let mut owner = daemon.own();
    let token = daemon.registration.token.clone();
    send_text(
        &mut owner,
        &format!(r#"{{"token":"{token}","request":{{"op":"prepare_handoff"}},"request":{{"op":"shutdown"}}}}"#),
    );
    assert_eq!(error_of(&recv(&mut owner).unwrap()), "invalid request: duplicate member `request`");
    send_text(&mut owner, &format!(r#"{{"token":"wrong","token":"{token}","request":{{"op":"shutdown"}}}}"#));
    assert_eq!(error_of(&recv(&mut owner).unwrap()), "invalid request: duplicate member `token`");
    assert!(daemon.child_mut().try_wait().unwrap().is_none(), "neither stopped the daemon");
    send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
    assert_eq!(recv(&mut owner).unwrap()["type"], "ok");
    assert!(daemon.wait_exit().success());
}

/// The daemon's peak resident memory so far (`VmHWM`), in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// A frame of exactly `MAX_FRAME_BYTES` payload with a wrong token and an array of zeros: the costliest shape
/// for a JSON tree (each two-byte element would be a 32-byte value).
fn zeros_frame() -> Vec<u8> {
    let head = br#"{"token":"wrong","x":[0"#;
    let tail = b"]}";
    let mut payload = head.to_vec();
    while payload.len() + 2 + tail.len() <= MAX_FRAME_BYTES {
        payload.extend_from_slice(b",0");
    }
    payload.extend_from_slice(tail);
    let mut frame = u32::try_from(payload.len()).unwrap().to_be_bytes().to_vec();
    frame.extend_from_slice(&payload);
    frame
}

#[test]
fn an_unauthenticated_frame_costs_about_its_size() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let pid = daemon.pid();
    let frame = zeros_frame();
    let before = peak_memory(pid);
    const AT_ONCE: u64 = 6;
    let senders: Vec<_> = (0..AT_ONCE)
        .map(|_| {
            let mut stream = daemon.connect();
            let frame = frame.clone();
            std::thread::spawn(move || {
                stream.write_all(&frame).unwrap();
                let mut answer = Vec::new();
                stream.read_to_end(&mut answer).unwrap();
                answer
            })
        })
        .collect();
    for sender in senders {
        let answer = sender.join().unwrap();
        assert!(String::from_utf8_lossy(&answer).contains("authentication failed"));
    }
    let grown = peak_memory(pid).saturating_sub(before);
    // Twice the frames' size at most (they may all be in memory at once); a JSON tree of one would be ~16x.
    let bound = AT_ONCE * 2 * MAX_FRAME_BYTES as u64;
    assert!(grown <= bound, "peak memory grew by {grown} bytes for {AT_ONCE} frames, more than {bound}");
}

#[test]
fn malformed_frames_write_a_bounded_number_of_log_lines() {
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("daemon.log");
    let mut daemon = Daemon::start_logging_to(&log);
    let mut owner = daemon.own();
    let sent = 100;
    for _ in 0..sent {
        let mut stream = daemon.connect();
        send_text(&mut stream, "not json");
        assert!(recv(&mut stream).is_none(), "a malformed frame is closed unanswered");
    }
    send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
    assert_eq!(recv(&mut owner).unwrap()["type"], "ok");
    assert!(daemon.wait_exit().success());
    let text = std::fs::read_to_string(&log).unwrap();
    let lines = text.lines().filter(|line| line.contains("closing a connection that sent a malformed frame")).count();
    assert_eq!(lines, LOG_BURST as usize, "{text}");
    let held_back = sent - LOG_BURST as usize;
    assert!(text.contains(&format!("suppressed={held_back}")), "the stop reports what was held back:\n{text}");
}

#[test]
fn with_debug_logs_each_process_event_is_one_line_naming_its_id() {
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("daemon.log");
    let mut daemon = Daemon::start_logging_at(&log, Some("opencode_pty=debug"));
    let mut owner = daemon.own();
    let mut stream = daemon.connect();
    // The child ends by a signal of its own; the terminate after it reports nothing more.
    send(&mut stream, &daemon.envelope(support::create_sh("kill -USR1 $$")));
    let id = recv(&mut stream).unwrap()["process"]["id"].as_u64().expect("an id");
    support::eventually("the exit is known", || {
        let process = daemon.request(json!({"op": "get", "id": id}))["process"].clone();
        (process["exited_at"] != serde_json::Value::Null).then_some(())
    });
    let mut stream = daemon.connect();
    send(&mut stream, &daemon.envelope(json!({"op": "terminate", "id": id})));
    assert_eq!(recv(&mut stream).unwrap()["type"], "ok");
    send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
    assert_eq!(recv(&mut owner).unwrap()["type"], "ok");
    assert!(daemon.wait_exit().success());
    let text = std::fs::read_to_string(&log).unwrap();
    let field = format!("id={id}");
    for event in ["process started", "child exited", "process terminated"] {
        let lines: Vec<_> = text.lines().filter(|line| line.contains(event)).collect();
        assert_eq!(lines.len(), 1, "one {event:?} line:\n{text}");
        assert!(lines[0].split_whitespace().any(|word| word == field), "{event:?} names {field}:\n{text}");
    }
    assert!(text.contains("signal=Some(\"SIGUSR1\")"), "the exit says how the child ended:\n{text}");
}

#[test]
fn text_a_json_tree_would_refuse_cannot_slip_a_second_request_past_the_duplicate_check() {
    let mut daemon = Daemon::start();
    let _owner = daemon.own();
    let token = daemon.registration.token.clone();
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    for x in [deep.as_str(), "1e400", r#""\udc00""#] {
        let text = format!(r#"{{"token":"{token}","x":{x},"request":{{"op":"ping"}},"request":{{"op":"shutdown"}}}}"#);
        let mut stream = daemon.connect();
        send_text(&mut stream, &text);
        assert!(recv(&mut stream).is_none(), "a malformed frame is closed unanswered (x = {x})");
        assert!(daemon.child_mut().try_wait().unwrap().is_none(), "the daemon must not have stopped (x = {x})");
    }
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong");
    drop(_owner);
    daemon.wait_exit();
}

#[test]
fn answers_quote_what_the_client_sent_only_up_to_a_bound() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let long = "x".repeat(7 << 20);
    let answer = daemon.request(json!({"op": "get", "id": long}));
    let message = error_of(&answer);
    assert!(message.starts_with("invalid get request: invalid type: string"), "{}", &message[..100]);
    assert!(message.len() < 400, "the answer quotes {} bytes", message.len());
    let answer = daemon.request(json!({"op": long}));
    assert!(error_of(&answer).len() < 100, "an unknown op is quoted only in part");
}

/// One request per field at or past its bound, each with the answer it must get (an error's text, or `ok`
/// for a value exactly at a bound); after all of them nothing that the errors touched has changed.
#[test]
fn every_field_at_and_past_its_bound_is_answered_clearly_and_changes_nothing() {
    use base64::Engine;
    use opencode_pty_protocol::{MAX_INPUT_BYTES, MAX_METADATA_BYTES};
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let pty = daemon.request(support::create_sh("stty raw -echo; cat > /dev/null"))["process"]["id"].as_u64().unwrap();
    let pipe = daemon.request(json!({"op": "create_pipe", "program": "/bin/sleep", "args": ["600"], "cwd": "/",
        "env": {}, "group_id": "g", "output_path": dir.path().join("out").to_str().unwrap()}))["process"]["id"]
        .as_u64()
        .unwrap();
    let encode = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![b'a'; n]);
    // Serialized `{"k":"..."}` is 8 bytes around the value.
    let metadata = |n: usize| json!({"k": "x".repeat(n - 8)});
    std::os::unix::fs::symlink(dir.path(), dir.path().join("link")).unwrap();
    let write = |data: String| json!({"op": "write", "id": pty, "attachment_id": null, "data_base64": data});
    let pipe_at = |path: String| {
        json!({"op": "create_pipe", "program": "/bin/true", "args": [], "cwd": "/",
        "env": {}, "group_id": "g", "output_path": path})
    };
    let cases: Vec<(serde_json::Value, &str)> = vec![
        (json!({"op": "get", "id": u64::MAX}), "invalid get request"),
        (json!({"op": "terminate", "id": 9_007_199_254_740_993u64}), "invalid terminate request"),
        (json!({"op": "get", "id": 9_007_199_254_740_991u64}), "process 9007199254740991 not found"),
        (json!({"op": "resize", "id": pty, "attachment_id": null, "cols": 0, "rows": 24}), "invalid resize request"),
        (write("%%%%".into()), "data_base64 is not valid base64: Invalid symbol 37, offset 0."),
        (write(encode(MAX_INPUT_BYTES + 1)), "input is over the 1048576-byte limit"),
        (write(encode(MAX_INPUT_BYTES)), "ok"),
        (json!({"op": "set_metadata", "id": pipe, "metadata": metadata(MAX_METADATA_BYTES + 1)}), "metadata is over"),
        (json!({"op": "set_metadata", "id": pipe, "metadata": metadata(MAX_METADATA_BYTES)}), "ok"),
        (pipe_at("relative/out".into()), "output_path must be an absolute path"),
        (pipe_at(dir.path().join("missing/out").display().to_string()), "missing"),
        (
            json!({"op": "create_pty", "program": "sh", "args": [], "cwd": "/", "env": {"A=B": "c"}, "group_id": "g",
            "title": "t", "cols": 80, "rows": 24}),
            "env name \"A=B\" must be non-empty, without '=' or NUL",
        ),
        (
            json!({"op": "create_pty", "program": "sh", "args": ["a\u{0}b"], "cwd": "/", "env": {}, "group_id": "g",
            "title": "t", "cols": 80, "rows": 24}),
            "argument 0 must not contain NUL",
        ),
        (
            json!({"op": "create_pipe", "program": "/bin/true", "args": [], "cwd": "/", "env": {"A": "\u{0}"},
            "group_id": "g", "output_path": dir.path().join("nul").to_str().unwrap()}),
            "the value of env \"A\" must not contain NUL",
        ),
    ];
    let listed = |daemon: &Daemon| {
        let count = |mode| daemon.request(json!({"op": "list", "mode": mode}))["processes"].as_array().unwrap().len();
        count("pty") + count("pipe")
    };
    let before = listed(&daemon);
    let mut created = 0;
    for (request, expected) in &cases {
        let answer = daemon.request(request.clone());
        match *expected {
            "ok" | "created" => {
                assert_eq!(answer["type"], *expected, "{} answered {answer}", request["op"]);
                created += usize::from(*expected == "created");
            }
            text => {
                assert_eq!(answer["type"], "error", "{} answered {answer}", request["op"]);
                assert!(support::message(&answer).contains(text), "{} answered {answer}, not {text:?}", request["op"]);
            }
        }
    }
    // Arguments that are not UTF-8 cannot be written in JSON but as lone surrogate escapes: a malformed frame.
    let token = &daemon.registration.token;
    let text = format!(
        r#"{{"token":"{token}","request":{{"op":"create_pty","program":"sh","args":["\udc80"],"cwd":"/","env":{{}},"group_id":"g","title":"t","cols":80,"rows":24}}}}"#
    );
    let mut stream = daemon.connect();
    send_text(&mut stream, &text);
    assert!(recv(&mut stream).is_none(), "a malformed frame is closed unanswered (F11)");
    assert_eq!(listed(&daemon), before + created, "no refused request started or removed a process");
    assert!(!dir.path().join("missing").exists() && !dir.path().join("relative").exists());
}

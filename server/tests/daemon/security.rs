//! What the daemon must never give away (issue 16): its token, in any log line or error text, and its own
//! descriptors (socket, lock, registration, record) to any child, PTY or pipe. Permissions of its files are in
//! `ownership::files_are_private`, the peer check in `ownership::another_users_connection_gets_no_answer`.

use crate::support;

use std::io::Write;

use serde_json::json;
use support::{Daemon, create_sh, recv, send};

#[test]
fn the_token_appears_in_no_log_line_and_no_error() {
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("daemon.log");
    let mut daemon = Daemon::start_logging_at(&log, Some("opencode_pty=trace"));
    let mut owner = daemon.own();
    let token = daemon.registration.token.clone();
    let mut answers = Vec::new();
    // Requests that succeed, fail, are refused for their token, or are not frames at all.
    answers.push(daemon.request(create_sh("echo hello; exit 0")));
    // Its exit is logged before `exited` is sent: waited for, so the line is there however loaded the machine
    // (an exit the stop overtakes is not logged).
    let (mut watching, attached) = daemon.subscribe(1, "watch", "observer");
    let (_, events) = support::read_subscription(&mut watching, &attached);
    assert!(events.iter().any(|event| event["type"] == "exited"), "{events:?}");
    answers.push(daemon.request(json!({"op": "get", "id": 999})));
    answers.push(daemon.request(json!({"op": "write", "id": 1, "attachment_id": null, "data_base64": "!!"})));
    for envelope in [
        json!({"token": format!("{token}x"), "request": {"op": "ping"}}),
        json!({"token": token, "token2": token, "request": {"op": "no such op"}}),
        json!({"token": token, "request": {"op": "own", "instance_id": token}}),
    ] {
        let mut stream = daemon.connect();
        send(&mut stream, &envelope);
        answers.extend(recv(&mut stream));
    }
    let mut stream = daemon.connect();
    let garbage = format!("{{\"token\":\"{token}\",");
    stream.write_all(&(garbage.len() as u32).to_be_bytes()).unwrap();
    stream.write_all(garbage.as_bytes()).unwrap();
    answers.extend(recv(&mut stream));
    send(&mut owner, &daemon.envelope(json!({"op": "prepare_handoff"})));
    answers.extend(recv(&mut owner));
    send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
    answers.extend(recv(&mut owner));
    assert!(daemon.wait_exit().success());
    let text = std::fs::read_to_string(&log).unwrap();
    // The lines this test caused, each of which must be there to look at: the start, the exit, the malformed
    // frame and the stop (other requests log nothing at this level).
    for caused in [
        "process started id=1",
        "child exited id=1",
        "closing a connection that sent a malformed frame",
        "process stopped with the daemon id=1",
    ] {
        assert!(text.contains(caused), "the log has no line with {caused:?}:\n{text}");
    }
    assert!(!text.contains(&token), "the token is in the log:\n{text}");
    for answer in &answers {
        assert!(!answer.to_string().contains(&token), "an answer repeats the token: {answer}");
    }
}

#[test]
fn children_hold_no_descriptor_of_the_daemon() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    // Each child lists where its descriptors lead; none may be the daemon's socket, lock or files.
    let list = "for f in /proc/$$/fd/*; do printf '%s -> %s\\n' \"$f\" \"$(readlink \"$f\")\"; done";
    let id = daemon.request(create_sh(list))["process"]["id"].as_u64().unwrap();
    let (mut stream, attached) = daemon.subscribe(id, "a", "observer");
    let (output, _) = support::read_subscription(&mut stream, &attached);
    let pty = String::from_utf8_lossy(&output).into_owned();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fds");
    let created = daemon.request(json!({"op": "create_pipe", "program": "/bin/sh", "args": ["-c", list], "cwd": "/",
        "env": {"PATH": "/usr/bin:/bin"}, "group_id": "g", "output_path": path.to_str().unwrap()}));
    let mut waiting = daemon.connect();
    send(&mut waiting, &daemon.envelope(json!({"op": "wait", "id": created["process"]["id"]})));
    assert_eq!(recv(&mut waiting).unwrap()["type"], "exited");
    let pipe = std::fs::read_to_string(&path).unwrap();
    for (kind, listing) in [("PTY", &pty), ("pipe", &pipe)] {
        assert!(listing.contains("/proc/"), "{kind} child listed its descriptors: {listing}");
        for forbidden in ["socket:", "service.json", ".lock", "service.groups", "opencode-pty-"] {
            assert!(!listing.contains(forbidden), "a {kind} child holds {forbidden}:\n{listing}");
        }
    }
}

#[test]
fn log_lines_name_their_connection_and_their_process() {
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("daemon.log");
    let mut daemon = Daemon::start_logging_at(&log, Some("opencode_pty=trace"));
    let mut owner = daemon.own();
    let created = daemon.request(create_sh("echo hello; exit 0"));
    let id = created["process"]["id"].as_u64().unwrap();
    let (mut watching, attached) = daemon.subscribe(id, "watch", "observer");
    let (_, events) = support::read_subscription(&mut watching, &attached);
    assert!(events.iter().any(|event| event["type"] == "exited"), "{events:?}");
    send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
    assert_eq!(recv(&mut owner).unwrap()["type"], "ok");
    assert!(daemon.wait_exit().success());
    let text = std::fs::read_to_string(&log).unwrap();
    let started = text.lines().find(|line| line.contains(&format!("process started id={id}")));
    let started = started.unwrap_or_else(|| panic!("no start line:\n{text}"));
    assert!(started.contains("connection{n=") && started.contains("op=\"create_pty\""), "{started}");
    // Each of the terminal's threads logs its start and end (at trace) inside its process's span. (Its writer
    // never started: the PTY took all input at once. `tests/threads.rs` starts one.)
    for role in ["actor", "reader"] {
        for said in ["thread started", "thread ended"] {
            let line = format!("process{{id={id} role={role}}}: {said}");
            assert!(text.contains(&line), "no line {line:?}:\n{text}");
        }
    }
}

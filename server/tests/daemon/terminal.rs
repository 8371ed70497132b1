//! PTYs over the socket, against the real binary: a subscription's replay, live output and `exited` in order,
//! every PTY request dispatched, and what a PTY child inherits (signal dispositions, the daemon's environment
//! overlaid with `env`, where a pipe child gets `env` alone).

use crate::support;

use opencode_pty_protocol::Frame;
use serde_json::{Value, json};
use support::{Daemon, create_sh, frames_until, message, read_subscription, recv, recv_frame, replay_of, send};

#[test]
fn a_subscription_streams_replay_then_live_output_then_exited_last() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let created = daemon.request(create_sh("printf first; read go; seq 1 2000; exit 3"));
    let id = created["process"]["id"].as_u64().unwrap();
    // Wait until the first output is in the replay: an observer sees it arrive.
    let (mut observer, attached) = daemon.subscribe(id, "o", "observer");
    frames_until(&mut observer, &mut replay_of(&attached), "first output", |text, _| text.starts_with("first"));
    drop(observer);
    let mut stream = daemon.connect();
    let subscribe = json!({"op": "subscribe", "id": id, "offset": 0, "attachment_id": "a", "role": "controller",
                           "takeover": false});
    send(&mut stream, &daemon.envelope(subscribe));
    let attached = recv(&mut stream).unwrap();
    assert_eq!(attached["type"], "attached", "{attached}");
    assert_eq!(attached["role"], "controller");
    let mut end = attached["end_offset"].as_u64().unwrap();
    assert!(end >= 5);
    use base64::Engine;
    let mut text =
        base64::engine::general_purpose::STANDARD.decode(attached["replay_base64"].as_str().unwrap()).unwrap();
    let input = json!({"op": "write", "id": id, "attachment_id": "a", "data_base64": "Cg=="});
    assert_eq!(daemon.request(input)["type"], "ok");
    let mut messages = Vec::new();
    loop {
        match recv_frame(&mut stream) {
            Some(Frame::Output { start, bytes }) => {
                assert_eq!(start, end, "contiguous offsets");
                end += bytes.len() as u64;
                text.extend_from_slice(&bytes);
            }
            Some(Frame::Control(map)) => messages.push(Value::Object(map)),
            None => break,
        }
    }
    let text = String::from_utf8_lossy(&text);
    assert!(text.starts_with("first"), "{text}");
    assert!(text.contains("1999\r\n2000"), "{text}");
    let last = messages.last().expect("events");
    assert_eq!(last["type"], "exited", "exited comes last: {messages:?}");
    assert_eq!(last["exit_code"], 3);
    assert_eq!(last["final_offset"], end);
}

#[test]
fn a_failed_subscribe_is_answered() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let (_, answer) = daemon.subscribe(5, "a", "observer");
    assert_eq!(message(&answer), "process 5 not found");
}

#[test]
fn every_pty_op_is_dispatched() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let id = daemon.request(create_sh("printf 'hello'; read line; echo \"got $line\"; sleep 60"))["process"]["id"]
        .as_u64()
        .unwrap();
    // `control` and `input` need a subscribed attachment; its output shows when the screen has changed (the
    // terminal takes output into its screen before it sends it to subscribers).
    let (mut subscription, attached) = daemon.subscribe(id, "a", "observer");
    assert_eq!(attached["type"], "attached", "{attached}");
    let mut output = replay_of(&attached);
    frames_until(&mut subscription, &mut output, "hello", |text, _| text == "hello");
    assert_eq!(daemon.request(json!({"op": "snapshot", "id": id}))["text"], "hello");
    // The last physical rows of the screen: `hello` is on the first of its 24.
    let rows = daemon.request(json!({"op": "read_rows", "id": id}));
    assert_eq!((rows["lines"].as_array().unwrap().len(), &rows["lines"][0]), (24, &json!("hello")), "{rows}");
    let replay = daemon.request(json!({"op": "replay", "id": id, "offset": 2}));
    assert_eq!((replay["type"].as_str(), replay["data_base64"].as_str()), (Some("replay"), Some("bGxv")));
    assert_eq!(daemon.request(json!({"op": "rename", "id": id, "title": "mine"}))["type"], "ok");
    let got = daemon.request(json!({"op": "get", "id": id}));
    assert_eq!(got["process"]["pty"]["title"], "mine");
    let resize = json!({"op": "resize", "id": id, "attachment_id": null, "cols": 90, "rows": 20});
    assert_eq!(daemon.request(resize)["type"], "ok");
    let control = json!({"op": "control", "id": id, "attachment_id": "a", "cols": 90, "rows": 20});
    assert_eq!(daemon.request(control)["type"], "ok");
    let input = json!({"op": "input", "id": id, "attachment_id": "a", "cols": 90, "rows": 20, "data_base64": "eW8K"});
    assert_eq!(daemon.request(input)["type"], "ok");
    frames_until(&mut subscription, &mut output, "the typed line echoed", |text, _| text.contains("got yo"));
    let snapshot = daemon.request(json!({"op": "snapshot", "id": id}));
    assert!(snapshot["text"].as_str().is_some_and(|text| text.contains("got yo")), "{snapshot}");
    let bad = json!({"op": "write", "id": id, "attachment_id": null, "data_base64": "eA=="});
    assert_eq!(message(&daemon.request(bad)), "terminal input requires the active controller attachment");
    let bad = json!({"op": "write", "id": id, "attachment_id": "a", "data_base64": "!!"});
    assert_eq!(message(&daemon.request(bad)), "data_base64 is not valid base64: Invalid symbol 33, offset 0.");
    for op in ["wait", "signal", "set_metadata"] {
        let request = json!({"op": op, "id": id, "signal": "SIGTERM", "metadata": {}});
        assert!(message(&daemon.request(request)).contains("only for pipe processes"), "{op}");
    }
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    assert_eq!(message(&daemon.request(json!({"op": "terminate", "id": id}))), format!("process {id} not found"));
}

#[test]
fn pty_children_get_default_dispositions_even_for_signals_the_daemon_inherited_ignored() {
    // Whoever started the daemon left SIGUSR1 and SIGWINCH ignored; `exec` keeps that unless the daemon resets it.
    let daemon = Daemon::start_ignoring(&["USR1", "WINCH"]);
    let _owner = daemon.own();
    let created = daemon
        .request(json!({"op": "create_pty", "program": "grep", "args": ["^SigIgn", "/proc/self/status"],
        "cwd": "/", "env": {}, "group_id": "g", "title": "t", "cols": 80, "rows": 24}));
    let id = created["process"]["id"].as_u64().unwrap();
    let (mut stream, attached) = daemon.subscribe(id, "a", "observer");
    let (output, _) = read_subscription(&mut stream, &attached);
    let text = String::from_utf8_lossy(&output);
    let mask = text.trim().strip_prefix("SigIgn:").map(str::trim).unwrap_or_else(|| panic!("{text:?}"));
    let ignored = u64::from_str_radix(mask, 16).unwrap();
    // glibc keeps its internal signals 32 and 33 to itself; everything else must be back to the default.
    assert_eq!(ignored & !((1u64 << 31) | (1u64 << 32)), 0, "the PTY child ignores {ignored:016x}");
}

#[test]
fn withheld_variables_never_reach_a_pty_child_unless_its_env_sets_them() {
    let vars = [("OPENCODE_PTY_TEST_SECRET", "hidden"), ("OPENCODE_PTY_TEST_KEPT", "kept")];
    let daemon = Daemon::start_with_env_and(&vars, &["--withhold-env", "OPENCODE_PTY_TEST_SECRET"]);
    let _owner = daemon.own();
    let script = "printf '[%s|%s]' \"${OPENCODE_PTY_TEST_SECRET-unset}\" \"$OPENCODE_PTY_TEST_KEPT\"";
    let run = |env: serde_json::Value| {
        let created = daemon.request(json!({"op": "create_pty", "program": "sh", "args": ["-c", script], "cwd": "/",
            "env": env, "group_id": "g", "title": "t", "cols": 80, "rows": 24}));
        assert_eq!(created["type"], "created", "{created}");
        let (mut stream, attached) = daemon.subscribe(created["process"]["id"].as_u64().unwrap(), "a", "observer");
        String::from_utf8_lossy(&read_subscription(&mut stream, &attached).0).into_owned()
    };
    assert_eq!(run(json!({})), "[unset|kept]", "withheld, and only that one");
    assert_eq!(run(json!({"OPENCODE_PTY_TEST_SECRET": "given"})), "[given|kept]", "a request may still set it");
    let mut command = std::process::Command::new(support::binary());
    command.args(["daemon", "--name", "x", "--withhold-env", "A=B"]);
    let refused = support::run_bounded(command, b"", support::WAIT);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && stderr.contains("\"A=B\" is not an environment variable name"), "{stderr}");
}

#[test]
fn pty_children_inherit_the_daemons_environment_overlaid_with_env_and_pipe_children_do_not() {
    const MARKER: &str = "OPENCODE_PTY_TEST_MARKER";
    let daemon = Daemon::start_with_env(&[(MARKER, "inherited")]);
    let _owner = daemon.own();
    let script = format!("printf '%s|%s' \"${MARKER}\" \"$OVERLAY\"");
    let created = daemon.request(json!({"op": "create_pty", "program": "sh", "args": ["-c", script], "cwd": "/",
        "env": {"OVERLAY": "given"}, "group_id": "g", "title": "t", "cols": 80, "rows": 24}));
    assert_eq!(created["type"], "created", "{created}");
    let id = created["process"]["id"].as_u64().unwrap();
    let (mut stream, attached) = daemon.subscribe(id, "a", "observer");
    assert_eq!(attached["type"], "attached", "{attached}");
    let (output, messages) = read_subscription(&mut stream, &attached);
    assert_eq!(messages.last().map(|m| m["type"].clone()), Some(json!("exited")), "{messages:?}");
    // Without the daemon's environment the marker would be empty; without the overlay, OVERLAY would be.
    assert_eq!(String::from_utf8_lossy(&output), "inherited|given");

    // A pipe child gets exactly `env`, so the same variable is absent there.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("env.log");
    let created = daemon.request(json!({"op": "create_pipe", "program": "/usr/bin/env", "args": [], "cwd": "/",
        "env": {"OVERLAY": "given"}, "group_id": "g", "output_path": path.to_str().unwrap()}));
    assert_eq!(created["type"], "created", "{created}");
    let mut waiting = daemon.connect();
    send(&mut waiting, &daemon.envelope(json!({"op": "wait", "id": created["process"]["id"]})));
    let exited = recv(&mut waiting).expect("exited");
    assert_eq!((exited["type"].as_str(), exited["exit_code"].as_u64()), (Some("exited"), Some(0)), "{exited}");
    let listed = std::fs::read_to_string(&path).unwrap();
    assert_eq!(listed, "OVERLAY=given\n", "no {MARKER} line");
}

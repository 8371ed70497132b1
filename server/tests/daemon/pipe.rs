//! Pipe processes over the socket, against the real binary (the one place for them; the in-process runtime's
//! pipe tests are `tests/inprocess/pipe.rs`): here the requests (create, list by mode, wait held, immediate,
//! several, terminated, daemon stopping; signal, set_metadata, subscribe without output: attached before the
//! exit, then `exited`), waiters and subscribers that closed their connections, and clear errors for the other
//! kind's requests; `spec` checks SPEC §8 one behaviour per test.

mod spec;

use crate::support;

use std::os::unix::net::UnixStream;
use std::path::Path;

use opencode_pty::limits::MAX_PIPE_WAITERS;
use opencode_pty_protocol::Frame;
use serde_json::{Value, json};
use support::{Daemon, create_sh, eventually, message, read_subscription, recv, recv_frame, send, threads_named};

fn create_pipe(dir: &Path, script: &str) -> Value {
    json!({"op": "create_pipe", "program": "/bin/sh", "args": ["-c", script], "cwd": "/", "env": {"PATH": "/usr/bin:/bin"},
           "group_id": "g", "output_path": dir.join("out.log").to_str().unwrap(), "metadata": {"k": 1}})
}

/// Sends `wait {id}` on a new connection and returns it, unanswered yet.
fn start_wait(daemon: &Daemon, id: u64) -> UnixStream {
    let mut stream = daemon.connect();
    send(&mut stream, &daemon.envelope(json!({"op": "wait", "id": id})));
    stream
}

/// The name prefix of the thread the daemon starts for each held `wait` or subscription (it watches the peer).
const PEER_THREAD: &str = "opencode-pty-peer";

/// A script that waits for `go` in `dir` to exist (the test creates it) before `then`.
fn after_go(dir: &Path, then: &str) -> String {
    format!("while [ ! -e {} ]; do sleep 0.02; done; {then}", dir.join("go").display())
}

#[test]
fn a_pipe_process_runs_into_its_file_and_wait_answers_its_exit() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    let created = daemon.request(create_pipe(out.path(), &after_go(out.path(), "echo one; echo two >&2; exit 5")));
    assert_eq!(created["type"], "created", "{created}");
    let process = &created["process"];
    assert_eq!(process["mode"], "pipe");
    assert!(process.get("pty").is_none(), "no pty key for a pipe process");
    assert_eq!(process["pipe"]["metadata"], json!({"k": 1}));
    let id = process["id"].as_u64().unwrap();
    // Two waiters on one process, both held while it runs, both get the answer.
    let (mut first, mut second) = (start_wait(&daemon, id), start_wait(&daemon, id));
    let pid = daemon.pid();
    eventually("both waits to be held", || (threads_named(pid, PEER_THREAD) == 2).then_some(()));
    let running = daemon.request(json!({"op": "get", "id": id}));
    assert_eq!(running["process"]["lifecycle"], json!({"status": "running"}), "still running while both wait");
    std::fs::write(out.path().join("go"), "").unwrap();
    for stream in [&mut first, &mut second] {
        let exited = recv(stream).unwrap();
        assert_eq!(exited["type"], "exited", "{exited}");
        assert_eq!((exited["exit_code"].as_u64(), exited["output_lines"].as_u64()), (Some(5), Some(2)));
        assert!(recv(stream).is_none(), "closed after the answer");
    }
    assert_eq!(std::fs::read_to_string(out.path().join("out.log")).unwrap(), "one\ntwo\n");
    // After the exit, wait is answered at once; the zombie stays listed until terminate.
    assert_eq!(recv(&mut start_wait(&daemon, id)).unwrap()["type"], "exited");
    let listed = daemon.request(json!({"op": "list", "mode": "pipe"}));
    assert_eq!(listed["processes"][0]["lifecycle"], json!({"status": "exited", "exit_code": 5}));
    assert_eq!(daemon.request(json!({"op": "list", "mode": "pty"}))["processes"], json!([]));
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    assert_eq!(message(&daemon.request(json!({"op": "get", "id": id}))), format!("process {id} not found"));
}

#[test]
fn wait_errors_terminated_and_daemon_stop() {
    let mut daemon = Daemon::start();
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    assert_eq!(message(&recv(&mut start_wait(&daemon, 42)).unwrap()), "process 42 not found");
    let pty = daemon.request(create_sh("sleep 60"))["process"]["id"].as_u64().unwrap();
    assert_eq!(
        message(&recv(&mut start_wait(&daemon, pty)).unwrap()),
        format!("process {pty} is a PTY; this request is only for pipe processes")
    );
    let id = daemon.request(create_pipe(out.path(), "sleep 60"))["process"]["id"].as_u64().unwrap();
    let mut waiting = start_wait(&daemon, id);
    // The daemon starts a peer-watching thread once it holds the wait: that is the event to wait for.
    let pid = daemon.pid();
    eventually("the wait to be held", || (threads_named(pid, "opencode-pty-peer") == 1).then_some(()));
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    assert_eq!(message(&recv(&mut waiting).unwrap()), "terminated");
    // A wait pending when the daemon stops is closed without a reply.
    let id = daemon.request(create_pipe(out.path(), "sleep 60"))["process"]["id"].as_u64().unwrap();
    eventually("the first wait to end", || (threads_named(pid, "opencode-pty-peer") == 0).then_some(()));
    let mut pending = start_wait(&daemon, id);
    eventually("the wait to be held", || (threads_named(pid, "opencode-pty-peer") == 1).then_some(()));
    assert_eq!(daemon.request(json!({"op": "shutdown"}))["type"], "ok");
    assert!(recv(&mut pending).is_none(), "closed without a reply");
    assert!(daemon.wait_exit().success());
}

#[test]
fn signal_keeps_the_process_and_wait_sees_the_signal() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    let id = daemon.request(create_pipe(out.path(), "echo ready; exec sleep 60"))["process"]["id"].as_u64().unwrap();
    eventually("the child to start", || {
        let got = daemon.request(json!({"op": "get", "id": id}));
        (got["process"]["output_tail"].as_u64()? > 0).then_some(())
    });
    let mut waiting = start_wait(&daemon, id);
    assert_eq!(daemon.request(json!({"op": "signal", "id": id, "signal": "SIGTERM"}))["type"], "ok");
    let exited = recv(&mut waiting).unwrap();
    assert_eq!((exited["exit_code"].clone(), exited["signal"].clone()), (Value::Null, json!("SIGTERM")));
    // Still listed, and signalling what is left is not an error.
    assert_eq!(daemon.request(json!({"op": "signal", "id": id, "signal": "SIGKILL"}))["type"], "ok");
    let got = daemon.request(json!({"op": "get", "id": id}));
    assert_eq!(got["process"]["lifecycle"], json!({"status": "exited", "exit_code": null, "signal": "SIGTERM"}));
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    let after = daemon.request(json!({"op": "signal", "id": id, "signal": "SIGTERM"}));
    assert_eq!(message(&after), format!("process {id} not found"));
}

#[test]
fn the_daemon_survives_signals_sent_to_a_childs_group() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    let created = daemon.request(create_pipe(out.path(), "exec sleep 60"));
    let pid = created["process"]["pid"].as_i64().unwrap() as i32;
    for signal in [nix::sys::signal::SIGINT, nix::sys::signal::SIGTERM] {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
    let id = created["process"]["id"].as_u64().unwrap();
    // Whichever the kernel delivers first kills the child; what matters is that the daemon is untouched.
    let exited = recv(&mut start_wait(&daemon, id)).unwrap();
    assert!(exited["signal"] == "SIGINT" || exited["signal"] == "SIGTERM", "{exited}");
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong", "the daemon is untouched");
}

#[test]
fn metadata_subscribe_and_wrong_kind_requests() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    let id = daemon.request(create_pipe(out.path(), "read x; echo done"))["process"]["id"].as_u64().unwrap();
    let set = json!({"op": "set_metadata", "id": id, "metadata": {"new": [1, 2]}});
    assert_eq!(daemon.request(set)["type"], "ok");
    assert_eq!(daemon.request(json!({"op": "get", "id": id}))["process"]["pipe"]["metadata"], json!({"new": [1, 2]}));
    let big = json!({"op": "set_metadata", "id": id, "metadata": {"x": "y".repeat(1024 * 1024)}});
    assert!(message(&daemon.request(big)).contains("limit"));
    for request in [
        json!({"op": "write", "id": id, "attachment_id": null, "data_base64": ""}),
        json!({"op": "resize", "id": id, "attachment_id": null, "cols": 80, "rows": 24}),
        json!({"op": "control", "id": id, "attachment_id": "a", "cols": 80, "rows": 24}),
        json!({"op": "input", "id": id, "attachment_id": "a", "cols": 80, "rows": 24, "data_base64": ""}),
        json!({"op": "snapshot", "id": id}),
        json!({"op": "read_rows", "id": id}),
        json!({"op": "rename", "id": id, "title": null}),
    ] {
        let refused = daemon.request(request.clone());
        assert_eq!(message(&refused), format!("process {id} is a pipe process; this request is only for PTYs"));
    }
    // A subscription carries offsets and events only: `attached` with an empty replay, then `exited`.
    let (mut stream, attached) = daemon.subscribe(id, "s", "observer");
    assert_eq!((attached["type"].as_str(), attached["replay_base64"].as_str()), (Some("attached"), Some("")));
    let replay = daemon.request(json!({"op": "replay", "id": id, "offset": 0}));
    assert_eq!((replay["type"].as_str(), replay["data_base64"].as_str()), (Some("replay"), Some("")));
    // The child reads stdin, which is /dev/null, so it finishes by itself.
    let mut frames = Vec::new();
    while let Some(frame) = recv_frame(&mut stream) {
        frames.push(frame);
    }
    assert_eq!(frames.len(), 1, "only `exited`: {frames:?}");
    let Frame::Control(exited) = &frames[0] else { panic!("output frame for a pipe process") };
    assert_eq!(exited["type"], "exited");
    assert_eq!(exited["final_offset"], 5);
}

#[test]
fn a_live_subscription_receives_exited_while_attached() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    let created = daemon.request(create_pipe(out.path(), &after_go(out.path(), "echo done; exit 2")));
    let id = created["process"]["id"].as_u64().unwrap();
    let (mut stream, attached) = daemon.subscribe(id, "s", "observer");
    assert_eq!(attached["type"], "attached", "{attached}");
    assert_eq!(attached["process"]["lifecycle"], json!({"status": "running"}), "attached before the exit");
    eventually("the subscription to be held", || (threads_named(daemon.pid(), PEER_THREAD) == 1).then_some(()));
    std::fs::write(out.path().join("go"), "").unwrap();
    let Some(Frame::Control(exited)) = recv_frame(&mut stream) else { panic!("no exited") };
    assert_eq!(exited["type"], "exited", "{exited:?}");
    assert_eq!((exited["exit_code"].as_u64(), exited["final_offset"].as_u64()), (Some(2), Some(5)));
    assert!(recv_frame(&mut stream).is_none(), "closed after exited");
}

#[test]
fn waiters_and_subscribers_that_closed_their_connections_never_fill_the_caps() {
    /// Waits held at once, then closed together; enough batches pass the cap.
    const BATCH: usize = 100;
    const CYCLES: usize = MAX_PIPE_WAITERS + 76;
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    let id = daemon.request(create_pipe(out.path(), "exec sleep 60"))["process"]["id"].as_u64().unwrap();
    let pid = daemon.pid();
    for _ in 0..CYCLES.div_ceil(BATCH) {
        let held: Vec<UnixStream> = (0..BATCH).map(|_| start_wait(&daemon, id)).collect();
        eventually("the batch of waits to be held", || (threads_named(pid, PEER_THREAD) == BATCH).then_some(()));
        drop(held);
        eventually("the closed waits to end", || (threads_named(pid, PEER_THREAD) == 0).then_some(()));
    }
    for _ in 0..CYCLES {
        let (stream, attached) = daemon.subscribe(id, "s", "observer");
        assert_eq!(attached["type"], "attached", "{attached}");
        drop(stream);
    }
    eventually("the closed subscriptions to end", || (threads_named(pid, PEER_THREAD) == 0).then_some(()));
    // Both still work: held, then answered.
    let mut waiting = start_wait(&daemon, id);
    let (mut subscribed, attached) = daemon.subscribe(id, "s", "observer");
    assert_eq!(attached["type"], "attached", "{attached}");
    eventually("the wait to be held", || (threads_named(pid, PEER_THREAD) == 2).then_some(()));
    assert_eq!(daemon.request(json!({"op": "signal", "id": id, "signal": "SIGTERM"}))["type"], "ok");
    assert_eq!(recv(&mut waiting).expect("an answer")["signal"], "SIGTERM");
    assert_eq!(recv(&mut subscribed).expect("exited")["signal"], "SIGTERM");
}

#[test]
fn list_then_wait_after_a_client_restart_never_misses_an_exit() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    let ids: Vec<u64> = (0..5)
        .map(|i| daemon.request(create_pipe(out.path(), &format!("exit {i}")))["process"]["id"].as_u64().unwrap())
        .collect();
    // A restarted client learns the processes from `list`, then waits for each: exits that happened in
    // between are answered at once.
    let listed = daemon.request(json!({"op": "list", "mode": "pipe"}));
    let listed: Vec<u64> = listed["processes"].as_array().unwrap().iter().map(|p| p["id"].as_u64().unwrap()).collect();
    assert_eq!(listed, ids, "creation order");
    for (i, id) in ids.iter().enumerate() {
        let exited = recv(&mut start_wait(&daemon, *id)).unwrap();
        assert_eq!(exited["exit_code"], i as u64, "{exited}");
    }
}

#[test]
fn exits_are_reported_even_when_the_daemon_was_started_with_sigchld_ignored() {
    // An ignored SIGCHLD would make the kernel reap children before the daemon could learn how they exited.
    let daemon = Daemon::start_ignoring(&["CHLD"]);
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    let id = daemon.request(create_pipe(out.path(), "exit 7"))["process"]["id"].as_u64().unwrap();
    assert_eq!(recv(&mut start_wait(&daemon, id)).unwrap()["exit_code"], 7);
    let pty = daemon.request(create_sh("exit 9"))["process"]["id"].as_u64().unwrap();
    let (mut observer, attached) = daemon.subscribe(pty, "o", "observer");
    let (_, events) = read_subscription(&mut observer, &attached);
    let exited = events.last().expect("events");
    assert_eq!((&exited["type"], &exited["exit_code"]), (&json!("exited"), &json!(9)), "{events:?}");
    let got = daemon.request(json!({"op": "get", "id": pty}));
    assert_eq!(got["process"]["lifecycle"], json!({"status": "exited", "exit_code": 9}));
}

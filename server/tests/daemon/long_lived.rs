//! What the daemon's deadlines must not cut, against the real binary: subscriptions (observer and controller, PTY
//! and pipe) and `wait` live until their process exits, their client leaves or the daemon stops, however long
//! that is, with output and input still flowing at the end. Most tests shorten the first-request deadline and
//! the idle wait of connection threads (hidden daemon options) so they stay fast; one holds a subscription and
//! a wait past the real ones.

use crate::support;

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use opencode_pty::limits::FIRST_REQUEST_TIMEOUT;
use opencode_pty::limits::IDLE_WORKER_LINGER;
use opencode_pty::limits::STALLED_WRITE_CHECK;
use opencode_pty_protocol::Frame;
use serde_json::{Value, json};
use support::{Daemon, create_sh, recv, recv_frame, send};

/// The shortened first-request deadline of most tests here.
const SHORT: Duration = Duration::from_millis(300);

/// How long the tests with the shortened deadline hold a connection: several times that deadline, and past the
/// one-second check of a blocked write.
const HOLD: Duration = Duration::from_millis(2500);

/// A daemon whose first-request deadline, and the time a finished connection thread waits for the next
/// connection, are [`SHORT`]: a held connection keeps its thread however long it lasts.
fn short_daemon() -> Daemon {
    let short = SHORT.as_millis().to_string();
    Daemon::start_with(&["--first-request-timeout-ms", &short, "--worker-linger-ms", &short])
}

/// The daemon's connection threads (the kernel keeps 15 bytes of `opencode-pty-conn`).
fn connection_threads(daemon: &Daemon) -> usize {
    let tasks = std::fs::read_dir(format!("/proc/{}/task", daemon.pid())).expect("the daemon's threads");
    let names = tasks.filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok());
    names.filter(|name| name.trim_end() == "opencode-pty-co").count()
}

/// A PTY child that prints `tick` every 100 ms in the background and echoes its input (`cat`) in the foreground.
const TICKING_CAT: &str = "(while :; do echo tick; sleep 0.1; done) & exec cat";

/// Reads a subscription until `done` holds for the output so far (replay included); returns the JSON events met
/// on the way. Panics if the subscription ends first.
fn read_until(stream: &mut UnixStream, output: &mut Vec<u8>, mut done: impl FnMut(&[u8]) -> bool) -> Vec<Value> {
    let mut events = Vec::new();
    while !done(output) {
        match recv_frame(stream) {
            Some(Frame::Output { bytes, .. }) => output.extend_from_slice(&bytes),
            Some(Frame::Control(map)) => {
                let event = Value::Object(map);
                assert_ne!(event["type"], "exited", "the process ended early: {event}");
                events.push(event);
            }
            None => panic!("the subscription was closed after {} output bytes", output.len()),
        }
    }
    events
}

/// Subscribes on `stream` (already connected) and returns the replayed output.
fn subscribe_on(daemon: &Daemon, stream: &mut UnixStream, id: u64, attachment: &str, role: &str) -> Vec<u8> {
    let subscribe =
        json!({"op": "subscribe", "id": id, "offset": 0, "attachment_id": attachment, "role": role, "takeover": false});
    send(stream, &daemon.envelope(subscribe));
    let attached = recv(stream).expect("an answer to subscribe");
    assert_eq!(attached["type"], "attached", "{attached}");
    replay_of(&attached)
}

fn replay_of(attached: &Value) -> Vec<u8> {
    let replay = attached["replay_base64"].as_str().expect("replay_base64");
    base64::engine::general_purpose::STANDARD.decode(replay).expect("base64")
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle.as_bytes())
}

fn create(daemon: &Daemon, request: Value) -> u64 {
    let created = daemon.request(request);
    assert_eq!(created["type"], "created", "{created}");
    created["process"]["id"].as_u64().expect("id")
}

/// Types `text` and a newline as attachment `attachment` and waits until every stream shows it.
fn type_and_see(
    daemon: &Daemon,
    id: u64,
    attachment: &str,
    text: &str,
    streams: &mut [(&mut UnixStream, &mut Vec<u8>)],
) {
    let data = base64::engine::general_purpose::STANDARD.encode(format!("{text}\n"));
    let write = json!({"op": "write", "id": id, "attachment_id": attachment, "data_base64": data});
    assert_eq!(daemon.request(write)["type"], "ok");
    for (stream, output) in streams.iter_mut() {
        read_until(stream, output, |seen| contains(seen, text));
    }
}

/// Terminates `id` and checks that every stream then ends (a terminated process's subscriptions close without
/// `exited`, SPEC N4).
fn terminate_and_see_closed(daemon: &Daemon, id: u64, streams: &mut [&mut UnixStream]) {
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    for stream in streams.iter_mut() {
        while let Some(frame) = recv_frame(stream) {
            if let Frame::Control(map) = frame {
                assert_ne!(map["type"], "error", "{map:?}");
            }
        }
    }
}

#[test]
fn an_observer_and_a_controller_outlive_the_first_request_deadline() {
    let daemon = short_daemon();
    let _owner = daemon.own();
    let id = create(&daemon, create_sh(TICKING_CAT));
    let (mut controller, mut observer) = (daemon.connect(), daemon.connect());
    let mut controller_output = subscribe_on(&daemon, &mut controller, id, "c", "controller");
    let mut observer_output = subscribe_on(&daemon, &mut observer, id, "o", "observer");
    let subscribed = Instant::now();
    for (stream, output) in [(&mut controller, &mut controller_output), (&mut observer, &mut observer_output)] {
        read_until(stream, output, |_| subscribed.elapsed() > HOLD);
    }
    assert!(subscribed.elapsed() > SHORT * 5);
    // Output still flows (it did all along), and so does input.
    type_and_see(
        &daemon,
        id,
        "c",
        "typed-after-the-deadline",
        &mut [(&mut controller, &mut controller_output), (&mut observer, &mut observer_output)],
    );
    terminate_and_see_closed(&daemon, id, &mut [&mut controller, &mut observer]);
    drop((controller, observer));
    // With only the owner channel connected (its thread stays), the connection threads that waited for more
    // exit once their wait is over, all but the one waiting to accept the next connection.
    support::eventually("idle connection threads to exit", || (connection_threads(&daemon) == 2).then_some(()));
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong", "and a later connection is served");
}

#[test]
fn a_subscription_sent_late_in_the_deadline_is_not_cut_when_it_ends() {
    let daemon = short_daemon();
    let _owner = daemon.own();
    let id = create(&daemon, create_sh(TICKING_CAT));
    let mut stream = daemon.connect();
    // Let most of the deadline pass before the request (what is tested is that time passing, not a wait for an
    // event): the deadline must end with the request, not go on counting from the accept.
    std::thread::sleep(SHORT * 4 / 5);
    let mut output = subscribe_on(&daemon, &mut stream, id, "c", "controller");
    let subscribed = Instant::now();
    read_until(&mut stream, &mut output, |_| subscribed.elapsed() > HOLD);
    type_and_see(&daemon, id, "c", "still-here", &mut [(&mut stream, &mut output)]);
    terminate_and_see_closed(&daemon, id, &mut [&mut stream]);
}

#[test]
fn a_quiet_pty_keeps_its_subscription() {
    let daemon = short_daemon();
    let _owner = daemon.own();
    // Nothing at all for several deadlines, then a line, then an echo of what is typed.
    let id = create(&daemon, create_sh("stty -echo; sleep 1.5; echo awake; exec cat"));
    let (mut controller, mut observer) = (daemon.connect(), daemon.connect());
    let mut controller_output = subscribe_on(&daemon, &mut controller, id, "c", "controller");
    let mut observer_output = subscribe_on(&daemon, &mut observer, id, "o", "observer");
    for (stream, output) in [(&mut controller, &mut controller_output), (&mut observer, &mut observer_output)] {
        read_until(stream, output, |seen| contains(seen, "awake"));
    }
    type_and_see(
        &daemon,
        id,
        "c",
        "typed-when-awake",
        &mut [(&mut controller, &mut controller_output), (&mut observer, &mut observer_output)],
    );
    terminate_and_see_closed(&daemon, id, &mut [&mut controller, &mut observer]);
}

fn create_pipe(dir: &Path, script: &str) -> Value {
    json!({"op": "create_pipe", "program": "/bin/sh", "args": ["-c", script], "cwd": "/",
           "env": {"PATH": "/usr/bin:/bin"}, "group_id": "g", "output_path": dir.join("out.log").to_str().unwrap(),
           "metadata": {}})
}

#[test]
fn a_pipe_subscription_and_a_wait_outlive_the_first_request_deadline() {
    let daemon = short_daemon();
    let _owner = daemon.own();
    let out = tempfile::tempdir().unwrap();
    let id = create(&daemon, create_pipe(out.path(), "sleep 1.5; echo done; exit 3"));
    let mut subscription = daemon.connect();
    assert!(subscribe_on(&daemon, &mut subscription, id, "p", "observer").is_empty(), "pipes replay no bytes");
    let mut wait = daemon.connect();
    send(&mut wait, &daemon.envelope(json!({"op": "wait", "id": id})));
    let answer = recv(&mut wait).expect("wait is answered when the process exits, not closed at a deadline");
    assert_eq!(answer["type"], "exited", "{answer}");
    assert_eq!(answer["exit_code"], 3);
    assert_eq!(answer["output_lines"], 1);
    let event = recv(&mut subscription).expect("the subscription gets the exit");
    assert_eq!(event["type"], "exited", "{event}");
    assert_eq!(event["exit_code"], 3);
}

#[test]
fn subscribers_that_stop_reading_for_a_while_are_not_cut() {
    let daemon = short_daemon();
    let _owner = daemon.own();
    // 256 KiB at once: far less than an observer may fall behind (4 MiB), far more than the socket buffers.
    let id = create(
        &daemon,
        create_sh("stty -echo; head -c 262144 /dev/zero | tr '\\0' x; echo; echo burst-done; exec cat"),
    );
    let (mut controller, mut observer) = (daemon.connect(), daemon.connect());
    let mut controller_output = subscribe_on(&daemon, &mut controller, id, "c", "controller");
    let mut observer_output = subscribe_on(&daemon, &mut observer, id, "o", "observer");
    // Neither reads for longer than the deadline and the blocked-write check (what is tested is the pause).
    assert!(HOLD > STALLED_WRITE_CHECK * 2 && HOLD > SHORT * 5);
    std::thread::sleep(HOLD);
    for (stream, output) in [(&mut controller, &mut controller_output), (&mut observer, &mut observer_output)] {
        read_until(stream, output, |seen| contains(seen, "burst-done"));
        assert_eq!(output.iter().filter(|&&byte| byte == b'x').count(), 262_144, "nothing lost");
    }
    type_and_see(
        &daemon,
        id,
        "c",
        "typed-after-the-pause",
        &mut [(&mut controller, &mut controller_output), (&mut observer, &mut observer_output)],
    );
    terminate_and_see_closed(&daemon, id, &mut [&mut controller, &mut observer]);
}

#[test]
fn a_subscription_and_a_wait_outlive_the_real_deadline() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let hold = FIRST_REQUEST_TIMEOUT.max(IDLE_WORKER_LINGER) + Duration::from_secs(5);
    let out = tempfile::tempdir().unwrap();
    let pipe = create(&daemon, create_pipe(out.path(), &format!("sleep {}; exit 4", hold.as_secs())));
    let pty = create(&daemon, create_sh("(while :; do echo tick; sleep 1; done) & exec cat"));
    let mut wait = daemon.connect();
    send(&mut wait, &daemon.envelope(json!({"op": "wait", "id": pipe})));
    let waiter = std::thread::spawn(move || recv(&mut wait));
    let mut stream = daemon.connect();
    let mut output = subscribe_on(&daemon, &mut stream, pty, "c", "controller");
    let subscribed = Instant::now();
    read_until(&mut stream, &mut output, |_| subscribed.elapsed() > hold);
    let answer = waiter.join().expect("the wait thread").expect("wait answered, not closed");
    assert_eq!(answer["type"], "exited", "{answer}");
    assert_eq!(answer["exit_code"], 4);
    type_and_see(&daemon, pty, "c", "typed-after-fifteen-seconds", &mut [(&mut stream, &mut output)]);
    terminate_and_see_closed(&daemon, pty, &mut [&mut stream]);
}

//! Faults from outside (issue 16): an owner process killed outright, the daemon frozen for ten seconds, children
//! that ignore signals, close their terminal or exit with input queued, the runtime directory deleted, and
//! clients that vanish half-way through a frame. Each ends in a daemon that still serves, or stops cleanly.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;
use support::{Daemon, KillOnDrop, create_sh, eventually, process_exists, recv, send, wait_dead};

/// How long the daemon is kept stopped (the figure: longer than the first-request deadline, so a
/// connection made meanwhile meets it on waking).
const FROZEN: Duration = Duration::from_secs(10);

/// Claims the daemon from a separate Python process, says `owned` on stdout once answered, then holds the
/// owner channel until it is killed.
const PYTHON_OWNER: &str = "import json, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
body = json.dumps({'token': sys.argv[2], 'request': {'op': 'own', 'instance_id': sys.argv[3]}}).encode()
s.sendall(struct.pack('>I', len(body)) + body)
n = struct.unpack('>I', s.recv(4))[0]
print(json.loads(s.recv(n))['type'], flush=True)
time.sleep(600)
";

fn signal(pid: u32, signal: Signal) {
    kill(Pid::from_raw(pid as i32), signal).expect("signal");
}

/// Whether every thread of process `pid` is stopped (state `T`): a SIGSTOP takes effect only once each thread
/// next runs, which on a loaded machine is not at once.
fn all_stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks.flatten().all(|task| {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let state = stat.rfind(')').and_then(|end| stat[end + 1..].split_whitespace().next());
        state == Some("T")
    })
}

fn pid_of(created: &serde_json::Value) -> u32 {
    created["process"]["pid"].as_u64().expect("a pid") as u32
}

/// The daemon's open descriptors.
fn open_fds(daemon: &Daemon) -> usize {
    std::fs::read_dir(format!("/proc/{}/fd", daemon.pid())).expect("/proc/PID/fd").count()
}

#[test]
fn an_owner_process_killed_outright_stops_the_daemon_and_everything_it_ran() {
    support::require_python3("claim the daemon from a process the test can kill");
    let mut daemon = Daemon::start();
    let registration = &daemon.registration;
    let mut owner = Command::new("python3")
        .args(["-c", PYTHON_OWNER, &registration.socket, &registration.token, &registration.instance_id])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let _guard = KillOnDrop(owner.id());
    let mut line = String::new();
    BufReader::new(owner.stdout.take().unwrap()).read_line(&mut line).expect("the owner's answer");
    assert_eq!(line.trim(), "owned");
    let child = pid_of(&daemon.request(create_sh("sleep 600")));
    signal(owner.id(), Signal::SIGKILL);
    let _ = owner.wait();
    assert!(daemon.wait_exit().success(), "losing its owner is an orderly stop");
    assert!(!process_exists(child), "its child is gone");
    assert!(!daemon.dir().exists() && !std::path::Path::new(&daemon.registration.socket).exists());
}

#[test]
fn a_daemon_frozen_for_ten_seconds_carries_on_where_it_was() {
    let mut daemon = Daemon::start();
    let mut owner = daemon.own();
    let id = daemon.request(create_sh("stty -echo; while read line; do echo \"got $line\"; done"))["process"]["id"]
        .as_u64()
        .unwrap();
    let (mut stream, attached) = daemon.subscribe(id, "watch", "observer");
    assert_eq!(attached["type"], "attached");
    let pid = daemon.pid();
    signal(pid, Signal::SIGSTOP);
    // Frozen in every thread before the client connects: a connection the daemon still accepted would have its
    // first-request deadline run out during the freeze.
    eventually("every thread of the daemon to stop", || all_stopped(pid).then_some(()));
    // A client that connects while the daemon is frozen is served once it wakes.
    let registration = daemon.registration.clone();
    let waiting = std::thread::spawn(move || {
        let mut stream = std::os::unix::net::UnixStream::connect(&registration.socket).expect("connect");
        send(&mut stream, &json!({"token": registration.token, "request": {"op": "ping"}}));
        recv(&mut stream)
    });
    std::thread::sleep(FROZEN);
    signal(pid, Signal::SIGCONT);
    assert_eq!(waiting.join().unwrap().expect("an answer")["type"], "pong");
    let written = daemon.request(json!({"op": "write", "id": id, "attachment_id": null, "data_base64": "YWZ0ZXIK"}));
    assert_eq!(written["type"], "ok", "{written}");
    let mut output = support::replay_of(&attached);
    support::frames_until(&mut stream, &mut output, "the subscription held across the freeze", |text, _| {
        text.contains("got after")
    });
    send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
    assert_eq!(recv(&mut owner).unwrap()["type"], "ok");
    assert!(daemon.wait_exit().success());
}

#[test]
fn terminate_ends_children_that_ignore_sigterm_and_sighup_at_once() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let stubborn = "trap '' TERM HUP INT; sleep 600 & while :; do sleep 1; done";
    let pty = daemon.request(create_sh(stubborn));
    let dir = tempfile::tempdir().unwrap();
    let pipe = daemon.request(json!({"op": "create_pipe", "program": "/bin/sh", "args": ["-c", stubborn],
        "cwd": "/", "env": {"PATH": "/usr/bin:/bin"}, "group_id": "g",
        "output_path": dir.path().join("out").to_str().unwrap()}));
    for created in [pty, pipe] {
        assert_eq!(created["type"], "created", "{created}");
        let answer = daemon.request(json!({"op": "terminate", "id": created["process"]["id"]}));
        assert_eq!(answer["type"], "ok", "{answer}");
        wait_dead("the stubborn child", pid_of(&created));
    }
}

#[test]
fn a_child_that_closes_its_terminal_but_keeps_running_stays_listed_until_terminate() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let created = daemon.request(create_sh("echo closing; exec </dev/null >/dev/null 2>&1; sleep 600"));
    let id = created["process"]["id"].as_u64().unwrap();
    let (mut stream, attached) = daemon.subscribe(id, "watch", "observer");
    let mut output = support::replay_of(&attached);
    support::frames_until(&mut stream, &mut output, "the child's last words", |text, _| text.contains("closing"));
    let info = daemon.request(json!({"op": "get", "id": id}));
    assert_eq!(info["process"]["exited_at"], serde_json::Value::Null, "still running: {info}");
    assert!(process_exists(pid_of(&created)));
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    wait_dead("the child without a terminal", pid_of(&created));
}

#[test]
fn a_child_that_exits_with_a_large_write_queued_is_reported_and_the_queue_dropped() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("go");
    // Reads nothing until told to exit, so what is written piles up in the PTY and the daemon's queue.
    let script = format!("stty raw -echo; while [ ! -e {} ]; do sleep 0.05; done; exit 3", flag.display());
    let id = daemon.request(create_sh(&script))["process"]["id"].as_u64().unwrap();
    let (mut stream, attached) = daemon.subscribe(id, "watch", "observer");
    let chunk = base64_of(&vec![b'x'; 512 * 1024]);
    let mut accepted = 0;
    for _ in 0..16 {
        let answer = daemon.request(json!({"op": "write", "id": id, "attachment_id": null, "data_base64": chunk}));
        match answer["type"].as_str() {
            Some("ok") => accepted += 1,
            _ => {
                assert!(support::message(&answer).contains("terminal input queue is full"), "{answer}");
                break;
            }
        }
    }
    assert!(accepted >= 2, "megabytes were queued ({accepted} half-MiB writes)");
    std::fs::write(&flag, b"").unwrap();
    let (_, messages) = support::read_subscription(&mut stream, &attached);
    let exited = messages.last().expect("events");
    assert_eq!((exited["type"].as_str(), exited["exit_code"].as_u64()), (Some("exited"), Some(3)), "{messages:?}");
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn a_deleted_runtime_directory_is_recreated_and_the_daemon_stops_cleanly() {
    let mut daemon = Daemon::start();
    let mut owner = daemon.own();
    std::fs::remove_dir_all(daemon.dir()).expect("delete the runtime directory");
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong", "the socket lives elsewhere");
    // Until the watch recreates the directory, a create is refused (its group cannot be recorded), never
    // started unprotected.
    let early = daemon.request(create_sh("sleep 600"));
    if early["type"] != "created" {
        assert!(support::message(&early).starts_with("process not started: the daemon cannot record"), "{early}");
    }
    let registration = daemon.dir().join("service.json");
    eventually("the watch to recreate the registration", || {
        let found: opencode_pty_protocol::Registration =
            serde_json::from_slice(&std::fs::read(&registration).ok()?).ok()?;
        (found == daemon.registration).then_some(())
    });
    let created = daemon.request(create_sh("sleep 600"));
    assert_eq!(created["type"], "created", "{created}");
    send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
    assert_eq!(recv(&mut owner).unwrap()["type"], "ok");
    assert!(daemon.wait_exit().success(), "a directory deleted once is not a failure to stop");
    assert!(!process_exists(pid_of(&created)));
    assert!(!daemon.dir().exists(), "the recreated directory is given back like the first");
    assert!(!std::path::Path::new(&daemon.registration.socket).exists(), "the socket is removed");
}

#[test]
fn clients_that_vanish_half_way_through_a_frame_leave_nothing_behind() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong");
    let before = open_fds(&daemon);
    for n in 0..200 {
        let mut stream = daemon.connect();
        // Half a header, or a whole header and part of the payload it announces.
        let partial: &[u8] = if n % 2 == 0 { &[0, 0] } else { &[0, 0, 0, 100, b'{', b'"'] };
        stream.write_all(partial).unwrap();
    }
    eventually("the daemon to close every abandoned connection", || (open_fds(&daemon) <= before).then_some(()));
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong");
}

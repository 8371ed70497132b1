//! `status --json` and `list --json` against a real daemon: one JSON document each, in the protocol's own shapes
//! (a `pong` answer, a `processes` answer) that the generated protocol types read, with the members the daemon
//! itself sends; without `--json` the same commands print their lines for people as before.

use crate::support;

use std::process::{Command, Output};

use opencode_pty_protocol::{Mode, ProcessInfo, Response};
use serde_json::{Value, json};
use support::{Daemon, WAIT, binary, create_sh, run_bounded};

/// Runs the binary with `args` plus the daemon's location, killed if it outlives twice [`WAIT`]; fails the test
/// unless it succeeds.
fn run_at(daemon: &Daemon, args: &[&str]) -> Output {
    let mut command = Command::new(binary());
    command.args(args).args(["--name", &daemon.name, "--runtime-dir"]).arg(daemon.root.path());
    let output = run_bounded(command, b"", WAIT * 2);
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// `stdout` as one JSON document on one line.
fn one_document(stdout: &[u8]) -> Value {
    let text = std::str::from_utf8(stdout).expect("UTF-8");
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    serde_json::from_str(text).unwrap_or_else(|error| panic!("not JSON ({error}): {text}"))
}

/// A daemon running one terminal (`exec sleep 600`) and one pipe process (`sleep 600`), with the owner guard
/// and the pipe's output directory; the ids of the two.
fn daemon_with_two_processes() -> (Daemon, std::os::unix::net::UnixStream, tempfile::TempDir, u64, u64) {
    let daemon = Daemon::start();
    let owner = daemon.own();
    let pty = daemon.request(create_sh("exec sleep 600"))["process"]["id"].as_u64().unwrap();
    let out = tempfile::tempdir().unwrap();
    let pipe = daemon.request(json!({"op": "create_pipe", "program": "/bin/sleep", "args": ["600"], "cwd": "/",
        "env": {}, "group_id": "json", "output_path": out.path().join("out").to_str().unwrap()}));
    let pipe = pipe["process"]["id"].as_u64().unwrap_or_else(|| panic!("{pipe}"));
    (daemon, owner, out, pty, pipe)
}

#[test]
fn status_json_is_the_daemons_pong_with_its_socket_directory_and_counts() {
    let (daemon, _owner, _out, _, _) = daemon_with_two_processes();
    let printed = one_document(&run_at(&daemon, &["status", "--json"]).stdout);
    // Read by the protocol's own type as the answer to `ping` ...
    let Ok(Response::Pong { instance_id, pid, protocol, features }) = serde_json::from_value(printed.clone()) else {
        panic!("not a pong: {printed}");
    };
    assert_eq!((instance_id.as_str(), pid, protocol), (daemon.registration.instance_id.as_str(), daemon.pid(), 8));
    assert_eq!(features, daemon.registration.features);
    // ... member for member what the daemon answers to `ping` itself.
    let pong = daemon.request(json!({"op": "ping"}));
    assert_eq!(pong["type"], "pong");
    for (member, value) in pong.as_object().unwrap() {
        assert_eq!(&printed[member], value, "{member} in {printed}");
    }
    // What `status` asked besides.
    assert_eq!(printed["socket"], daemon.registration.socket.as_str(), "{printed}");
    assert_eq!(printed["runtime_dir"], daemon.dir().to_str().unwrap(), "{printed}");
    assert_eq!(printed["processes"], json!({"pty": 1, "pipe": 1}), "{printed}");
}

#[test]
fn list_json_is_one_processes_answer_with_the_terminals_then_the_pipes() {
    let (daemon, _owner, _out, pty, pipe) = daemon_with_two_processes();
    let printed = one_document(&run_at(&daemon, &["list", "--json"]).stdout);
    assert_eq!(printed["type"], "processes", "{printed}");
    assert!(printed.get("next").is_none(), "the whole listing, not a page: {printed}");
    let Ok(Response::Processes { processes, next: None }) = serde_json::from_value(printed.clone()) else {
        panic!("not a processes answer: {printed}");
    };
    let ids: Vec<(u64, Mode)> = processes.iter().map(|process| (process.id, process.mode)).collect();
    assert_eq!(ids, [(pty, Mode::Pty), (pipe, Mode::Pipe)]);
    // The pipe process as the daemon's own `list` of pipes describes it, member for member.
    let pipes = daemon.request(json!({"op": "list", "mode": "pipe"}));
    assert_eq!(pipes["type"], "processes", "{pipes}");
    assert_eq!(printed["processes"][1], pipes["processes"][0]);
    // The terminal with what it waits for, when the daemon tells it (SPEC §6.4): `input` is asked for.
    let terminals = daemon.request(json!({"op": "list", "mode": "pty"}));
    let terminal: ProcessInfo = serde_json::from_value(terminals["processes"][0].clone()).unwrap();
    let printed_terminal = &processes[0];
    assert_eq!((&printed_terminal.command, &printed_terminal.cwd), (&terminal.command, &terminal.cwd));
    if daemon.registration.features.iter().any(|feature| feature == "input") {
        assert!(printed["processes"][0]["pty"].get("input").is_some(), "{printed}");
    }
}

#[test]
fn without_json_status_and_list_print_their_lines_for_people() {
    let (daemon, _owner, _out, _, _) = daemon_with_two_processes();
    let status = String::from_utf8(run_at(&daemon, &["status"]).stdout).unwrap();
    let lines: Vec<&str> = status.lines().collect();
    let first = format!("daemon pid {} instance {} (protocol 8)", daemon.pid(), daemon.registration.instance_id);
    let directory = format!("runtime directory {}", daemon.dir().display());
    let socket = format!("socket {}", daemon.registration.socket);
    assert_eq!(lines, [first.as_str(), &directory, &socket, "1 pty and 1 pipe processes"], "{status}");

    let list = String::from_utf8(run_at(&daemon, &["list"]).stdout).unwrap();
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two processes: {list}");
    assert_eq!(lines[0], "  ID  MODE  PID          SIZE       STATE        OUTPUT                COMMAND", "{list}");
    assert!(lines[1].trim_start().starts_with("1  pty ") && lines[1].contains("sleep 600"), "{list}");
    assert!(lines[2].trim_start().starts_with("2  pipe ") && lines[2].contains("/bin/sleep 600"), "{list}");
    assert!(serde_json::from_str::<Value>(&list).is_err() && serde_json::from_str::<Value>(&status).is_err());
}

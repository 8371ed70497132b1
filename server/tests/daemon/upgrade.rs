//! The in-place upgrade through the real binary (issue 30): the owner's `upgrade` to a private copy of this
//! build while terminals print and a pipe process writes (same daemon pid and child pids, subscribers that
//! reconnect from their last offset get exactly the bytes that follow, a quiet terminal's screen unchanged, exits
//! during the upgrade reported, the owner still the owner and able to shut everything down), the guardian handed
//! over, a prepared ticket and the controller kept; `screen` compares screens (checkpoints replayed into fresh
//! emulators), `control` the kept controller's input, `run` a shell's command across an upgrade, `fallback`
//! the upgrades that do not happen, `soak` a hundred in a row, `compressed` a terminal whose memory is compressed.

mod compressed;
mod control;
mod fallback;
mod run;
mod screen;
mod soak;

use crate::support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Instant;

use base64::Engine as _;
use opencode_pty_protocol::{Frame, Registration};
use opencode_pty_vt::Color;
use screen::Screen;
use serde_json::{Value, json};
use support::{Daemon, WAIT, binary, create_sh, eventually, message, recv, recv_frame, send, wait_dead};

/// Lines each printing terminal must print after the upgrade answered before its follower is done.
const LINES_AFTER: u64 = 2_000;

/// A terminal that prints `1`, `2`, ... for ever, as fast as its controller reads.
const FAST: &str = "i=0; while :; do i=$((i+1)); echo $i; done";

/// The same, pausing 10 ms every hundred lines.
const STEADY: &str = "i=0; while :; do i=$((i+1)); echo $i; case $i in *00) sleep 0.01;; esac; done";

/// A terminal that shows history, a title, a mode, styles and a wide character, then waits.
const QUIET: &str = "seq 1 40; printf '\\033]2;quiet\\007\\033[?2004hhello \\033[4;38;5;208mwide \\344\\270\\226\\033[0m\\r\\n\
                     world \\033[1;31;48;2;1;2;3mred'; exec sleep 600";

/// A child that exits with `code` once it is sent SIGUSR1.
fn exits_on_usr1(code: u8) -> String {
    format!("trap 'exit {code}' USR1; while :; do sleep 0.02; done")
}

/// A private copy of the daemon binary (mode 0755 in `dir`, ours), made by `cp`: no descriptor of this test
/// process ever holds it open for writing, so no fork of another test can make it busy (ETXTBSY).
fn private_copy(dir: &Path) -> PathBuf {
    let copy = dir.join("opencode-pty");
    let status = Command::new("cp").arg(binary()).arg(&copy).status().expect("run cp");
    assert!(status.success(), "cp the binary: {status}");
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    copy
}

/// A private executable shell script `name` in `dir` with `body`, written by `sh` (see [`private_copy`]).
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    let status = Command::new("sh")
        .arg("-c")
        .arg("printf '%s\\n' \"$2\" > \"$1\" && chmod 0755 \"$1\"")
        .arg("sh")
        .arg(&path)
        .arg(format!("#!/bin/sh\n{body}"))
        .status()
        .expect("run sh");
    assert!(status.success(), "write {}", path.display());
    path
}

/// Sends `upgrade` (to `program`, or the daemon's own executable) on the owner channel and returns the answer.
fn upgrade(daemon: &Daemon, owner: &mut UnixStream, program: Option<&Path>) -> Value {
    let request = match program {
        Some(program) => json!({"op": "upgrade", "program": program}),
        None => json!({"op": "upgrade"}),
    };
    send(owner, &daemon.envelope(request));
    recv(owner).expect("an answer to upgrade")
}

/// Creates a terminal running `sh -c script`; its id and its child's pid.
fn create(daemon: &Daemon, script: &str) -> (u64, u32) {
    let created = daemon.request(create_sh(script));
    assert_eq!(created["type"], "created", "{created}");
    let process = &created["process"];
    (process["id"].as_u64().unwrap(), process["pid"].as_u64().unwrap() as u32)
}

/// Creates a pipe process running `sh -c script` writing into `output`; its id and its child's pid.
fn create_pipe(daemon: &Daemon, output: &Path, script: &str) -> (u64, u32) {
    let created = daemon.request(json!({"op": "create_pipe", "program": "/bin/sh", "args": ["-c", script],
        "cwd": "/", "env": {"PATH": "/usr/bin:/bin"}, "group_id": "g", "output_path": output, "metadata": {}}));
    assert_eq!(created["type"], "created", "{created}");
    let process = &created["process"];
    (process["id"].as_u64().unwrap(), process["pid"].as_u64().unwrap() as u32)
}

/// Every process's child pid, by id.
fn pids(daemon: &Daemon) -> BTreeMap<u64, u64> {
    let mut pids = BTreeMap::new();
    for mode in ["pty", "pipe"] {
        let list = daemon.request(json!({"op": "list", "mode": mode}));
        let processes = list["processes"].as_array().unwrap_or_else(|| panic!("{list}"));
        pids.extend(processes.iter().map(|p| (p["id"].as_u64().unwrap(), p["pid"].as_u64().unwrap())));
    }
    pids
}

/// The registration the daemon's runtime directory holds now.
fn registration(daemon: &Daemon) -> Registration {
    let text = std::fs::read(daemon.dir().join(opencode_pty_protocol::REGISTRATION_FILE)).unwrap();
    serde_json::from_slice(&text).unwrap()
}

/// The pids of `pid`'s children (its guardian and its processes' leaders).
fn children(pid: u32) -> Vec<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| text.split_whitespace().map(|pid| pid.parse().unwrap()).collect::<Vec<u32>>())
        .collect()
}

/// Checks a stream of `1\r\n2\r\n...` as it arrives: every number once, in order, from 1.
#[derive(Debug, Default)]
struct Count {
    /// The last number seen whole.
    last: u64,
    partial: Vec<u8>,
}

impl Count {
    fn feed(&mut self, bytes: &[u8], newline: &[u8]) {
        self.partial.extend_from_slice(bytes);
        while let Some(at) = self.partial.windows(newline.len()).position(|w| w == newline) {
            let line = String::from_utf8_lossy(&self.partial[..at]).into_owned();
            assert_eq!(line, (self.last + 1).to_string(), "after line {} came {line:?}", self.last);
            self.last += 1;
            self.partial.drain(..at + newline.len());
        }
        assert!(self.partial.len() < 32, "no line end in {:?}", String::from_utf8_lossy(&self.partial));
    }
}

/// What a follower of a printing terminal saw.
#[derive(Debug)]
struct Followed {
    /// How many times its connection ended and it subscribed again from its offset.
    resumed: usize,
    /// The last line it saw.
    lines: u64,
}

/// Follows terminal `id` as its controller `attachment` from offset 0, checking every output frame starts
/// where the last ended and the lines count on; when its connection ends, subscribes again from the offset it
/// reached, as a client does across an upgrade. Once `upgraded` is set and it has subscribed again, goes on for
/// [`LINES_AFTER`] lines (not before: the old connection may still hold more than that, written before it closed).
fn follow(
    daemon: &Daemon,
    id: u64,
    attachment: &str,
    upgraded: Arc<AtomicBool>,
    ready: Arc<AtomicBool>,
) -> JoinHandle<Followed> {
    let (socket, token) = (daemon.registration.socket.clone(), daemon.registration.token.clone());
    let attachment = attachment.to_owned();
    std::thread::spawn(move || {
        let deadline = Instant::now() + WAIT * 3;
        let (mut offset, mut count, mut resumed, mut until) = (0u64, Count::default(), 0, None);
        loop {
            assert!(Instant::now() < deadline, "terminal {id}: not done in time ({count:?})");
            let mut stream = UnixStream::connect(&socket).expect("connect: the socket is kept across an upgrade");
            stream.set_read_timeout(Some(WAIT)).unwrap();
            let subscribe = json!({"op": "subscribe", "id": id, "offset": offset, "attachment_id": attachment,
                                   "role": "controller", "takeover": false});
            send(&mut stream, &json!({"token": token, "request": subscribe}));
            let attached = recv(&mut stream).expect("an answer to subscribe");
            assert_eq!(attached["type"], "attached", "terminal {id} from {offset}: {attached}");
            assert_eq!(attached["role"], "controller", "{attached}");
            assert_eq!(
                (attached["available_offset"].as_u64(), attached["truncated"].as_bool()),
                (Some(offset), Some(false))
            );
            let replay = base64::engine::general_purpose::STANDARD.decode(attached["replay_base64"].as_str().unwrap());
            let replay = replay.unwrap();
            count.feed(&replay, b"\r\n");
            offset += replay.len() as u64;
            assert_eq!(attached["end_offset"].as_u64(), Some(offset));
            while let Some(frame) = recv_frame(&mut stream) {
                assert!(Instant::now() < deadline, "terminal {id}: not done in time ({count:?})");
                match frame {
                    Frame::Output { start, bytes } => {
                        assert_eq!(start, offset, "terminal {id}: output frames are contiguous");
                        count.feed(&bytes, b"\r\n");
                        offset += bytes.len() as u64;
                    }
                    // Its own control at the first attach, the foreground process (`sleep`) coming and going.
                    Frame::Control(event) => assert_ne!(event["type"], "exited", "terminal {id}: {event:?}"),
                }
                if count.last >= 500 {
                    ready.store(true, Ordering::Release);
                }
                if resumed > 0 && upgraded.load(Ordering::Acquire) {
                    let until = *until.get_or_insert(count.last + LINES_AFTER);
                    if count.last >= until {
                        return Followed { resumed, lines: count.last };
                    }
                }
            }
            resumed += 1;
        }
    })
}

#[test]
fn an_upgrade_to_a_copy_of_the_same_build_keeps_every_process_and_byte() {
    let mut daemon = Daemon::start();
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let program = private_copy(dir.path());
    let before = registration(&daemon);

    let printers = [create(&daemon, FAST), create(&daemon, STEADY), create(&daemon, STEADY)];
    let (quiet, _) = create(&daemon, QUIET);
    let (exiting_pty, exiting_pty_pid) = create(&daemon, &exits_on_usr1(7));
    let output = dir.path().join("pipe.log");
    let (writer, _) = create_pipe(&daemon, &output, STEADY);
    let (exiting_pipe, exiting_pipe_pid) = create_pipe(&daemon, &dir.path().join("exiting.log"), &exits_on_usr1(9));

    // The quiet terminal's screen, once all of it is there.
    let (mut watcher, attached) = daemon.subscribe(quiet, "watcher", "observer");
    let mut seen = support::replay_of(&attached);
    support::frames_until(&mut watcher, &mut seen, "the quiet terminal's output", |text, _| text.ends_with("red"));
    eventually("the quiet terminal's `sleep`", || {
        let got = daemon.request(json!({"op": "get", "id": quiet}));
        (got["process"]["pty"]["foreground_process"] == "sleep").then_some(())
    });
    let shown = Screen::of(&daemon, quiet);
    let replayed = shown.replayed();
    assert!(replayed.scrollback_rows() > 0 && shown.text.ends_with("world red"), "{shown:?}");
    let red = (Color::Palette(1), Color::Rgb(1, 2, 3), true);
    assert_eq!(screen::style_on_cursor_row(&replayed, 6), red, "{shown:?}");
    let pids_before = pids(&daemon);

    let (upgraded, ready) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let followers: Vec<_> = printers
        .iter()
        .enumerate()
        .map(|(n, (id, _))| {
            let ready = if n == 0 { ready.clone() } else { Arc::new(AtomicBool::new(false)) };
            follow(&daemon, *id, &format!("follower-{n}"), upgraded.clone(), ready)
        })
        .collect();
    // The watcher's subscription ends once the capture let it go: the children then exit, during the upgrade.
    let signaller = std::thread::spawn(move || {
        while recv_frame(&mut watcher).is_some() {}
        for pid in [exiting_pty_pid, exiting_pipe_pid] {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::SIGUSR1).unwrap();
        }
    });
    eventually("the fast terminal's follower to see output", || ready.load(Ordering::Acquire).then_some(()));

    let answer = upgrade(&daemon, &mut owner, Some(&program));
    assert_eq!(answer, json!({"type": "ok"}));
    upgraded.store(true, Ordering::Release);
    let lines_at_upgrade = count_lines(&output);
    signaller.join().unwrap();

    // The same daemon, registration and children.
    assert_eq!(registration(&daemon), before, "the registration is unchanged (same build)");
    let pong = daemon.request(json!({"op": "ping"}));
    assert_eq!(
        (pong["pid"].as_u64(), &pong["instance_id"]),
        (Some(u64::from(daemon.pid())), &json!(before.instance_id))
    );
    assert_eq!(pids(&daemon), pids_before, "every process, with the same child");
    let after = Screen::of(&daemon, quiet);
    screen::assert_same_screen(&shown, &after);
    assert_eq!(after, shown, "the quiet terminal's snapshot, checkpoint bytes included");
    for follower in followers {
        let followed = follower.join().expect("a follower");
        assert!(followed.resumed >= 1, "the upgrade closed the subscription: {followed:?}");
        assert!(followed.lines > LINES_AFTER, "{followed:?}");
    }
    // The pipe process writes on, every line once.
    eventually("the pipe process to write on", || (count_lines(&output) > lines_at_upgrade + 100).then_some(()));
    // The exits during the upgrade, as the children ended.
    let (mut exiting, attached) = daemon.subscribe(exiting_pty, "after", "observer");
    let mut bytes = support::replay_of(&attached);
    let events = support::frames_until(&mut exiting, &mut bytes, "the terminal's exit", |_, events| {
        events.iter().any(|event| event["type"] == "exited")
    });
    let exited = events.iter().find(|event| event["type"] == "exited").unwrap();
    assert_eq!(exited["exit_code"], 7, "{exited}");
    let mut wait = daemon.connect();
    send(&mut wait, &daemon.envelope(json!({"op": "wait", "id": exiting_pipe})));
    let exited = recv(&mut wait).expect("the pipe process's exit");
    assert_eq!((&exited["type"], &exited["exit_code"]), (&json!("exited"), &json!(9)), "{exited}");

    // Still the owner: a handoff can be prepared, and `shutdown` stops the daemon and everything in it.
    send(&mut owner, &daemon.envelope(json!({"op": "prepare_handoff"})));
    assert_eq!(recv(&mut owner).expect("a handoff")["type"], "handoff");
    let left = children(daemon.pid());
    assert!(left.len() >= 6, "the processes and the guardian: {left:?}");
    send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
    assert_eq!(recv(&mut owner).expect("ok"), json!({"type": "ok"}));
    assert!(daemon.wait_exit().success());
    for pid in left {
        wait_dead("a child of the upgraded daemon", pid);
    }
    let _ = writer;
}

/// How many whole lines `path` holds, checking they count `1`, `2`, ...
fn count_lines(path: &Path) -> u64 {
    let text = std::fs::read(path).unwrap_or_default();
    let whole = text.iter().rposition(|b| *b == b'\n').map_or(0, |at| at + 1);
    let mut count = Count::default();
    count.feed(&text[..whole], b"\n");
    count.last
}

/// How many of process `pid`'s descriptors are open on the file at `path`.
fn descriptors_to(pid: u32, path: &Path) -> usize {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap();
    fds.flatten().filter(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == path)).count()
}

/// The daemon's guardian: its child running the `guard` command.
fn guardian_of(pid: u32) -> Option<u32> {
    children(pid).into_iter().find(|child| {
        std::fs::read(format!("/proc/{child}/cmdline"))
            .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).any(|arg| arg == b"guard"))
    })
}

#[test]
fn the_guardian_is_handed_over_and_ends_every_child_of_an_upgraded_daemon_killed() {
    let mut daemon = Daemon::start();
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let copy = private_copy(dir.path());
    let (_, pty) = create(&daemon, "exec sleep 600");
    let (_, pipe) = create_pipe(&daemon, &dir.path().join("out.log"), "exec sleep 600");
    let _left = (support::KillOnDrop(pty), support::KillOnDrop(pipe));
    let guardian = eventually("the guardian", || guardian_of(daemon.pid()));

    assert_eq!(upgrade(&daemon, &mut owner, Some(&copy)), json!({"type": "ok"}));
    assert_eq!(guardian_of(daemon.pid()), Some(guardian), "the same guardian, still the daemon's child");
    // Nothing is unguarded: the daemon killed, its guardian sees its pipe close and ends what the record lists.
    daemon.child_mut().kill().unwrap();
    daemon.wait_exit();
    for pid in [pty, pipe, guardian] {
        wait_dead("a child of the killed daemon", pid);
    }
}

#[test]
fn a_ticket_prepared_before_an_upgrade_is_claimed_after_it_and_control_can_be_taken_over() {
    let daemon = Daemon::start();
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let copy = private_copy(dir.path());
    let (id, _) = create(&daemon, "echo ready; exec sleep 600");
    let (mut controller, attached) = daemon.subscribe(id, "first", "controller");
    assert_eq!(attached["role"], "controller", "{attached}");
    send(&mut owner, &daemon.envelope(json!({"op": "prepare_handoff"})));
    let handoff = recv(&mut owner).expect("a handoff");
    assert_eq!(handoff["type"], "handoff", "{handoff}");

    assert_eq!(upgrade(&daemon, &mut owner, Some(&copy)), json!({"type": "ok"}));
    while recv_frame(&mut controller).is_some() {}
    // The same ticket and deadline, prepared again; a successor claims the daemon with it.
    send(&mut owner, &daemon.envelope(json!({"op": "prepare_handoff"})));
    assert_eq!(recv(&mut owner).expect("the same handoff"), handoff);
    let mut successor = daemon.connect();
    send(
        &mut successor,
        &daemon.envelope(json!({"op": "own", "instance_id": daemon.registration.instance_id,
        "ticket": handoff["ticket"]})),
    );
    assert_eq!(recv(&mut successor).expect("owned")["type"], "owned");
    send(&mut owner, &daemon.envelope(json!({"op": "prepare_handoff"})));
    assert_eq!(message(&recv(&mut owner).expect("superseded")), "owner connection has been superseded");
    // The controller attachment is still the terminal's after the upgrade; another takes control from it.
    let mut other = daemon.connect();
    send(
        &mut other,
        &daemon.envelope(json!({"op": "subscribe", "id": id, "offset": 0, "attachment_id": "second",
        "role": "controller", "takeover": false})),
    );
    let refused = recv(&mut other).expect("an answer");
    assert_eq!(refused["type"], "error", "the first attachment still controls: {refused}");
    let mut other = daemon.connect();
    send(
        &mut other,
        &daemon.envelope(json!({"op": "subscribe", "id": id, "offset": 0, "attachment_id": "second",
        "role": "controller", "takeover": true})),
    );
    let attached = recv(&mut other).expect("attached");
    assert_eq!((&attached["type"], &attached["role"]), (&json!("attached"), &json!("controller")), "{attached}");
}

#[test]
fn a_superseded_owner_s_preflight_still_running_is_ended_by_the_upgrade() {
    let daemon = Daemon::start();
    let mut first = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let copy = private_copy(dir.path());
    let pid_file = dir.path().join("preflight.pid");
    // Its preflight says its pid, then never ends (until killed).
    let hanging = script(dir.path(), "hanging", &format!("echo $$ > '{}'; exec sleep 600", pid_file.display()));
    send(&mut first, &daemon.envelope(json!({"op": "prepare_handoff"})));
    let handoff = recv(&mut first).expect("a handoff");
    assert_eq!(handoff["type"], "handoff", "{handoff}");
    send(&mut first, &daemon.envelope(json!({"op": "upgrade", "program": hanging})));
    let preflight: u32 =
        eventually("the hanging preflight to start", || std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok());
    let _left = support::KillOnDrop(preflight);

    // Another owner claims the daemon with the ticket, and upgrades it while that preflight still runs.
    let mut second = daemon.connect();
    send(
        &mut second,
        &daemon.envelope(json!({"op": "own", "instance_id": daemon.registration.instance_id,
        "ticket": handoff["ticket"]})),
    );
    assert_eq!(recv(&mut second).expect("owned")["type"], "owned");
    assert_eq!(upgrade(&daemon, &mut second, Some(&copy)), json!({"type": "ok"}));
    // The first owner's preflight was ended (and it was told why), and reaped: nothing of it is left behind.
    let answer = recv(&mut first).expect("an answer to the superseded owner's upgrade");
    assert!(message(&answer).contains("the daemon upgraded in place meanwhile"), "{answer}");
    wait_dead("the superseded owner's preflight", preflight);
    assert!(!children(daemon.pid()).contains(&preflight), "the preflight is still the daemon's child");
}

#[test]
fn a_termination_signal_taken_as_the_upgrade_executes_stops_the_new_image_in_order() {
    // The daemon sends itself SIGTERM once the upgrade decided to execute, and waits until its signal thread
    // took it: the one moment a signal would be lost with the old image.
    let mut daemon = Daemon::start_with(&["--signal-at-upgrade-exec"]);
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let copy = private_copy(dir.path());
    let (_, pty) = create(&daemon, "exec sleep 600");
    let (_, pipe) = create_pipe(&daemon, &dir.path().join("out.log"), "exec sleep 600");
    let _left = (support::KillOnDrop(pty), support::KillOnDrop(pipe));
    let guardian = eventually("the guardian", || guardian_of(daemon.pid()));

    send(&mut owner, &daemon.envelope(json!({"op": "upgrade", "program": copy})));
    // The new image answers, or its stop closes the owner's connection first; either way it stops as asked.
    if let Some(answer) = recv(&mut owner) {
        assert_eq!(answer, json!({"type": "ok"}));
    }
    assert!(daemon.wait_exit().success(), "an orderly stop");
    for pid in [pty, pipe, guardian] {
        wait_dead("a child of the daemon stopped by the signal", pid);
    }
    assert!(!daemon.dir().join(opencode_pty_protocol::REGISTRATION_FILE).exists(), "the registration is removed");
}

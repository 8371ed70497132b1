//! The `opencode-pty` command line: version and help output and usage errors; against a real daemon, `status`,
//! `list`, `watch` and `stop` observe or operate one and never start one; `play` starts its own, shows a
//! terminal query answered, and stops it on `quit`.

use crate::support;

use std::process::{Command, Output};

use serde_json::{Value, json};
use support::{Daemon, WAIT, binary, create_sh, run_bounded};

/// Runs the binary with `args` plus the daemon's location, killed if it outlives twice [`WAIT`].
fn run_at(daemon_root: &std::path::Path, name: &str, args: &[&str], input: &[u8]) -> Output {
    let mut command = Command::new(binary());
    command.args(args).args(["--name", name, "--runtime-dir"]).arg(daemon_root);
    run_bounded(command, input, WAIT * 2)
}

/// Runs the binary with `args` alone, killed if it outlives twice [`WAIT`].
fn run(args: &[&str]) -> Output {
    let mut command = Command::new(binary());
    command.args(args);
    run_bounded(command, b"", WAIT * 2)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn status_list_watch_and_stop_operate_a_running_daemon() {
    let mut daemon = Daemon::start();
    let _owner = daemon.own();
    let created = daemon.request(create_sh("read go; echo watched-output; exit 4"));
    let id = created["process"]["id"].as_u64().unwrap();
    let root = daemon.root.path().to_path_buf();

    let status = run_at(&root, &daemon.name, &["status", "--json"], b"");
    assert!(status.status.success(), "{}", text(&status.stderr));
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["pid"], daemon.pid());
    assert_eq!(status["protocol"], 8);
    assert_eq!(status["processes"], json!({"pty": 1, "pipe": 0}));

    let list = run_at(&root, &daemon.name, &["list", "--json"], b"");
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list["processes"][0]["id"], id);
    let human = run_at(&root, &daemon.name, &["list"], b"");
    assert!(text(&human.stdout).contains("running"), "{}", text(&human.stdout));
    // The daemon says what a terminal waits for (SPEC K2, §6.4): `read go` waits for a line.
    support::eventually("list shows the read", || {
        let human = run_at(&root, &daemon.name, &["list"], b"");
        text(&human.stdout).contains("running (waits for a line)").then_some(())
    });
    let list = run_at(&root, &daemon.name, &["list", "--json"], b"");
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list["processes"][0]["pty"]["input"], "line", "the JSON carries it too");

    // `watch` streams from offset 0 and returns when the process exits.
    let watcher = {
        let (root, name) = (root.clone(), daemon.name.clone());
        std::thread::spawn(move || run_at(&root, &name, &["watch", &id.to_string()], b""))
    };
    // Whether the watcher attaches before or after the exit, it gets everything from offset 0, then `exited`.
    let write = json!({"op": "write", "id": id, "attachment_id": null, "data_base64": "Cg=="});
    assert_eq!(daemon.request(write)["type"], "ok");
    let watched = watcher.join().unwrap();
    assert!(watched.status.success(), "{}", text(&watched.stderr));
    assert!(text(&watched.stdout).contains("watched-output"), "{}", text(&watched.stdout));

    let stop = run_at(&root, &daemon.name, &["stop"], b"");
    assert!(stop.status.success(), "{}", text(&stop.stderr));
    assert!(daemon.wait_exit().success());
    assert!(!daemon.dir().exists());
}

#[test]
fn observers_never_start_a_daemon() {
    let root = tempfile::tempdir().unwrap();
    for command in ["status", "list", "stop"] {
        let output = run_at(root.path(), "absent", &[command], b"");
        assert!(!output.status.success(), "{command}");
        assert!(text(&output.stderr).contains("no running daemon found"), "{}", text(&output.stderr));
    }
    let output = run_at(root.path(), "absent", &["watch", "1"], b"");
    assert!(!output.status.success());
    assert!(!root.path().join("absent").exists(), "nothing was created");
}

#[test]
fn a_bad_name_is_refused_clearly() {
    let root = tempfile::tempdir().unwrap();
    let output = run_at(root.path(), "../escape", &["status"], b"");
    assert!(!output.status.success());
    assert!(text(&output.stderr).contains("invalid runtime name"), "{}", text(&output.stderr));
}

#[test]
fn play_demo_shows_a_query_answered_by_the_parser_and_quit_stops_the_daemon() {
    let root = tempfile::tempdir().unwrap();
    let output = run_at(root.path(), "play", &["play"], b"demo\nlist\nquit\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    // The child printed the cursor-position report it read back: ESC [ 1 ; 1 R.
    assert!(stdout.contains("033   [   1   ;   1   R"), "{stdout}");
    assert!(stdout.contains("daemon stopped"), "{stdout}");
    assert!(!root.path().join("play").exists(), "the daemon cleaned up");
}

#[test]
fn play_starts_and_inspects_a_pipe_process() {
    let root = tempfile::tempdir().unwrap();
    // The playground splits words as a shell does, so the quotes keep the two-character `\\n` for printf, which
    // turns it into a newline; the file's path has a space, quoted too.
    let out = root.path().join("pipe output.log");
    let script = format!("pipe '{}' printf 'a\\nb\\n'\nawait 1\ninfo 1\nlist\nquit\n", out.display());
    let output = run_at(root.path(), "pipes", &["play"], script.as_bytes());
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    assert!(stdout.contains("started pipe process 1"), "{stdout}");
    assert!(stdout.contains("exited: exit code 0, 4 bytes, 2 lines"), "{stdout}");
    assert!(stdout.contains("\"mode\": \"pipe\""), "{stdout}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "a\nb\n");
}

#[test]
fn status_without_json_names_the_daemon_and_counts_its_processes() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    assert_eq!(daemon.request(create_sh("sleep 60"))["type"], "created");
    let status = run_at(daemon.root.path(), &daemon.name, &["status"], b"");
    let stdout = text(&status.stdout);
    assert!(status.status.success(), "{stdout}\n{}", text(&status.stderr));
    let first = format!("daemon pid {} instance {} (protocol 8)", daemon.pid(), daemon.registration.instance_id);
    assert_eq!(stdout.lines().next(), Some(first.as_str()), "{stdout}");
    assert!(stdout.lines().any(|line| line == "1 pty and 0 pipe processes"), "{stdout}");
}

/// The lines of `stdout` from the first one after `from` that satisfies `start` up to (not including) the next one
/// equal to `end`: one block of `play` output.
fn block<'a>(lines: &[&'a str], from: usize, start: impl Fn(&str) -> bool, end: &str) -> (usize, Vec<&'a str>) {
    let first = from + lines[from..].iter().position(|l| start(l)).unwrap_or_else(|| panic!("no block: {lines:#?}"));
    let last = first + 1 + lines[first + 1..].iter().position(|l| *l == end).expect("the block's end");
    (last + 1, lines[first + 1..last].to_vec())
}

#[test]
fn play_drives_a_terminal_with_every_pty_command() {
    let root = tempfile::tempdir().unwrap();
    // `run` types its command and prints the screen once the output settles; `printf` joins the marker's parts, so
    // the echoed command line cannot pass for its output. `wait` pauses the playground itself.
    let script = [
        "new sh",
        "wait 1000",
        r#"run printf "%s-%s\n" play run-marker"#,
        r"send echo sent-marker\r",
        "wait 1000",
        "screen",
        "run seq 101 140",
        "rows 5",
        "replay 0",
        "resize 90 20",
        "rename my-title",
        "resize x y",
        "list",
        "use 1",
        "kill 1",
        "list",
        "quit",
    ];
    let output = run_at(root.path(), "drive", &["play"], format!("{}\n", script.join("\n")).as_bytes());
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines.iter().position(|l| *l == "started process 1").unwrap_or_else(|| panic!("{stdout}"));
    let screen = |l: &str| l.starts_with("--- process 1: ");

    let (at, ran) = block(&lines, at, screen, "---");
    assert!(ran.contains(&"play-run-marker"), "`run` shows the command's output: {ran:#?}");
    let (at, shown) = block(&lines, at, screen, "---");
    assert!(shown.contains(&"sent-marker"), "`screen` shows the sent command's output: {shown:#?}");
    let (at, seq) = block(&lines, at, screen, "---");
    assert!(seq.contains(&"140"), "{seq:#?}");
    // `rows 5`: the last five rows of the screen, the prompt below the last number.
    let replay_header = at + lines[at..].iter().position(|l| l.starts_with("0..")).expect("the replay's range");
    assert_eq!(replay_header - at, 5, "`rows 5` prints five lines: {:#?}", &lines[at..replay_header]);
    assert_eq!(lines[at..at + 4], ["137", "138", "139", "140"]);
    // `replay 0`: `0..<tail>`, then the raw output with control characters escaped.
    let tail = lines[replay_header].strip_prefix("0..").unwrap();
    assert!(tail.parse::<u64>().is_ok(), "{}", lines[replay_header]);
    let error = "error: usage: resize COLS ROWS";
    let (at, replay) = block(&lines, replay_header, |l| l.starts_with("0.."), error);
    assert!(replay.contains(&r"play-run-marker\r\n"), "{replay:#?}");
    assert!(replay.contains(&r"sent-marker\r\n"), "{replay:#?}");
    // `list` after the resize and the rename, then `use 1` and `kill 1` (which prints), then an empty `list`
    // (which prints nothing), then `quit`.
    assert!(lines[at].starts_with("  ID  MODE  PID"), "a header first: {}", lines[at]);
    let listed: Vec<&str> = lines[at + 1].split_whitespace().collect();
    assert_eq!((listed[0], listed[1], listed[3]), ("1", "pty", "90x20"), "{}", lines[at + 1]);
    // The output in words: how many bytes it wrote.
    assert!(listed[5].parse::<u64>().is_ok(), "{}", lines[at + 1]);
    let words = (listed[4], listed[6], listed[7], listed.last());
    assert_eq!(words, ("running", "bytes", "sh", Some(&"[my-title]")), "{}", lines[at + 1]);
    assert_eq!(lines[at + 2], "terminated process 1", "{stdout}");
    assert!(lines[at + 3].starts_with("daemon stopped"), "{stdout}");
    assert_eq!(lines.len(), at + 4, "{stdout}");
    assert!(!root.path().join("drive").exists(), "the daemon cleaned up");
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8")
}

#[test]
fn version_names_the_protocol() {
    let expected = format!("opencode-pty {} (protocol 8)\n", env!("CARGO_PKG_VERSION"));
    for flag in ["--version", "-V", "version"] {
        let output = run(&[flag]);
        assert!(output.status.success(), "{flag}");
        assert_eq!(stdout(&output), expected, "{flag}");
    }
}

#[test]
fn verbose_version_loads_libghostty() {
    // This only prints once the binary found libghostty-vt through its rpath.
    let output = run(&["version", "--verbose"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = stdout(&output);
    assert!(text.contains("(protocol 8)"), "{text}");
    assert!(text.contains("libghostty-vt 0.1.0-dev (Ghostty 6467b1dab)"), "{text}");
}

#[test]
fn unknown_commands_print_usage_and_fail() {
    let output = run(&["frobnicate"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).to_lowercase().contains("usage: opencode-pty"));
    let help = run(&["--help"]);
    assert!(help.status.success());
    assert!(stdout(&help).to_lowercase().contains("usage: opencode-pty"));
}

/// Runs `play` in a PTY of its own (so it leads a session with a terminal, as in a terminal window), starts a
/// pipe process from it, then closes the terminal: prints the daemon's pid and the pipe child's, then how the
/// playground ended.
const PLAY_IN_A_TERMINAL: &str = r#"import json, os, pty, select, socket, struct, sys, time
exe, root = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(exe, [exe, "play", "--name", "hup", "--runtime-dir", root])
seen = b""
def until(marker):
    global seen
    end = time.time() + 20
    while marker not in seen:
        assert time.time() < end, seen
        if select.select([fd], [], [], 1)[0]:
            seen += os.read(fd, 4096)
until(b"(type `help`)")
os.write(fd, b"pipe " + root.encode() + b"/out sleep 600\r")
until(b"started pipe process 1")
# The prompt edits lines and keeps history: the up arrow brings the command back.
assert b"play> " in seen, seen
os.write(fd, b"\x1b[A\r")
until(b"started pipe process 2")
reg = json.load(open(root + "/hup/service.json"))
s = socket.socket(socket.AF_UNIX)
s.connect(reg["socket"])
body = json.dumps({"token": reg["token"], "request": {"op": "list", "mode": "pipe"}}).encode()
s.sendall(struct.pack(">I", len(body)) + body)
n = struct.unpack(">I", s.recv(4))[0]
data = b""
while len(data) < n:
    data += s.recv(n - len(data))
print(reg["pid"], *[p["pid"] for p in json.loads(data)["processes"]], flush=True)
os.close(fd)
_, status = os.waitpid(pid, 0)
print("play", "signal" if os.WIFSIGNALED(status) else "exit", flush=True)
"#;

#[test]
fn closing_the_terminal_of_play_stops_its_daemon_in_order_and_ends_its_children() {
    support::require_python3("give `play` a terminal to close");
    let root = tempfile::tempdir().unwrap();
    let mut command = Command::new("python3");
    command.args(["-c", PLAY_IN_A_TERMINAL]).arg(binary()).arg(root.path());
    let output = run_bounded(command, b"", WAIT * 2);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    let pids: Vec<u32> =
        stdout.lines().next().expect("the pids").split_whitespace().map(|p| p.parse().unwrap()).collect();
    assert_eq!(pids.len(), 3, "the daemon and two pipe children (the second from the prompt's history): {stdout}");
    // The hangup reached the playground alone; its owner channel closing stopped the daemon the orderly way.
    for pid in pids {
        support::wait_dead("the daemon or a pipe child", pid);
    }
    assert!(!root.path().join("hup").exists(), "registration, lock and directory removed: {stdout}");
}

#[test]
fn play_says_its_daemon_is_gone_and_leaves() {
    let root = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary())
        .args(["play", "--name", "gone", "--runtime-dir"])
        .arg(root.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _guard = support::KillOnDrop(child.id());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut first).unwrap();
    let daemon: u32 = first.split_whitespace().nth(3).and_then(|pid| pid.parse().ok()).expect(&first);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(daemon as i32), nix::sys::signal::SIGTERM).unwrap();
    // Stdin stays open: only the daemon's going can end the playground.
    let status = support::wait_or_kill(&mut child, WAIT).expect("play left by itself");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the daemon is gone (exit status: 0); leaving the playground"), "{stderr}");
}

/// Runs `attach` in a PTY of its own, 100x30, and plays `actions` (a JSON list of `["expect", text]`,
/// `["send", text]` and `["resize", "COLSxROWS"]`, which resizes the PTY: SIGWINCH); then waits for `attach` to
/// end and prints `exit N`, and everything it drew.
const ATTACH_IN_A_TERMINAL: &str = r#"import fcntl, json, os, pty, select, struct, sys, termios, time
exe, args, actions = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    os.execv(exe, [exe] + args)
seen = b""
def read_some(timeout):
    global seen
    if select.select([fd], [], [], timeout)[0]:
        try:
            seen += os.read(fd, 65536)
        except OSError:
            return False
    return True
for action in actions:
    kind, text = action[0], action[1]
    if kind == "send":
        os.write(fd, text.encode())
    elif kind == "send_until":
        # Sent again each second until the answer shows: what it asks about may take a moment to arrive.
        end = time.time() + 20
        while action[2].encode() not in seen:
            assert time.time() < end, (action, seen)
            os.write(fd, text.encode())
            again = time.time() + 1
            while time.time() < again and action[2].encode() not in seen:
                read_some(max(0.0, again - time.time()))
    elif kind == "resize":
        cols, rows = map(int, text.split("x"))
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    else:
        end = time.time() + 20
        while text.encode() not in seen:
            assert time.time() < end, (text, seen)
            read_some(1)
end = time.time() + 20
while time.time() < end:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    read_some(0.2)
while read_some(0.1) and select.select([fd], [], [], 0)[0]:
    pass
print("exit", os.waitstatus_to_exitcode(status) if done else "none")
sys.stdout.write(seen.decode("utf-8", "replace"))
"#;

/// `attach` with `args` (the daemon's location added) through a 100x30 PTY; its exit code and what it drew.
pub(crate) fn attach_through_a_pty(daemon: &Daemon, args: &[&str], actions: serde_json::Value) -> (String, String) {
    let mut all: Vec<&str> = vec!["attach"];
    all.extend_from_slice(args);
    let root = daemon.root.path().to_str().unwrap();
    all.extend_from_slice(&["--name", &daemon.name, "--runtime-dir", root]);
    let mut command = Command::new("python3");
    command.args(["-c", ATTACH_IN_A_TERMINAL]).arg(binary()).arg(json!(all).to_string()).arg(actions.to_string());
    let output = run_bounded(command, b"", WAIT * 3);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    let (first, rest) = stdout.split_once('\n').unwrap_or((&stdout, ""));
    (first.trim_start_matches("exit ").to_owned(), rest.to_owned())
}

#[test]
fn attach_draws_the_screen_types_follows_the_size_detaches_and_shows_the_exit() {
    support::require_python3("give `attach` a terminal");
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let created = daemon.request(create_sh("echo before-attach; exec sh"));
    let id = created["process"]["id"].as_u64().unwrap();
    let id_text = id.to_string();
    // Another controller holds it: attaching fails, clearly, unless told to take over or only to watch.
    let (_controller, attached) = daemon.subscribe(id, "other", "controller");
    assert_eq!(attached["type"], "attached", "{attached}");
    let (code, drawn) = attach_through_a_pty(&daemon, &[&id_text], json!([]));
    assert_ne!(code, "0", "{drawn}");
    assert!(drawn.contains("already has controller"), "{drawn}");
    let (code, drawn) = attach_through_a_pty(
        &daemon,
        &[&id_text, "--takeover"],
        json!([
            ["expect", "before-attach"],
            ["send", "echo typed-$((6*7))\r"],
            ["expect", "typed-42"],
            ["send", "\u{1c}\u{1c}"]
        ]),
    );
    assert_eq!(code, "0", "{drawn}");
    assert!(drawn.contains(&format!("[detached from process {id}; it is still running]")), "{drawn}");
    let process = &daemon.request(json!({"op": "get", "id": id}))["process"];
    assert_eq!(process["exited_at"], serde_json::Value::Null, "still running after the detach");
    assert_eq!((process["pty"]["cols"].as_u64(), process["pty"]["rows"].as_u64()), (Some(100), Some(30)));
    // Watching only: keys do not reach the process.
    let (code, drawn) = attach_through_a_pty(
        &daemon,
        &[&id_text, "--observe"],
        json!([["expect", "typed-42"], ["send", "echo not-typed\r"], ["send", "\u{1c}\u{1c}"]]),
    );
    assert_eq!(code, "0", "{drawn}");
    let replay = daemon.request(json!({"op": "replay", "id": id, "offset": 0}));
    let kept =
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, replay["data_base64"].as_str().unwrap());
    assert!(!String::from_utf8_lossy(&kept.unwrap()).contains("not-typed"), "{replay}");
    // Attached again, the earlier output is on the screen; the process's exit ends `attach` with its code.
    // A resize of the local terminal (SIGWINCH) reaches the process.
    let (code, drawn) = attach_through_a_pty(
        &daemon,
        &[&id_text, "--takeover"],
        json!([
            ["expect", "typed-42"],
            ["resize", "120x40"],
            // The SIGWINCH and the keys take separate paths through `attach`: ask until the new size shows.
            ["send_until", "stty size\r", "40 120"],
            ["send", "exit 3\r"]
        ]),
    );
    assert_eq!(code, "3", "{drawn}");
    assert!(drawn.contains(&format!("[process {id} exited with code 3]")), "{drawn}");
}

#[test]
fn a_connection_error_says_its_cause_once() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("gone");
    std::fs::create_dir(&dir).unwrap();
    let socket = root.path().join("nobody.sock");
    let registration = json!({"instance_id": "a".repeat(32), "pid": 1, "protocol": 8, "features": [],
        "socket": socket.to_str().unwrap(), "token": "b".repeat(32)});
    let path = dir.join("service.json");
    std::fs::write(&path, registration.to_string()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let output = run_at(root.path(), "gone", &["status"], b"");
    let stderr = text(&output.stderr);
    assert!(!output.status.success());
    assert_eq!(stderr.matches("No such file or directory").count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("cannot connect to {}", socket.display())), "{stderr}");
}

#[test]
fn watch_follows_a_pipe_process_file_and_names_a_terminated_terminal() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let created = daemon.request(json!({"op": "create_pipe", "program": "/bin/sh",
        "args": ["-c", "echo one; sleep 0.3; echo two"], "cwd": "/", "env": {"PATH": "/usr/bin:/bin"},
        "group_id": "g", "output_path": out.to_str().unwrap()}));
    let id = created["process"]["id"].to_string();
    let watched = run_at(daemon.root.path(), &daemon.name, &["watch", &id], b"");
    assert!(watched.status.success(), "{}", text(&watched.stderr));
    assert_eq!(text(&watched.stdout), "one\ntwo\n", "the whole file, followed to the exit");

    let terminal = daemon.request(create_sh("echo started; sleep 600"))["process"]["id"].as_u64().unwrap();
    let mut watching = Command::new(binary())
        .args(["watch", &terminal.to_string(), "--name", &daemon.name, "--runtime-dir"])
        .arg(daemon.root.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _guard = support::KillOnDrop(watching.id());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(watching.stdout.take().unwrap()), &mut first).unwrap();
    assert_eq!(first.trim(), "started");
    assert_eq!(daemon.request(json!({"op": "terminate", "id": terminal}))["type"], "ok");
    let status = support::wait_or_kill(&mut watching, WAIT).expect("watch ends");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut watching.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success());
    assert!(stderr.contains(&format!("process {terminal} was terminated")), "{stderr}");
}

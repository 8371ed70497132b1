//! What a newcomer meets at the command line (issue 27): errors that say what to do next, `attach` of an exited
//! process or under a stopping daemon, the screen left after detaching from a full-screen program, `status`
//! listing every daemon, and the playground's Ctrl-C, `help` and `list`.

use crate::cli::attach_through_a_pty;
use crate::support;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use support::{Daemon, KillOnDrop, WAIT, binary, create_sh, run_bounded};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the binary with `args`, then `--runtime-dir ROOT` and, when given, `--name NAME`.
fn run_in(root: &std::path::Path, name: Option<&str>, args: &[&str], input: &[u8]) -> Output {
    let mut command = Command::new(binary());
    command.args(args).arg("--runtime-dir").arg(root);
    if let Some(name) = name {
        command.args(["--name", name]);
    }
    run_bounded(command, input, WAIT * 2)
}

/// Reads subscription frames until `exited`.
fn until_exited(daemon: &Daemon, id: u64) {
    let (mut stream, attached) = daemon.subscribe(id, "until-exited", "observer");
    let (_, events) = support::read_subscription(&mut stream, &attached);
    assert!(events.iter().any(|event| event["type"] == "exited"), "{events:?}");
}

#[test]
fn attach_to_an_exited_terminal_shows_its_exit_code() {
    support::require_python3("give `attach` a terminal");
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let id = daemon.request(create_sh("echo last-words; exit 5"))["process"]["id"].as_u64().unwrap();
    until_exited(&daemon, id);
    for mode in [None, Some("--observe")] {
        let mut args = vec![id.to_string()];
        args.extend(mode.map(str::to_owned));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, drawn) = attach_through_a_pty(&daemon, &args, json!([]));
        assert_eq!(code, "5", "{mode:?}: {drawn}");
        assert!(drawn.contains("last-words"), "{mode:?}: the screen is drawn: {drawn}");
        assert!(drawn.contains(&format!("[process {id} exited with code 5]")), "{mode:?}: {drawn}");
        assert!(!drawn.contains("controller"), "{mode:?}: {drawn}");
    }
}

#[test]
fn attach_to_a_controlled_terminal_names_takeover_and_observe() {
    support::require_python3("give `attach` a terminal");
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let id = daemon.request(create_sh("exec sleep 600"))["process"]["id"].as_u64().unwrap();
    let (_controller, attached) = daemon.subscribe(id, "other", "controller");
    assert_eq!(attached["type"], "attached", "{attached}");
    let (code, drawn) = attach_through_a_pty(&daemon, &[&id.to_string()], json!([]));
    assert_eq!(code, "1", "{drawn}");
    let said = format!("process {id}: terminal already has controller other; `--takeover` takes control from it");
    assert!(drawn.contains(&said), "{drawn}");
    assert!(drawn.contains("`--observe` only watches"), "{drawn}");
}

#[test]
fn attach_says_when_the_daemon_stops_under_it() {
    support::require_python3("give `attach` a terminal");
    let daemon = Daemon::start();
    let owner = daemon.own();
    let id = daemon.request(create_sh("echo ready; exec sleep 600"))["process"]["id"].as_u64().unwrap();
    // Who controls the terminal is announced to its subscribers: the test knows when `attach` has attached.
    let (mut watching, attached) = daemon.subscribe(id, "watching", "observer");
    assert_eq!(attached["type"], "attached", "{attached}");
    let attaching = std::thread::scope(|scope| {
        // No action: the stop may come before `attach` has drawn anything.
        let attaching = scope.spawn(|| attach_through_a_pty(&daemon, &[&id.to_string()], json!([])));
        support::frames_until(&mut watching, &mut Vec::new(), "attach attached", |_, events| {
            events.iter().any(|event| {
                event["type"] == "controller_changed"
                    && event["attachment_id"].as_str().is_some_and(|who| who.starts_with("attach-"))
            })
        });
        let mut owner = owner;
        support::send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
        assert_eq!(support::recv(&mut owner).unwrap()["type"], "ok");
        attaching.join().unwrap()
    });
    let (code, drawn) = attaching;
    assert_eq!(code, "1", "{drawn}");
    assert!(drawn.contains(&format!("the daemon stopped, and process {id} with it")), "{drawn}");
    assert!(!drawn.contains("closed the connection"), "{drawn}");
}

#[test]
fn attach_without_a_terminal_says_it_needs_one() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let output = run_in(daemon.root.path(), Some(&daemon.name), &["attach", "1"], b"");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("attach needs a terminal"), "{stderr}");
    assert!(stderr.contains("opencode-pty watch 1"), "{stderr}");
    assert!(!stderr.contains("ioctl"), "{stderr}");
}

#[test]
fn detaching_from_a_full_screen_program_leaves_a_clean_main_screen() {
    support::require_python3("give `attach` a terminal");
    let daemon = Daemon::start();
    let _owner = daemon.own();
    // A shell's lines above, then a full-screen program in the middle of its screen, as `top` run from a shell.
    let script = r"seq 1 12; printf '\033[?1049h\033[12;30Hfull-screen'; exec sleep 600";
    let id = daemon.request(create_sh(script))["process"]["id"].as_u64().unwrap();
    let (code, drawn) =
        attach_through_a_pty(&daemon, &[&id.to_string()], json!([["expect", "full-screen"], ["send", "\u{1c}\u{1c}"]]));
    assert_eq!(code, "0", "{drawn}");
    // What the local terminal shows now, replayed in an emulator of its size.
    let mut local = opencode_pty_vt::Terminal::new(100, 30, 1000).unwrap();
    local.write(drawn.as_bytes());
    assert_eq!(local.active_screen(), opencode_pty_vt::Screen::Primary);
    let screen = local.plain_text().unwrap();
    let first = screen.lines().next().unwrap_or_default();
    assert_eq!(first, format!("[detached from process {id}; it is still running]"), "{screen}");
    assert_eq!(local.cursor().y, 1, "the prompt comes next, at the top:\n{screen}");
}

#[test]
fn observers_without_a_daemon_say_how_to_start_one() {
    let root = tempfile::tempdir().unwrap();
    let output = run_in(root.path(), Some("absent"), &["status"], b"");
    let stderr = text(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("no running daemon found"), "{stderr}");
    assert!(stderr.contains("`opencode-pty play --name absent` starts one"), "{stderr}");
    assert!(stderr.contains("`opencode-pty status` without `--name` lists the running ones"), "{stderr}");
}

#[test]
fn a_daemon_started_by_hand_says_at_once_that_it_waits_for_an_owner() {
    let root = tempfile::tempdir().unwrap();
    let mut daemon = Command::new(binary())
        .args(["daemon", "--name", "by-hand", "--runtime-dir"])
        .arg(root.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _guard = KillOnDrop(daemon.id());
    let mut stderr = BufReader::new(daemon.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    // The first thing it says, before the deadline's message.
    assert!(first.contains("the daemon is ready and waits for an owner"), "{first}");
    assert!(first.contains("within 5 s"), "{first}");
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let status = support::wait_or_kill(&mut daemon, WAIT).expect("it stops at the deadline");
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(rest.contains("no owner claimed the daemon within 5 s"), "{rest}");
}

/// Starts `play` in `root` with its stdin kept open, and the pid of its daemon.
fn start_play(root: &std::path::Path, name: &str) -> (std::process::Child, KillOnDrop, u32) {
    let mut play = Command::new(binary())
        .args(["play", "--name", name, "--runtime-dir"])
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let guard = KillOnDrop(play.id());
    let mut first = String::new();
    BufReader::new(play.stdout.as_mut().unwrap()).read_line(&mut first).unwrap();
    let pid = first.strip_prefix("playground: daemon pid ").and_then(|rest| rest.split(' ').next());
    let pid = pid.and_then(|pid| pid.parse().ok()).unwrap_or_else(|| panic!("{first}"));
    (play, guard, pid)
}

/// Ends a playground from [`start_play`] by closing its input.
fn end_play(mut play: std::process::Child) {
    drop(play.stdin.take());
    let status = support::wait_or_kill(&mut play, WAIT).expect("play leaves at the end of its input");
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_second_play_of_the_same_name_prints_one_error_saying_what_to_do() {
    let root = tempfile::tempdir().unwrap();
    let (first, _guard, _) = start_play(root.path(), "twice");
    let second = run_in(root.path(), Some("twice"), &["play"], b"quit\n");
    let stderr = text(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one error: {stderr}");
    assert!(stderr.contains("a daemon already runs in"), "{stderr}");
    let stop = format!("`opencode-pty stop --name twice --runtime-dir {}`", root.path().display());
    assert!(stderr.contains(&stop), "{stderr}");
    end_play(first);
}

#[test]
fn status_without_a_name_lists_every_daemon() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    assert_eq!(daemon.request(create_sh("exec sleep 600"))["type"], "created");
    let root = daemon.root.path();
    // A second daemon beside it, a playground's, and a directory without one.
    let (play, _guard, other) = start_play(root, "other");
    std::fs::create_dir(root.join("empty")).unwrap();
    let listed = run_in(root, None, &["status"], b"");
    let stdout = text(&listed.stdout);
    assert!(listed.status.success(), "{stdout}\n{}", text(&listed.stderr));
    let lines: Vec<Vec<&str>> = stdout.lines().map(|line| line.split_whitespace().collect()).collect();
    assert_eq!(lines.len(), 3, "a header and two daemons: {stdout}");
    assert_eq!(lines[0], ["NAME", "PID", "PTYS", "PIPES", "OWNER"], "{stdout}");
    let (first, second) = (&lines[1], &lines[2]);
    assert_eq!(first[..4], ["other", &other.to_string(), "0", "0"], "{stdout}");
    assert_eq!(second[..4], [daemon.name.as_str(), &daemon.pid().to_string(), "1", "0"], "{stdout}");
    let json = run_in(root, None, &["status", "--json"], b"");
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json[1]["name"], daemon.name.as_str(), "{json}");
    assert_eq!(json[1]["pid"], daemon.pid(), "{json}");
    assert_eq!(json[1]["processes"], json!({"pty": 1, "pipe": 0}), "{json}");
    assert!(matches!(&json[1]["claimed"], Value::Null | Value::Bool(true)), "{json}");
    end_play(play);
}

#[test]
fn list_keeps_a_multi_line_command_on_one_line() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    assert_eq!(daemon.request(create_sh("echo one\necho two; exec sleep 600"))["type"], "created");
    let listed = run_in(daemon.root.path(), Some(&daemon.name), &["list"], b"");
    let stdout = text(&listed.stdout);
    assert_eq!(stdout.lines().count(), 2, "a header and one process: {stdout}");
    assert!(stdout.contains(r"$'echo one\necho two; exec sleep 600'"), "{stdout}");
}

#[test]
fn play_help_names_attach_watch_and_what_list_shows() {
    let root = tempfile::tempdir().unwrap();
    let output = run_in(root.path(), Some("helped"), &["play"], b"help\nquit\n");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    let location = format!("--name helped --runtime-dir {}", root.path().display());
    assert!(stdout.contains(&format!("opencode-pty attach ID {location}")), "{stdout}");
    assert!(stdout.contains(&format!("opencode-pty watch ID {location}")), "{stdout}");
    assert!(stdout.contains("size (a pipe's line count)"), "{stdout}");
    assert!(stdout.contains("Ctrl-C twice at an empty prompt"), "{stdout}");
}

/// Runs `play` in a PTY of its own and presses Ctrl-C: after typing (the line is abandoned), once at an empty
/// prompt (a hint), after typing again (abandoned; the count starts over), then twice at an empty prompt, which
/// leaves. Prints how many hints were shown and how `play` ended, then what it drew.
const CTRL_C_IN_A_TERMINAL: &str = r#"import os, pty, select, sys, time
exe, root = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(exe, [exe, "play", "--name", "ctrl-c", "--runtime-dir", root])
seen = b""
def until(count, marker):
    global seen
    end = time.time() + 20
    while seen.count(marker) < count:
        assert time.time() < end, (count, marker, seen)
        if select.select([fd], [], [], 1)[0]:
            seen += os.read(fd, 4096)
hint = b"Ctrl-C again leaves"
until(1, b"play> ")
os.write(fd, b"abc\x03")
until(2, b"play> ")
os.write(fd, b"\x03")
until(1, hint)
until(3, b"play> ")
os.write(fd, b"x\x03")
until(4, b"play> ")
os.write(fd, b"\x03")
until(2, hint)
until(5, b"play> ")
os.write(fd, b"\x03")
_, status = os.waitpid(pid, 0)
try:
    while select.select([fd], [], [], 0.5)[0]:
        seen += os.read(fd, 4096)
except OSError:
    pass
print(seen.count(hint), os.waitstatus_to_exitcode(status))
sys.stdout.write(seen.decode("utf-8", "replace"))
"#;

#[test]
fn ctrl_c_twice_at_an_empty_prompt_leaves_the_playground() {
    support::require_python3("give `play` a terminal");
    let root = tempfile::tempdir().unwrap();
    let mut command = Command::new("python3");
    command.args(["-c", CTRL_C_IN_A_TERMINAL]).arg(binary()).arg(root.path());
    let output = run_bounded(command, b"", WAIT * 2);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    let (first, drawn) = stdout.split_once('\n').unwrap_or((&stdout, ""));
    assert_eq!(first, "2 0", "two hints, then a clean exit: {drawn}");
    assert!(drawn.contains("daemon stopped"), "{drawn}");
    assert!(!root.path().join("ctrl-c").exists(), "the daemon cleaned up: {drawn}");
}

#[test]
fn every_just_recipe_has_a_whole_sentence_for_just_list_and_a_row_in_the_readme() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let justfile = std::fs::read_to_string(root.join("justfile")).unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines: Vec<&str> = justfile.lines().collect();
    let mut recipes = 0;
    for (at, line) in lines.iter().enumerate() {
        let starts = line.chars().next().is_some_and(|c| c.is_ascii_lowercase());
        let Some((head, _)) = line.split_once(':').filter(|_| starts && !line.starts_with("set ")) else { continue };
        let name = head.split_whitespace().next().unwrap();
        recipes += 1;
        // `just --list` shows the one comment line right above a recipe: it must be a whole sentence, and not
        // the end of one begun above it.
        let doc = lines[at - 1].strip_prefix("# ").unwrap_or_else(|| panic!("{name} has no description"));
        assert!(doc.ends_with('.'), "{name}'s description is cut: {doc:?}");
        assert!(doc.starts_with(|c: char| c.is_ascii_uppercase() || c == '`'), "{name}: {doc:?}");
        if let Some(above) = lines[at - 2].strip_prefix("# ") {
            assert!(above.ends_with('.') || above.ends_with(':'), "{name}'s description continues {above:?}");
        }
        let row = if name == "default" { "| `just` |".to_owned() } else { format!("| `just {name}") };
        assert!(readme.contains(&row), "the README's recipe table has no row for {name}");
    }
    assert!(recipes > 20, "{recipes} recipes found");
    assert!(readme.contains("cargo install just --locked") && readme.contains("rust-just"), "how to get just");
    assert!(readme.contains("schema/README.md#adding-an-op"), "how to add an op");
}

//! `run` and `wait_command` with real shells (issue 29, SPEC SH10-SH12): the exit code and text of each command
//! in one persistent shell that keeps its cwd and variables, refusals while a command runs or something was
//! typed, a timeout then `wait_command`, Ctrl-C, a shell that exits, 50 MiB of output, and the opt-in events.

use crate::support;

use std::thread;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use support::{Daemon, eventually, frames_until, message, recv, send};

use super::shell::{SHELLS, Session, at_prompt, commands, create, home, require, session, shell_of, type_line};

/// Sends `run` on a connection of its own and returns the answer.
fn run(daemon: &Daemon, id: u64, command: &str, timeout_ms: Option<u64>) -> Value {
    daemon.request(json!({"op": "run", "id": id, "command": command, "timeout_ms": timeout_ms}))
}

/// A `run` that must finish: its exit code and text.
fn finished(daemon: &Daemon, id: u64, command: &str) -> (Value, String) {
    let answer = run(daemon, id, command, None);
    assert_eq!(answer["type"], "command_finished", "{command}: {answer}");
    (answer["exit_code"].clone(), answer["text"].as_str().expect("text").to_owned())
}

#[test]
fn one_shell_keeps_its_state_across_runs_with_exit_codes_and_text() {
    for shell in SHELLS {
        let Session { daemon, _owner, home, id } = session(shell);
        let tmp = tempfile::tempdir().expect("dir");
        let dir = tmp.path().to_str().expect("utf-8 path");
        let set = if shell == "fish" { "set -gx FOO bar" } else { "export FOO=bar" };
        assert_eq!(finished(&daemon, id, &format!("cd {dir}; {set}")), (json!(0), String::new()), "{shell}");
        let (code, text) = finished(&daemon, id, "echo $FOO; pwd");
        assert_eq!((code, text), (json!(0), format!("bar\n{dir}")), "{shell}: cwd and variables kept");
        assert_eq!(finished(&daemon, id, "false").0, json!(1), "{shell}");
        assert_eq!(finished(&daemon, id, "sh -c 'exit 7'").0, json!(7), "{shell}");
        // The commands list agrees, offsets and all.
        let list = commands(&daemon, id);
        let last = list.last().expect("commands");
        assert_eq!((last["command"].as_str(), &last["exit_code"]), (Some("sh -c 'exit 7'"), &json!(7)), "{shell}");
        // Several lines: one bracketed paste, run as one command: one exit code, one text.
        assert_eq!(finished(&daemon, id, "echo a\necho b"), (json!(0), "a\nb".to_owned()), "{shell}");
        assert_eq!(finished(&daemon, id, "echo c\nfalse").0, json!(1), "{shell}: the status of the last line");
        // `pty.input` says the shell waits at its prompt.
        let got = daemon.request(json!({"op": "get", "id": id, "features": ["input"]}));
        assert_eq!(got["process"]["pty"]["input"], "prompt", "{shell}: {got}");
        // The user's own prompt command (bash) and precmd (zsh) ran at every prompt beside ours.
        let own = match shell {
            "bash" => Some("pc.log"),
            "zsh" => Some("zpc.log"),
            _ => None,
        };
        if let Some(log) = own {
            let runs = std::fs::read_to_string(home.path().join(log)).expect("the user's prompt command ran");
            assert!(runs.lines().count() >= 6, "{shell}: {runs:?}");
        }
    }
}

#[test]
fn run_is_refused_while_a_command_runs_or_something_was_typed_and_a_timeout_leaves_it_running() {
    let Session { daemon, _owner, home, id } = session("bash");
    // Typed at the prompt: run refuses, and nothing is typed for it.
    let data = BASE64.encode("echo typed");
    let typed = daemon.request(json!({"op": "write", "id": id, "attachment_id": null, "data_base64": data}));
    assert_eq!(typed["type"], "ok");
    let refused = run(&daemon, id, "true", None);
    assert!(message(&refused).contains("something was typed at the prompt"), "{refused}");
    type_line(&daemon, id, "");
    eventually("the typed line to run", || (commands(&daemon, id).len() == 1).then_some(()));
    eventually("the next prompt", || (shell_of(&daemon, id)["state"] == "prompt").then_some(()));
    // A command past its timeout keeps running; run is refused meanwhile; wait_command gets its end.
    let fifo = home.path().join("go");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let running = run(&daemon, id, &format!("echo before; read x < {}; echo after", fifo.display()), Some(200));
    assert_eq!(running["type"], "command_running", "{running}");
    let command_id = running["command_id"].as_u64().expect("command id");
    assert_eq!(command_id, 2);
    let refused = run(&daemon, id, "true", None);
    assert!(message(&refused).contains("is running command 2"), "{refused}");
    let again = daemon.request(json!({"op": "wait_command", "id": id, "command_id": 2, "timeout_ms": 100}));
    assert_eq!(again["type"], "command_running", "{again}");
    assert!(again["output_start"].is_u64(), "{again}");
    // Two wait for it; both get its end with the text from the start.
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let mut stream = daemon.connect();
            send(&mut stream, &daemon.envelope(json!({"op": "wait_command", "id": id, "command_id": 2})));
            stream
        })
        .collect();
    // Whether each is registered before the command's end or after it, it gets the same answer.
    std::fs::write(&fifo, "go\n").expect("write the fifo");
    for mut stream in waiters {
        let answer = recv(&mut stream).expect("an answer");
        assert_eq!(answer["type"], "command_finished", "{answer}");
        assert_eq!((answer["command_id"].as_u64(), answer["exit_code"].as_u64()), (Some(2), Some(0)));
        assert_eq!(answer["text"], "before\nafter", "{answer}");
        assert_eq!(answer["truncated"], false);
    }
    // Asked again once it ended: answered at once, the same way.
    let late = daemon.request(json!({"op": "wait_command", "id": id, "command_id": 2}));
    assert_eq!((late["type"].as_str(), late["text"].as_str()), (Some("command_finished"), Some("before\nafter")));
    let unknown = daemon.request(json!({"op": "wait_command", "id": id, "command_id": 99}));
    assert!(message(&unknown).contains("no command 99"), "{unknown}");
}

#[test]
fn ctrl_c_through_input_during_a_run_ends_it_with_130() {
    for shell in SHELLS {
        let Session { daemon, _owner, home: _home, id } = session(shell);
        let answer = thread::scope(|scope| {
            let waiting = scope.spawn(|| run(&daemon, id, "sleep 30", Some(60_000)));
            eventually("sleep to run", || {
                let got = daemon.request(json!({"op": "get", "id": id}));
                (got["process"]["pty"]["foreground_process"] == "sleep").then_some(())
            });
            // Typed by the controller, through `input`.
            let (_controller, attached) = daemon.subscribe(id, "me", "controller");
            assert_eq!(attached["type"], "attached", "{attached}");
            let data = BASE64.encode("\x03");
            let input = json!({"op": "input", "id": id, "attachment_id": "me", "cols": 100, "rows": 30,
                               "data_base64": data});
            assert_eq!(daemon.request(input)["type"], "ok");
            waiting.join().expect("the run")
        });
        assert_eq!(answer["type"], "command_finished", "{shell}: {answer}");
        assert_eq!(answer["exit_code"], 130, "{shell}: {answer}");
    }
}

#[test]
fn a_command_that_exits_the_shell_answers_an_error_and_so_does_a_terminal_without_integration() {
    let Session { daemon, _owner, home: _home, id } = session("bash");
    let answer = run(&daemon, id, "exit 3", None);
    assert!(message(&answer).contains("its shell exited while command 1 ran"), "{answer}");
    let after = run(&daemon, id, "true", None);
    assert!(message(&after).contains("its shell has exited"), "{after}");
    let plain = daemon.request(support::create_sh("sleep 30"));
    let plain = plain["process"]["id"].as_u64().expect("id");
    let refused = run(&daemon, plain, "true", None);
    assert!(message(&refused).contains("was not started with shell integration"), "{refused}");
    for (command, says) in [("", "command is empty"), ("a\u{1b}b", "control character U+001B")] {
        let refused = run(&daemon, id, command, None);
        assert!(message(&refused).contains(says), "{command:?}: {refused}");
    }
}

#[test]
fn fifty_mebibytes_of_output_keep_exact_offsets_and_a_truncated_text_with_head_and_tail() {
    let Session { daemon, _owner, home: _home, id } = session("bash");
    // 524288 rows of 99 digits and a newline (the terminal makes it \r\n): 50 MiB and 512 KiB of output.
    let rows = 524_288u64;
    let command = format!("seq -f '%099g' 1 {rows}");
    let answer = run(&daemon, id, &command, Some(600_000));
    assert_eq!(answer["type"], "command_finished", "{}", &answer.to_string()[..200]);
    assert_eq!(answer["exit_code"], 0);
    let (start, end) = (answer["output_start"].as_u64().unwrap(), answer["output_end"].as_u64().unwrap());
    assert_eq!(end - start, rows * 101, "exact offsets: every byte of the output, nothing else");
    assert_eq!(answer["truncated"], true);
    let text = answer["text"].as_str().expect("text");
    assert!(text.len() <= 1 << 20, "within the budget: {}", text.len());
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines[0], format!("{:099}", 1), "the head starts with the first row");
    assert_eq!(*lines.last().unwrap(), format!("{rows:099}"), "the tail ends with the last");
    assert!(lines.iter().any(|line| line.starts_with("[... ") && line.ends_with(" rows left out ...]")));
}

#[test]
fn a_subscriber_that_opts_in_gets_command_events_between_the_right_bytes() {
    let Session { daemon, _owner, home: _home, id } = session("bash");
    let mut stream = daemon.connect();
    let subscribe = json!({"op": "subscribe", "id": id, "offset": 0, "attachment_id": "agent", "role": "observer",
                           "takeover": false, "events": ["commands", "input"]});
    send(&mut stream, &daemon.envelope(subscribe));
    let attached = recv(&mut stream).expect("attached");
    assert_eq!(attached["process"]["pty"]["shell"]["state"], "prompt", "{attached}");
    let mut output = support::replay_of(&attached);
    let mut plain_stream = daemon.connect();
    let plain = json!({"op": "subscribe", "id": id, "offset": 0, "attachment_id": "plain", "role": "observer",
                       "takeover": false});
    send(&mut plain_stream, &daemon.envelope(plain));
    let plain_attached = recv(&mut plain_stream).expect("attached");
    assert!(plain_attached["process"]["pty"].get("shell").is_none(), "{plain_attached}");
    let answer = run(&daemon, id, "printf 'one\\ntwo\\n'", None);
    assert_eq!(answer["text"], "one\ntwo");
    let (start, end) = (answer["output_start"].as_u64().unwrap(), answer["output_end"].as_u64().unwrap());
    // Each event comes when the output read so far (from offset 0) ends exactly at its offset.
    let mut at = Vec::new();
    let mut seen = Vec::new();
    while !seen.iter().any(|e: &Value| e["type"] == "command_finished") {
        let events = frames_until(&mut stream, &mut output, "an event", |_, events| !events.is_empty());
        for event in events {
            at.push(output.len() as u64);
            seen.push(event);
        }
    }
    let started = seen.iter().position(|e| e["type"] == "command_started").expect("command_started");
    assert_eq!(seen[started]["output_start"], start);
    assert_eq!(seen[started]["command"], "printf 'one\\ntwo\\n'");
    assert_eq!(at[started], start, "command_started right after the output before it");
    let done = seen.iter().position(|e| e["type"] == "command_finished").expect("command_finished");
    assert_eq!((at[done], &seen[done]["output_end"], &seen[done]["exit_code"]), (end, &json!(end), &json!(0)));
    assert!(seen[done].get("text").is_none(), "events carry no text: {}", seen[done]);
    // The subscriber that named no feature got none of these.
    drop(daemon.request(json!({"op": "terminate", "id": id})));
    let (_, plain_events) = support::read_subscription(&mut plain_stream, &plain_attached);
    assert!(
        plain_events.iter().all(|e| !["command_started", "command_finished", "input_changed"]
            .contains(&e["type"].as_str().unwrap_or_default())),
        "{plain_events:?}"
    );
}

#[test]
fn a_run_outlives_the_first_request_deadline_and_a_quiet_command_is_not_cut() {
    require("bash");
    // The first-request deadline and the idle wait of connection threads shortened to 300 ms: a `run` holds its
    // connection for as long as its command, quiet or not, and its own timeout say.
    let daemon = Daemon::start_with(&["--first-request-timeout-ms", "300", "--worker-linger-ms", "300"]);
    let _owner = daemon.own();
    let home = home();
    let id = at_prompt(&daemon, "bash", home.path());
    let started = std::time::Instant::now();
    let answer = run(&daemon, id, "sleep 2; echo woke", Some(60_000));
    assert_eq!((answer["type"].as_str(), answer["text"].as_str()), (Some("command_finished"), Some("woke")));
    assert!(started.elapsed() >= std::time::Duration::from_secs(2), "answered at the command's end");
    let refused = run(&daemon, id, "true", Some(86_400_001));
    assert!(message(&refused).contains("timeout_ms must be at most 86400000"), "{refused}");
}

#[test]
fn several_lines_without_bracketed_paste_are_refused_after_the_prompt() {
    require("bash");
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let home = home();
    // Without readline, bash never enables bracketed paste.
    let vars = json!({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home.path()});
    let created = daemon.request(json!({"op": "create_pty", "program": "bash", "args": ["--noediting"],
        "cwd": home.path(), "env": vars, "group_id": "g", "title": "t", "cols": 80, "rows": 24,
        "shell_integration": true}));
    let id = created["process"]["id"].as_u64().expect("id");
    eventually("the first prompt", || (shell_of(&daemon, id)["state"] == "prompt").then_some(()));
    let refused = run(&daemon, id, "echo a\necho b", None);
    assert!(message(&refused).contains("needs bracketed paste"), "{refused}");
    // Nothing was typed: the shell still takes a command of one line.
    assert_eq!(finished(&daemon, id, "echo one"), (json!(0), "one".to_owned()));
}

#[test]
fn the_command_line_runs_a_command_with_its_exit_code_and_lists_the_shell_state() {
    require("bash");
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let home = home();
    // Not waited for: `run` waits for the first prompt itself.
    let id = create(&daemon, "bash", home.path(), home.path(), &[]);
    let cli = |args: &[&str]| {
        // The location goes before the command's words (`--` ends the options).
        let (head, words) = args.split_at(args.iter().position(|a| *a == "--").unwrap_or(args.len()));
        let mut command = std::process::Command::new(support::binary());
        command.args(head).args(["--name", &daemon.name, "--runtime-dir"]).arg(daemon.root.path()).args(words);
        support::run_bounded(command, b"", support::WAIT * 2)
    };
    let id_arg = id.to_string();
    let out = cli(&["run", &id_arg, "--", "echo", "hi;", "echo", "there"]);
    assert_eq!((String::from_utf8_lossy(&out.stdout).as_ref(), out.status.code()), ("hi\nthere\n", Some(0)));
    let out = cli(&["run", &id_arg, "--", "sh -c 'exit 3'"]);
    assert_eq!((out.stdout.is_empty(), out.status.code()), (true, Some(3)));
    let list = cli(&["list"]);
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(list.contains("running (at its prompt)"), "{list}");
    // Past --timeout the command goes on and run says so, exiting 124; list shows what runs.
    let out = cli(&["run", "--timeout", "0", &id_arg, "--", "sleep 30"]);
    assert_eq!(out.status.code(), Some(124), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is still running"));
    eventually("list to show the running command", || {
        let list = cli(&["list"]);
        let list = String::from_utf8_lossy(&list.stdout).into_owned();
        (list.contains("running (runs a command)") && list.contains("[running: sleep 30]")).then_some(())
    });
    let refused = cli(&["run", &id_arg, "--", "true"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is running command 3"));
}

#[test]
fn terminating_the_terminal_answers_a_waiting_run_with_an_error() {
    let Session { daemon, _owner, home: _home, id } = session("bash");
    let answer = thread::scope(|scope| {
        let waiting = scope.spawn(|| run(&daemon, id, "sleep 60", Some(120_000)));
        eventually("sleep to run", || {
            let got = daemon.request(json!({"op": "get", "id": id}));
            (got["process"]["pty"]["foreground_process"] == "sleep").then_some(())
        });
        assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
        waiting.join().expect("the run")
    });
    let said = message(&answer);
    assert!(said.contains("terminated while the command was waited for") || said.contains("shell exited"), "{answer}");
}

#[test]
fn input_typed_ahead_that_joins_the_line_is_told_and_a_tab_is_typed_not_completed() {
    let Session { daemon, _owner, home, id } = session("bash");
    let running = run(&daemon, id, "sleep 1", Some(0));
    assert_eq!(running["type"], "command_running", "{running}");
    // Typed while `sleep` runs: the terminal keeps it for the next prompt's line.
    let data = BASE64.encode("abc");
    let typed = daemon.request(json!({"op": "write", "id": id, "attachment_id": null, "data_base64": data}));
    assert_eq!(typed["type"], "ok");
    let done = daemon.request(json!({"op": "wait_command", "id": id, "command_id": 1}));
    assert_eq!(done["type"], "command_finished", "{done}");
    let joined = run(&daemon, id, "echo X", None);
    assert!(message(&joined).contains("rather than the command run typed"), "{joined}");
    assert!(message(&joined).contains("`abcecho X`"), "{joined}");
    eventually("the prompt", || (shell_of(&daemon, id)["state"] == "prompt").then_some(()));
    // A tab goes in a bracketed paste: typed as it is, never a completion.
    std::fs::write(home.path().join("a-file-to-complete"), "").expect("a file");
    let (code, text) = finished(&daemon, id, "printf '%s\\n' 'a-f\t'");
    assert_eq!((code, text.trim_end()), (json!(0), "a-f"), "the tab printed as a tab, not completed");
}

//! Shell integration with real shells (issue 29, SPEC §10): bash, zsh and fish started with `shell_integration`
//! read the user's own start-up files, keep the environment as given, report their prompt, working directory
//! and commands (command line, offsets, exit code), and a mark without the terminal's nonce ends nothing.
//!
//! These tests watch the shell through `get` and `commands` (polled within `WAIT`), as a client that does not
//! subscribe would; `run.rs` has `run`, `wait_command` and the opt-in events.

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use support::{Daemon, eventually, message};

/// The shells shell integration supports.
pub(super) const SHELLS: [&str; 3] = ["bash", "zsh", "fish"];

/// Panics with a clear message unless `shell` can be run.
pub(super) fn require(shell: &str) {
    let found = Command::new(shell).arg("-c").arg("exit 0").stdin(Stdio::null()).status();
    if !found.is_ok_and(|status| status.success()) {
        panic!("this test needs {shell} on PATH (.ci/run installs it: apt-get install {shell})");
    }
}

/// A home folder whose start-up files, for every shell, write `<shell>-rc` into it when they run and export
/// `USER_RC=yes`; zsh's also sets `nounset` and a `precmd` of its own, writing `zpc.log`.
pub(super) fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("home");
    let path = home.path();
    let write = |name: &str, text: &str| {
        let file = path.join(name);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("folder");
        std::fs::write(file, text).expect("start-up file");
    };
    write(
        ".bashrc",
        "echo read >> \"$HOME/bash-rc\"\nexport USER_RC=yes\nPROMPT_COMMAND='echo pc >> \"$HOME/pc.log\"'\n",
    );
    write(
        ".zshrc",
        "echo read >> \"$HOME/zsh-rc\"\nexport USER_RC=yes\nsetopt nounset\nprecmd() { echo zpc >> \"$HOME/zpc.log\" }\n",
    );
    write(".config/fish/config.fish", "echo read >> \"$HOME/fish-rc\"\nset -gx USER_RC yes\n");
    home
}

/// Starts `shell` with shell integration in `cwd`, with only `PATH`, `HOME` and `env` in its request.
pub(super) fn create(daemon: &Daemon, shell: &str, home: &Path, cwd: &Path, env: &[(&str, &str)]) -> u64 {
    let mut vars = json!({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"});
    for (name, value) in env {
        vars[name] = json!(value);
    }
    let created = daemon.request(json!({"op": "create_pty", "program": shell, "args": [], "cwd": cwd, "env": vars,
        "group_id": "shell", "title": shell, "cols": 100, "rows": 30, "shell_integration": true}));
    assert_eq!(created["type"], "created", "{created}");
    // Starting, unless the shell was quick enough to reach its prompt before the answer.
    let shell = &created["process"]["pty"]["shell"];
    assert!(shell["state"] == "starting" || shell["state"] == "prompt", "{created}");
    assert_eq!(shell["command_id"], Value::Null, "{created}");
    created["process"]["id"].as_u64().expect("id")
}

/// An owned daemon with one terminal of `shell` (which must be installed) started with shell integration in a
/// fresh home, at its first prompt.
pub(super) struct Session {
    pub(super) daemon: Daemon,
    pub(super) _owner: std::os::unix::net::UnixStream,
    pub(super) home: tempfile::TempDir,
    pub(super) id: u64,
}

/// A [`Session`] of `shell`.
pub(super) fn session(shell: &str) -> Session {
    require(shell);
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let home = home();
    let id = at_prompt(&daemon, shell, home.path());
    Session { daemon, _owner, home, id }
}

/// A terminal of `shell` with shell integration in `home`, at its first prompt.
pub(super) fn at_prompt(daemon: &Daemon, shell: &str, home: &Path) -> u64 {
    let id = create(daemon, shell, home, home, &[]);
    eventually(&format!("{shell}'s first prompt"), || (shell_of(daemon, id)["state"] == "prompt").then_some(()));
    id
}

/// `pty.shell` as `get` reports it to a request that names the feature `commands`.
pub(super) fn shell_of(daemon: &Daemon, id: u64) -> Value {
    let got = daemon.request(json!({"op": "get", "id": id, "features": ["commands"]}));
    got["process"]["pty"]["shell"].clone()
}

/// The terminal's commands.
pub(super) fn commands(daemon: &Daemon, id: u64) -> Vec<Value> {
    let answer = daemon.request(json!({"op": "commands", "id": id}));
    assert_eq!(answer["type"], "commands", "{answer}");
    answer["commands"].as_array().expect("commands").clone()
}

/// Waits until the shell is at its prompt with `count` commands finished, and returns them.
fn finished(daemon: &Daemon, id: u64, count: usize) -> Vec<Value> {
    eventually(&format!("{count} finished commands of terminal {id}"), || {
        let list = commands(daemon, id);
        let done = list.len() == count && list.iter().all(|c| !c["exit_code"].is_null());
        (done && shell_of(daemon, id)["state"] == "prompt").then_some(list)
    })
}

/// Types `line` and Enter.
pub(super) fn type_line(daemon: &Daemon, id: u64, line: &str) {
    let data = BASE64.encode(format!("{line}\r"));
    let answer = daemon.request(json!({"op": "write", "id": id, "attachment_id": null, "data_base64": data}));
    assert_eq!(answer["type"], "ok", "{answer}");
}

/// The output between two offsets, from the replay, without what the shell itself writes there: fish's start
/// mark comes before it resets the terminal for the command (bracketed paste off, the title, the pen, `\r`),
/// and zsh's end mark after what it writes when the command left a partial line (PROMPT_SP: a reverse-video `%`
/// or `#`, spaces, `\r \r`); both are cut off here (SPEC §10 says so).
fn output_between(daemon: &Daemon, shell: &str, id: u64, start: u64, end: u64) -> String {
    let replay = daemon.request(json!({"op": "replay", "id": id, "offset": start}));
    assert_eq!(replay["available_offset"], start, "{replay}");
    let bytes = BASE64.decode(replay["data_base64"].as_str().expect("data")).expect("base64");
    let mut text = String::from_utf8_lossy(&bytes[..(end - start) as usize]).into_owned();
    if shell == "fish"
        && text.starts_with("\x1b[?2004l")
        && let Some(at) = text.find("\x1b[m\r")
    {
        text = text[at + 4..].to_owned();
    }
    match text.find("\x1b[1m\x1b[7m") {
        Some(at) if shell == "zsh" && text[at..].ends_with("\r \r") => text[..at].to_owned(),
        _ => text,
    }
}

#[test]
fn each_shell_reports_its_prompt_cwd_and_commands_with_offsets_and_exit_codes() {
    for shell in SHELLS {
        require(shell);
        let daemon = Daemon::start();
        let _owner = daemon.own();
        let home = home();
        let work = tempfile::tempdir().expect("work");
        let id = create(&daemon, shell, home.path(), work.path(), &[]);
        eventually(&format!("{shell}'s first prompt"), || (shell_of(&daemon, id)["state"] == "prompt").then_some(()));
        let cwd = work.path().to_str().expect("utf-8");
        assert_eq!(shell_of(&daemon, id), json!({"state": "prompt", "command_id": null, "cwd": cwd}), "{shell}");
        // The user's own start-up file ran, once.
        let rc = std::fs::read_to_string(home.path().join(format!("{shell}-rc"))).expect("the user's file ran");
        assert_eq!(rc, "read\n", "{shell}");

        type_line(&daemon, id, "echo out-$USER_RC");
        let first = &finished(&daemon, id, 1)[0];
        assert_eq!(first["command_id"], 1, "{shell}: {first}");
        assert_eq!(first["command"], "echo out-$USER_RC", "{shell}");
        assert_eq!(first["cwd"], cwd, "{shell}");
        assert_eq!(first["exit_code"], 0, "{shell}");
        let (start, end) = (first["output_start"].as_u64().unwrap(), first["output_end"].as_u64().unwrap());
        assert_eq!(output_between(&daemon, shell, id, start, end), "out-yes\r\n", "{shell}: the command's own output");

        type_line(&daemon, id, "cd /tmp; false");
        let list = finished(&daemon, id, 2);
        assert_eq!((&list[1]["command"], &list[1]["exit_code"]), (&json!("cd /tmp; false"), &json!(1)), "{shell}");
        assert!(list[1]["output_start"].as_u64() >= list[0]["output_end"].as_u64(), "{shell}: {list:?}");
        assert_eq!(shell_of(&daemon, id)["cwd"], "/tmp", "{shell}");

        // A running command is the shell's state, and `limit` takes the newest.
        type_line(&daemon, id, "read line");
        let running = eventually(&format!("{shell}'s running command"), || {
            let state = shell_of(&daemon, id);
            (state["state"] == "running").then_some(state)
        });
        assert_eq!(running["command_id"], 3, "{shell}");
        let answer = daemon.request(json!({"op": "commands", "id": id, "limit": 1}));
        let newest = answer["commands"].as_array().expect("commands");
        assert_eq!(newest.len(), 1);
        assert_eq!((&newest[0]["command"], &newest[0]["exit_code"]), (&json!("read line"), &Value::Null));
        type_line(&daemon, id, "x");
        assert_eq!(finished(&daemon, id, 3)[2]["exit_code"], 0, "{shell}");
        if shell == "zsh" {
            let log = std::fs::read_to_string(home.path().join("zpc.log")).expect("the user's precmd ran");
            assert!(log.lines().count() >= 3, "{log}");
        }
    }
}

#[test]
fn marks_without_the_nonce_start_and_end_nothing() {
    for shell in SHELLS {
        require(shell);
        let daemon = Daemon::start();
        let _owner = daemon.own();
        let home = home();
        // What `cat` prints: an end with status 7 and a prompt, bare and with someone else's nonce.
        let forged = "\x1b]133;D;7\x07\x1b]133;A\x07\x1b]133;D;7;opty=00000000000000000000000000000000.99\x07forged\n";
        std::fs::write(home.path().join("forged.log"), forged).expect("log");
        let id = at_prompt(&daemon, shell, home.path());
        type_line(&daemon, id, "cat forged.log; sleep 0.2; echo after");
        let list = finished(&daemon, id, 1);
        assert_eq!(list[0]["exit_code"], 0, "{shell}: {list:?}");
        let (start, end) = (list[0]["output_start"].as_u64().unwrap(), list[0]["output_end"].as_u64().unwrap());
        // The forged marks stay in the output, as the child wrote them.
        assert_eq!(
            output_between(&daemon, shell, id, start, end),
            forged.replace('\n', "\r\n") + "after\r\n",
            "{shell}"
        );
    }
}

#[test]
fn the_environment_stays_as_given_and_the_user_prompt_command_still_runs() {
    for shell in SHELLS {
        require(shell);
        let daemon = Daemon::start();
        let _owner = daemon.own();
        let home = home();
        let zdotdir = home.path().join("zdot");
        std::fs::create_dir_all(&zdotdir).expect("zdotdir");
        std::fs::write(zdotdir.join(".zshrc"), "echo zdot >> \"$HOME/zsh-rc\"\nexport USER_RC=yes\n").expect("zshrc");
        let zdotdir = zdotdir.to_str().expect("utf-8").to_owned();
        let id = create(&daemon, shell, home.path(), home.path(), &[("ZDOTDIR", &zdotdir), ("MINE", "1")]);
        eventually("the first prompt", || (shell_of(&daemon, id)["state"] == "prompt").then_some(()));
        type_line(&daemon, id, "env > env.txt");
        finished(&daemon, id, 1);
        let env = std::fs::read_to_string(home.path().join("env.txt")).expect("env");
        assert!(env.lines().any(|line| line == "MINE=1"), "{shell}: {env}");
        assert!(env.lines().any(|line| line == format!("ZDOTDIR={zdotdir}")), "{shell}: {env}");
        assert!(!env.contains("opty"), "{shell}: nothing of ours in the environment: {env}");
        if shell == "zsh" {
            // The user's ZDOTDIR was theirs while their files ran.
            let rc = std::fs::read_to_string(home.path().join("zsh-rc")).expect("zshrc");
            assert_eq!(rc, "zdot\n");
        }
        if shell == "bash" {
            let log = std::fs::read_to_string(home.path().join("pc.log")).expect("the user's PROMPT_COMMAND ran");
            assert!(log.lines().count() >= 2, "{log}");
        }
    }
}

#[test]
fn other_programs_and_terminals_without_integration_are_refused_clearly() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let refused = daemon.request(json!({"op": "create_pty", "program": "sh", "args": [], "cwd": "/", "env": {},
        "group_id": "g", "title": "t", "cols": 80, "rows": 24, "shell_integration": true}));
    assert!(message(&refused).contains("bash, zsh and fish"), "{refused}");
    let plain = daemon.request(support::create_sh("read x"));
    let id = plain["process"]["id"].as_u64().expect("id");
    assert!(plain["process"]["pty"].get("shell").is_none(), "{plain}");
    let answer = daemon.request(json!({"op": "commands", "id": id}));
    assert_eq!(message(&answer), format!("process {id} was not started with shell integration"));
}

#[test]
fn the_script_lives_in_the_runtime_directory_until_its_terminal_ends() {
    require("bash");
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let home = home();
    let id = create(&daemon, "bash", home.path(), home.path(), &[]);
    let scripts = daemon.dir().join("shell");
    assert_eq!(std::fs::read_dir(&scripts).expect("the scripts' folder").count(), 1);
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    assert_eq!(std::fs::read_dir(&scripts).expect("the scripts' folder").count(), 0);
}

#[test]
fn a_command_that_exits_the_shell_ends_with_the_output() {
    for shell in SHELLS {
        let Session { daemon, _owner, home: _home, id } = session(shell);
        type_line(&daemon, id, "exit 3");
        let process = eventually(&format!("{shell} to exit"), || {
            let got = daemon.request(json!({"op": "get", "id": id}));
            (got["process"]["lifecycle"]["status"] == "exited").then_some(got)
        });
        assert_eq!(process["process"]["lifecycle"]["exit_code"], 3, "{shell}");
        let list = commands(&daemon, id);
        let last = list.last().expect("the exit command");
        assert_eq!(last["command"], "exit 3", "{shell}");
        if shell == "fish" {
            // fish's postexec event comes before it exits: the end mark has the status.
            assert_eq!(last["exit_code"], 3, "{shell}");
            assert!(last["output_end"].as_u64() <= process["process"]["output_tail"].as_u64(), "{shell}");
        } else {
            // No end mark: the command ended where the output did, without a status of its own.
            assert_eq!(last["exit_code"], Value::Null, "{shell}");
            assert_eq!(last["output_end"], process["process"]["output_tail"], "{shell}");
        }
        assert!(!last["finished_at"].is_null(), "{shell}");
        assert_eq!(shell_of(&daemon, id)["command_id"], Value::Null, "{shell}");
    }
}

#[test]
fn login_shells_read_the_login_files_and_still_report_their_commands() {
    for shell in SHELLS {
        require(shell);
        let daemon = Daemon::start();
        let _owner = daemon.own();
        let home = home();
        let write = |name: &str, text: &str| std::fs::write(home.path().join(name), text).expect("start-up file");
        write(".bash_profile", "echo profile >> \"$HOME/bash-login\"\n");
        write(".zprofile", "echo zprofile >> \"$HOME/zsh-login\"\n");
        write(".zlogin", "echo zlogin >> \"$HOME/zsh-login\"\n");
        let vars = json!({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home.path(), "LANG": "C.UTF-8"});
        let created = daemon.request(json!({"op": "create_pty", "program": shell, "args": ["-l"], "cwd": home.path(),
            "env": vars, "group_id": "shell", "title": shell, "cols": 100, "rows": 30, "shell_integration": true}));
        assert_eq!(created["process"]["command"], json!([shell, "-l"]), "the request's command is reported");
        let id = created["process"]["id"].as_u64().expect("id");
        eventually(&format!("{shell}'s first prompt"), || (shell_of(&daemon, id)["state"] == "prompt").then_some(()));
        type_line(&daemon, id, "true");
        assert_eq!(finished(&daemon, id, 1)[0]["exit_code"], 0, "{shell}");
        match shell {
            "bash" => {
                let login = std::fs::read_to_string(home.path().join("bash-login")).expect("bash's login file");
                assert_eq!(login, "profile\n");
                // A login shell reads ~/.bash_profile, not ~/.bashrc (this one does not source it).
                assert!(!home.path().join("bash-rc").exists());
            }
            "zsh" => {
                let login = std::fs::read_to_string(home.path().join("zsh-login")).expect("zsh's login files");
                assert_eq!(login, "zprofile\nzlogin\n");
                assert_eq!(std::fs::read_to_string(home.path().join("zsh-rc")).expect(".zshrc"), "read\n");
            }
            _ => {
                assert_eq!(std::fs::read_to_string(home.path().join("fish-rc")).expect("config.fish"), "read\n");
            }
        }
    }
}

#[test]
fn ctrl_c_ends_a_running_command_with_the_shell_status_of_an_interrupt() {
    for shell in SHELLS {
        let Session { daemon, _owner, home: _home, id } = session(shell);
        type_line(&daemon, id, "sleep 30");
        // Interrupted once it runs (an interrupt during fish's preexec event cancels the command before it
        // starts, and fish then writes no end mark: it ends at the next prompt without a status).
        eventually("sleep to run", || {
            let got = daemon.request(json!({"op": "get", "id": id, "features": ["commands"]}));
            let pty = &got["process"]["pty"];
            (pty["shell"]["state"] == "running" && pty["foreground_process"] == "sleep").then_some(())
        });
        let data = BASE64.encode("\x03");
        let answer = daemon.request(json!({"op": "write", "id": id, "attachment_id": null, "data_base64": data}));
        assert_eq!(answer["type"], "ok", "{answer}");
        assert_eq!(finished(&daemon, id, 1)[0]["exit_code"], 130, "{shell}");
    }
}

#[test]
fn a_long_output_keeps_exact_offsets_past_the_replay() {
    require("bash");
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let home = home();
    let id = create(&daemon, "bash", home.path(), home.path(), &[]);
    eventually("the first prompt", || (shell_of(&daemon, id)["state"] == "prompt").then_some(()));
    // 16 MiB without a newline: the PTY changes none of it, so the command's output is exactly that long.
    let size = 16 << 20;
    type_line(&daemon, id, &format!("head -c {size} /dev/zero | tr '\\0' x"));
    let command = &finished(&daemon, id, 1)[0];
    let (start, end) = (command["output_start"].as_u64().unwrap(), command["output_end"].as_u64().unwrap());
    assert_eq!(end - start, size, "{command}");
    // The replay (2 MiB by default) no longer holds the start; it still ends with the command's last bytes.
    let replay = daemon.request(json!({"op": "replay", "id": id, "offset": start}));
    assert_eq!(replay["truncated"], true, "{}", replay["available_offset"]);
}

#[test]
fn bash_keeps_the_user_prompt_command_array_and_debug_trap_and_records_every_line() {
    require("bash");
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let home = home();
    let rc = "PROMPT_COMMAND=('echo one >> \"$HOME/pc.log\"' 'echo two-$? >> \"$HOME/pc.log\"')\n\
              trap 'echo trap >> \"$HOME/trap.log\"' DEBUG\nHISTCONTROL=ignorespace\nset -u\n";
    std::fs::write(home.path().join(".bashrc"), rc).expect(".bashrc");
    let id = create(&daemon, "bash", home.path(), home.path(), &[]);
    eventually("the first prompt", || (shell_of(&daemon, id)["state"] == "prompt").then_some(()));
    // A line that is only a subshell, then one bash keeps out of its history.
    type_line(&daemon, id, "(exit 4)");
    assert_eq!(finished(&daemon, id, 1)[0]["exit_code"], 4);
    type_line(&daemon, id, " echo secret");
    let list = finished(&daemon, id, 2);
    assert_eq!((&list[0]["command"], &list[1]["command"]), (&json!("(exit 4)"), &json!("")), "{list:?}");
    let log = std::fs::read_to_string(home.path().join("pc.log")).expect("the user's prompt commands ran");
    // Both elements, each prompt, the second seeing the command's status.
    assert!(log.contains("one\ntwo-4\none\ntwo-0\n"), "{log}");
    assert!(std::fs::read_to_string(home.path().join("trap.log")).is_ok_and(|log| log.contains("trap")));
}

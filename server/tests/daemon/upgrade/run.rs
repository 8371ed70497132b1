//! `run` and `wait_command` across an upgrade, through the real binary and bash with shell integration: a `run`
//! the upgrade cut (its connection closed unanswered) leaves its command running in the new image, whose
//! `wait_command` answers with its exit code and text once it ends; a `run` right after the upgrade is carried
//! out, and so is one once the command has ended.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use super::{private_copy, upgrade};
use crate::shell::{Session, at_prompt, session, shell_of};
use crate::support::{Daemon, eventually, recv, send};

/// `run` of `command` in terminal `id` on a connection of its own, answered when it ends: its type, command
/// id, exit code and text.
fn run(daemon: &Daemon, id: u64, command: &str) -> (Value, Value, Value, Value) {
    let answer = daemon.request(json!({"op": "run", "id": id, "command": command}));
    (answer["type"].clone(), answer["command_id"].clone(), answer["exit_code"].clone(), answer["text"].clone())
}

/// What a `read` of terminal `id`'s child waits for (`pty.input`), if it waits for one.
fn input_wait(daemon: &Daemon, id: u64) -> Value {
    daemon.request(json!({"op": "get", "id": id, "features": ["input"]}))["process"]["pty"]["input"].clone()
}

#[test]
fn a_command_run_across_an_upgrade_is_waited_for_after_it_and_run_works_at_once() {
    let Session { daemon, _owner: mut owner, home, id } = session("bash");
    let dir = tempfile::tempdir().unwrap();
    let program = private_copy(dir.path());
    let other = at_prompt(&daemon, "bash", home.path());

    // A `run` without a timeout, held until its command ends: a subshell that reads a line, prints, exits 3.
    let mut cut = daemon.connect();
    let command = "(read -s x; echo \"done $x\"; exit 3)";
    send(&mut cut, &daemon.envelope(json!({"op": "run", "id": id, "command": command})));
    let command_id = eventually("the command to run", || {
        let shell = shell_of(&daemon, id);
        (shell["state"] == "running").then(|| shell["command_id"].as_u64()).flatten()
    });
    eventually("the command to read its line", || {
        let input = input_wait(&daemon, id);
        (input == "password" || input == "line").then_some(())
    });

    assert_eq!(upgrade(&daemon, &mut owner, Some(&program)), json!({"type": "ok"}));
    // The upgrade closed the `run` unanswered; the command runs on in the new image.
    assert_eq!(recv(&mut cut), None, "the run's connection closes without an answer");
    // A `run` in the other terminal, at once, is carried out.
    assert_eq!(run(&daemon, other, "echo after"), (json!("command_finished"), json!(1), json!(0), json!("after")));
    let shell = shell_of(&daemon, id);
    assert_eq!((&shell["state"], shell["command_id"].as_u64()), (&json!("running"), Some(command_id)), "{shell}");
    let running = daemon.request(json!({"op": "wait_command", "id": id, "command_id": command_id, "timeout_ms": 0}));
    assert_eq!((&running["type"], running["command_id"].as_u64()), (&json!("command_running"), Some(command_id)));

    // Asked again, the wait is answered once the command ends, with its exit code and text.
    let mut waiter = daemon.connect();
    send(&mut waiter, &daemon.envelope(json!({"op": "wait_command", "id": id, "command_id": command_id})));
    let line = json!({"op": "write", "id": id, "attachment_id": null, "data_base64": BASE64.encode("go\r")});
    assert_eq!(daemon.request(line), json!({"type": "ok"}));
    let finished = recv(&mut waiter).expect("an answer to wait_command");
    assert_eq!(finished["type"], "command_finished", "{finished}");
    assert_eq!((finished["command_id"].as_u64(), finished["exit_code"].as_u64()), (Some(command_id), Some(3)));
    assert_eq!(finished["text"], "done go", "{finished}");
    // The shell goes on: the next command is numbered after it.
    let next = run(&daemon, id, "echo again");
    assert_eq!(next, (json!("command_finished"), json!(command_id + 1), json!(0), json!("again")));
}

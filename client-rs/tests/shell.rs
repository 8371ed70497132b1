//! The client against the real daemon binary with a real bash (issue 29): one persistent shell driven by
//! `Client::run`, which keeps the shell's variables from one command to the next and answers each command's
//! exit code and text; a `run` whose timeout passes (`Running`), refused while its command runs, then
//! `Client::wait_command` for its end. The daemon is the `opencode-pty` binary built next to this test
//! (`cargo build -p opencode-pty`; `cargo test --workspace` builds it), stopped when the test ends.

use std::path::Path;
use std::time::{Duration, Instant};

use opencode_pty_client::launch::{Launch, LaunchedDaemon};
use opencode_pty_client::{Client, ClientError, CommandOutcome, CreatePty, OptIn, ShellStateState};

/// The longest the test waits for the shell's first prompt: generous for a loaded machine.
const PROMPT_WAIT: Duration = Duration::from_secs(20);

/// How often the shell's state is looked at while waiting for its first prompt.
const POLL: Duration = Duration::from_millis(20);

/// A daemon in a fresh runtime directory and a client for it.
fn start(root: &Path) -> (LaunchedDaemon, Client) {
    let daemon = Launch::new(opencode_pty_testkit::daemon_binary(), root, "shell").start().expect("the daemon starts");
    let client = Client::from_registration(daemon.registration().clone());
    (daemon, client)
}

/// Waits until the terminal's shell shows its first prompt.
async fn first_prompt(client: &Client, id: u64) {
    let deadline = Instant::now() + PROMPT_WAIT;
    loop {
        let info = client.get_with(id, &[OptIn::Commands]).await.expect("get");
        let shell = info.pty.and_then(|pty| pty.shell).expect("pty.shell, asked for");
        if shell.state == ShellStateState::Prompt {
            return;
        }
        assert!(Instant::now() < deadline, "no first prompt within {PROMPT_WAIT:?}: {shell:?}");
        tokio::time::sleep(POLL).await;
    }
}

/// A `run` that must finish: its exit code and text.
async fn finished(client: &Client, id: u64, command: &str) -> (Option<u32>, String) {
    match client.run(id, command, None).await.expect(command) {
        CommandOutcome::Finished(done) => (done.exit_code, done.text.expect("an answer's text")),
        CommandOutcome::Running(running) => panic!("{command}: still running after 30 s: {running:?}"),
    }
}

#[tokio::test]
async fn one_bash_keeps_its_state_across_runs_and_a_timeout_is_waited_out() {
    let root = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("home");
    let (_daemon, client) = start(root.path());
    let _owner = client.own(None).await.expect("own");
    let env = [("HOME", home.path().to_str().expect("UTF-8")), ("PATH", "/usr/local/bin:/usr/bin:/bin")];
    let params = CreatePty {
        env: env.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect(),
        shell_integration: Some(true),
        ..CreatePty::new("bash", home.path().to_str().expect("UTF-8"))
    };
    let id = client.create_pty(params).await.expect("create_pty").id;
    first_prompt(&client, id).await;

    assert_eq!(finished(&client, id, "export X=1").await, (Some(0), String::new()));
    assert_eq!(finished(&client, id, "echo $X").await, (Some(0), "1".to_owned()), "the variable was kept");
    assert_eq!(finished(&client, id, "false").await.0, Some(1));

    let running = client.run(id, "sleep 1; echo slept", Some(0)).await.expect("run");
    let CommandOutcome::Running(running) = running else { panic!("a zero timeout answers at once: {running:?}") };
    let refused = client.run(id, "true", None).await;
    let message = match &refused {
        Err(ClientError::Daemon { message }) => message,
        other => panic!("run while a command runs: {other:?}"),
    };
    assert!(message.contains(&format!("command {}", running.command_id)), "{message}");
    let outcome = client.wait_command(id, running.command_id, None).await.expect("wait_command");
    let CommandOutcome::Finished(done) = outcome else { panic!("the command ends within 30 s: {outcome:?}") };
    assert_eq!((done.command_id, done.exit_code), (running.command_id, Some(0)));
    assert_eq!(done.text.as_deref(), Some("slept"));
    assert!(done.output_end > done.output_start);
    let replay = client.replay(id, done.output_start).await.expect("replay");
    let len = usize::try_from(done.output_end - done.output_start).expect("fits");
    assert_eq!(&replay.bytes[..len], b"slept\r\n", "the offsets span the command's exact output");

    let commands = client.commands(id, None).await.expect("commands").commands;
    let last = commands.last().expect("commands");
    assert_eq!((last.command_id, last.command.as_str()), (running.command_id, "sleep 1; echo slept"));
    client.terminate(id).await.expect("terminate");
}

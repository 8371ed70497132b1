//! `opencode-pty run ID -- COMMAND...`: types a command at the prompt of a terminal started with shell
//! integration, waits for its end, prints its output as text and exits with its exit code (SPEC K3).

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::bail;
use opencode_pty_client::{Client, CommandOutcome, OptIn, ShellStateState};

use super::observe::discover;

/// How long `run` waits for a shell that is still starting to show its first prompt.
const PROMPT_WAIT: Duration = Duration::from_secs(10);

/// How often it looks whether that prompt came.
const PROMPT_POLL: Duration = Duration::from_millis(50);

/// The longest one wait the command line asks the daemon for; it asks again until the command ends (or its
/// own `--timeout` passes).
const WAIT_STEP_MS: u32 = 60_000;

/// The exit code when `--timeout` passed with the command still running (as `timeout(1)` says it).
const STILL_RUNNING: u8 = 124;

/// `run`: the command's text on stdout, its exit code as ours.
pub(super) async fn run(dir: &Path, id: u64, words: &[String], timeout: Option<Duration>) -> anyhow::Result<ExitCode> {
    let client = discover(dir).await?;
    if !client.registration().features.iter().any(|feature| feature == "commands") {
        bail!("this daemon cannot run commands in a terminal (its features lack `commands`)");
    }
    let command = words.join(" ");
    let deadline = timeout.map(|timeout| Instant::now() + timeout);
    wait_for_prompt(&client, id).await?;
    let mut outcome = client.run(id, &command, Some(step(deadline))).await?;
    loop {
        match outcome {
            CommandOutcome::Finished(finished) => {
                let text = finished.text.unwrap_or_default();
                if !text.is_empty() {
                    println!("{text}");
                }
                return Ok(match finished.exit_code {
                    Some(code) => ExitCode::from(u8::try_from(code & 0xff).unwrap_or(u8::MAX)),
                    None => {
                        eprintln!("opencode-pty: command {} ended without an exit status", finished.command_id);
                        ExitCode::FAILURE
                    }
                });
            }
            CommandOutcome::Running(running) => {
                if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                    eprintln!(
                        "opencode-pty: command {} of terminal {id} is still running (`opencode-pty attach {id}` shows it)",
                        running.command_id
                    );
                    return Ok(ExitCode::from(STILL_RUNNING));
                }
                outcome = client.wait_command(id, running.command_id, Some(step(deadline))).await?;
            }
        }
    }
}

/// The next wait to ask for: [`WAIT_STEP_MS`], or what is left before `deadline`.
fn step(deadline: Option<Instant>) -> u32 {
    let left = deadline.map_or(u128::MAX, |deadline| deadline.saturating_duration_since(Instant::now()).as_millis());
    u32::try_from(left.min(u128::from(WAIT_STEP_MS))).unwrap_or(WAIT_STEP_MS)
}

/// Waits, at most [`PROMPT_WAIT`], until a shell that is still starting shows its first prompt; a terminal
/// without shell integration is refused here with the daemon's own words by `run`.
async fn wait_for_prompt(client: &Client, id: u64) -> anyhow::Result<()> {
    let until = Instant::now() + PROMPT_WAIT;
    loop {
        let process = client.get_with(id, &[OptIn::Commands]).await?;
        let starting = process.pty.as_ref().and_then(|pty| pty.shell.as_ref()).map(|shell| shell.state)
            == Some(ShellStateState::Starting);
        if !starting || Instant::now() >= until {
            return Ok(());
        }
        tokio::time::sleep(PROMPT_POLL).await;
    }
}

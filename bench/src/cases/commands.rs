//! Case 7, the cost of `run` (issue 29): `run true` in a bash with shell integration, from the request to its
//! `command_finished`, beside what a client does without it: `input` of `true` and Enter as the controller,
//! then reading the subscription until the shell's next prompt is drawn (its `B` mark has come).

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use opencode_pty_client::{CommandOutcome, CreatePty, DEFAULT_COLS, DEFAULT_ROWS, Event, Role, Subscription};

use crate::daemon::{self, Daemon};
use crate::plan::Context;
use crate::stats::{Row, Table, Unit};

/// The bound of one command's round trip.
const ROUND_TRIP_TIMEOUT: Duration = Duration::from_secs(10);

/// The start of the mark that ends a prompt, in the shell's output (the nonce follows).
const PROMPT_DRAWN: &[u8] = b"\x1b]133;B;";

/// The attachment of the controller.
const ATTACHMENT: &str = "commands";

/// The `run` table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let mut table = Table::new(
        "commands",
        "The cost of run",
        format!(
            "A bash started with `shell_integration` (an empty rcfile, `HOME` a fresh folder). `run`: `run true` on \
             a connection of its own until its `command_finished` (which the daemon answers at the command's end \
             mark), {} per repetition. `input`: what a client does without `run`, as the controller of the same \
             bash: `input` of `true` and Enter, then reading the subscription until the next prompt has been drawn \
             (its B mark), one after each `run`. Milliseconds.",
            plan.echo_samples
        ),
    );
    let by_input = table.add(Row::new("input", "input + reading until the next prompt", Unit::Milliseconds));
    let by_run = table.add(Row::new("run", "run true", Unit::Milliseconds).vs(&["input"]));
    let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
    let client = daemon.client();
    let home = ctx.fresh_dir("home")?;
    std::fs::write(home.join(".bashrc"), "")?;
    let cwd = home.display().to_string();
    let mut params = CreatePty { shell_integration: Some(true), ..CreatePty::new("bash", cwd.clone()) };
    params.env.insert("HOME".into(), cwd);
    params.env.insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
    let id = client.create_pty(params).await?.id;
    let mut subscription = daemon::subscribe(client, id, 0, ATTACHMENT, Role::Controller).await?;
    let mut prompts = Prompts::default();
    let mut drawn = prompts.count(&subscription.attached().replay.clone());
    while drawn == 0 {
        drawn += prompts.read(&mut subscription).await?;
    }
    for _ in 0..plan.repetitions {
        for _ in 0..plan.echo_samples {
            let started = Instant::now();
            let outcome = tokio::time::timeout(ROUND_TRIP_TIMEOUT, client.run(id, "true", None)).await??;
            if !matches!(outcome, CommandOutcome::Finished(ref finished) if finished.exit_code == Some(0)) {
                bail!("run true: {outcome:?}");
            }
            // The prompt that follows, read before the next sample so that `run` finds the shell at it.
            while prompts.read(&mut subscription).await? == 0 {}
            table.push_sample(by_run, started.elapsed().as_secs_f64() * 1000.0);
            let started = Instant::now();
            client.input(id, ATTACHMENT, DEFAULT_COLS, DEFAULT_ROWS, b"true\r").await?;
            while prompts.read(&mut subscription).await? == 0 {}
            table.push_sample(by_input, started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    drop(subscription);
    client.terminate(id).await?;
    daemon.stop().await?;
    Ok(vec![table.finish()])
}

/// Counts the prompts drawn in the output, a mark split between two chunks included.
#[derive(Default)]
struct Prompts {
    /// The end of the last chunk, as long as a mark's start could be in it.
    carry: Vec<u8>,
}

impl Prompts {
    /// The prompts drawn in `bytes`, which follow what was counted before.
    fn count(&mut self, bytes: &[u8]) -> usize {
        self.carry.extend_from_slice(bytes);
        let found = self.carry.windows(PROMPT_DRAWN.len()).filter(|window| *window == PROMPT_DRAWN).count();
        let keep = self.carry.len().min(PROMPT_DRAWN.len() - 1);
        self.carry.drain(..self.carry.len() - keep);
        found
    }

    /// Reads one event and returns the prompts drawn in it.
    async fn read(&mut self, subscription: &mut Subscription) -> Result<usize> {
        let event = tokio::time::timeout(ROUND_TRIP_TIMEOUT, subscription.next()).await.context("no prompt")?;
        match event.context("the subscription ended")?? {
            Event::Output { bytes, .. } => Ok(self.count(&bytes)),
            Event::Message(_) | Event::Resumed(_) => Ok(0),
        }
    }
}

//! Requests beside busy terminals (issue 26): the p50 and p99 of `ping`, `get`, `list`, `create_pty` and
//! `create_pipe` with one idle terminal, then again, in the same run, with `Scale::terminals` terminals printing
//! without pause. Every request must be answered (a create that fails under load is a failure in either
//! scale); the busy figures are judged against the goals only in the full scale.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use opencode_pty_bench::daemon::Daemon;
use opencode_pty_client::{Client, CreatePipe, CreatePty, Mode};

use super::{Scale, quantile};

/// Rounds measured in each phase: of `ping`, `get` and `list` (one of each per round), then of the two creates.
const FULL_ROUNDS: usize = 200;
const QUICK_ROUNDS: usize = 20;

/// How long one phase's rounds may take; fewer rounds are measured when they take longer (as every `list` did
/// before issue 26, when it asked each busy terminal in turn).
const PHASE_BUDGET: Duration = Duration::from_secs(120);

/// How long one request may take before it counts as failed (longer than the client's default, so that a
/// slow answer is measured rather than cut).
const REQUEST_LIMIT: Duration = Duration::from_secs(180);

/// How long the busy terminals may take to all be printing.
const BUSY_WITHIN: Duration = Duration::from_secs(120);

/// The goals with the full number of busy terminals, p99 in milliseconds (`create_pipe` is only reported).
const GOAL_PING_MS: f64 = 50.0;
const GOAL_GET_MS: f64 = 50.0;
const GOAL_LIST_MS: f64 = 100.0;
const GOAL_CREATE_PTY_MS: f64 = 250.0;

/// What a busy terminal runs: it prints without pause.
const BUSY_SCRIPT: &str = "exec yes 'a busy terminal prints this line again and again'";

/// The requests measured, in the order of a round.
const KINDS: [&str; 5] = ["ping", "get", "list", "create_pty", "create_pipe"];

/// Latencies (ms) of one phase, per kind, and the failures seen.
#[derive(Debug, Default)]
struct Phase {
    latencies: [Vec<f64>; 5],
    failures: Vec<String>,
    rounds: usize,
}

impl Phase {
    fn quantiles(&mut self, kind: usize) -> (f64, f64) {
        let values = &mut self.latencies[kind];
        (quantile(values, 0.5), quantile(values, 0.99))
    }
}

/// One request of kind `kind`, timed; a process it created is terminated afterwards (not timed).
async fn one(client: &Client, dir: &Path, target: u64, kind: usize) -> Result<f64> {
    let cwd = dir.display().to_string();
    let started = Instant::now();
    let created = match kind {
        0 => client.ping().await.map(|_| None),
        1 => client.get(target).await.map(|_| None),
        2 => client.list(Mode::Pty).await.map(|_| None),
        3 => {
            let params = CreatePty { args: vec!["-c".into(), "exit 0".into()], ..CreatePty::new("sh", cwd) };
            client.create_pty(params).await.map(|p| Some(p.id))
        }
        _ => {
            let output = dir.join("latency-pipe.out").display().to_string();
            client.create_pipe(CreatePipe::new("/bin/true", cwd, output)).await.map(|p| Some(p.id))
        }
    }
    .with_context(|| format!("{} failed", KINDS[kind]))?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    if let Some(id) = created {
        client.terminate(id).await.with_context(|| format!("terminating {id}"))?;
    }
    Ok(ms)
}

/// Rounds of the requests `kinds` until `rounds` or [`PHASE_BUDGET`], into `phase`. The requests that start a
/// process run in rounds of their own, after the others: each one forks the daemon, which stalls it for a while
/// (see HARDENING.md), and that is their own cost, not the others'.
async fn measure(client: &Client, dir: &Path, target: u64, rounds: usize, kinds: Range<usize>, phase: &mut Phase) {
    let started = Instant::now();
    let mut done = 0;
    while done < rounds && started.elapsed() < PHASE_BUDGET {
        for kind in kinds.clone() {
            match one(client, dir, target, kind).await {
                Ok(ms) => phase.latencies[kind].push(ms),
                Err(error) => phase.failures.push(format!("{error:#}")),
            }
        }
        done += 1;
    }
    phase.rounds = phase.rounds.max(done);
}

/// Both kinds of rounds (see [`measure`]).
async fn measure_all(client: &Client, dir: &Path, target: u64, rounds: usize) -> Phase {
    let mut phase = Phase::default();
    measure(client, dir, target, rounds, 0..3, &mut phase).await;
    measure(client, dir, target, rounds, 3..KINDS.len(), &mut phase).await;
    phase
}

/// Starts `n` busy terminals (a refused create is retried, and counted); their ids and the refusals.
async fn start_busy(client: &Client, dir: &Path, n: usize) -> Result<(Vec<u64>, Vec<String>)> {
    let (mut ids, mut refused) = (Vec::with_capacity(n), Vec::new());
    while ids.len() < n {
        let params = CreatePty {
            args: vec!["-c".into(), BUSY_SCRIPT.into()],
            ..CreatePty::new("sh", dir.display().to_string())
        };
        match client.create_pty(params).await {
            Ok(process) => ids.push(process.id),
            Err(error) if refused.len() < n => refused.push(format!("{error:#}")),
            Err(error) => bail!("creating busy terminals kept failing: {error:#}"),
        }
    }
    Ok((ids, refused))
}

/// Polls `get` until terminal `id` has printed something (bounded by [`BUSY_WITHIN`]).
async fn printing(client: &Client, id: u64) -> Result<()> {
    let deadline = Instant::now() + BUSY_WITHIN;
    loop {
        if client.get(id).await?.output_tail > 0 {
            return Ok(());
        }
        ensure!(Instant::now() < deadline, "terminal {id} printed nothing within {BUSY_WITHIN:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The case: idle figures, then busy ones, in one run; fails on any failed request, and in the full scale on
/// a busy p99 over its goal.
pub(super) async fn beside_busy_terminals(daemon: &Daemon, dir: &Path, scale: Scale) -> Result<String> {
    let client = daemon.client().clone().with_request_timeout(REQUEST_LIMIT);
    let rounds = if scale.judge_speed { FULL_ROUNDS } else { QUICK_ROUNDS };
    let cwd = dir.display().to_string();
    let idle =
        client.create_pty(CreatePty { args: vec!["-c".into(), "read never".into()], ..CreatePty::new("sh", cwd) });
    let idle = idle.await?.id;
    let mut quiet = measure_all(&client, dir, idle, rounds).await;
    let (busy_ids, refused) = start_busy(&client, dir, scale.terminals).await?;
    let last = *busy_ids.last().context("no busy terminal")?;
    printing(&client, busy_ids[0]).await?;
    printing(&client, last).await?;
    let mut busy = measure_all(&client, dir, last, rounds).await;
    let mut figures = format!(
        "p50/p99 ms idle (up to {} rounds) -> with {} terminals printing (up to {} rounds):",
        quiet.rounds, scale.terminals, busy.rounds
    );
    let mut over = Vec::new();
    let goals = [Some(GOAL_PING_MS), Some(GOAL_GET_MS), Some(GOAL_LIST_MS), Some(GOAL_CREATE_PTY_MS), None];
    for (kind, goal) in goals.into_iter().enumerate() {
        let ((q50, q99), (b50, b99)) = (quiet.quantiles(kind), busy.quantiles(kind));
        let _ = write!(figures, " {} {q50:.2}/{q99:.2} -> {b50:.2}/{b99:.2};", KINDS[kind]);
        if let Some(goal) = goal
            && b99 > goal
        {
            over.push(format!("{} p99 {b99:.1} ms over {goal} ms", KINDS[kind]));
        }
    }
    let _ = write!(figures, " busy terminals' creates refused: {}", refused.len());
    let failures: Vec<_> = quiet.failures.iter().chain(&busy.failures).chain(&refused).collect();
    ensure!(failures.is_empty(), "{} requests failed, first: {}; {figures}", failures.len(), failures[0]);
    if scale.judge_speed && !over.is_empty() {
        bail!("{}; {figures}", over.join(", "));
    }
    Ok(figures)
}

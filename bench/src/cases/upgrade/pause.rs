//! The pause an in-place upgrade causes: terminals that print at full speed, each followed by one observer
//! subscription (which the Rust client resumes across the upgrade by itself), and per terminal the time from
//! the last output received before its connection was closed to the first output received after it resumed.
//! Beside it, the longest silence of the same terminals in a window without an upgrade (the harness's and the
//! machine's own noise), the `upgrade` round trip, and a daemon's start-up for scale.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use opencode_pty_client::{Client, ClientError, CreatePty, Event, Response, Role, Subscription};
use tokio::task::JoinHandle;

use super::phases::{self, StepRows, Steps, terminals};
use crate::daemon::{self, Daemon};
use crate::fifo::quote;
use crate::plan::Context;
use crate::stats::{Row, Table, Unit};

/// How long every terminal prints before the first measurement.
const SETTLE: Duration = Duration::from_millis(300);

/// The window without an upgrade whose longest silence is the baseline, before each upgrade.
const QUIET_WINDOW: Duration = Duration::from_millis(500);

/// The bound of the wait for every terminal to print, and for every terminal to print again after an upgrade.
const OUTPUT_TIMEOUT: Duration = Duration::from_secs(30);

/// How often the followers are looked at while waiting.
const POLL: Duration = Duration::from_millis(5);

/// The most pauses a follower keeps between two looks (the harness takes them after each upgrade).
const KEPT_PAUSES: usize = 16;

/// The pause table, and where the time of the same upgrades went by the daemon's log.
pub(super) async fn run(ctx: &Context, program: &Path) -> Result<[Table; 2]> {
    let plan = &ctx.plan;
    let mut table = Table::new(
        "upgrade",
        "In-place upgrade: the pause",
        format!(
            "N terminals each run `cat` of the ingest file in a loop, each followed by one observer subscription of \
             the Rust client; then `upgrade` on the owner channel to a private copy (mode 0755) of the daemon \
             binary, {} per terminal count and repetition. The pause, per terminal: from the last output received \
             before the daemon closed the subscription's connection to the first output received after the client \
             resumed it (`Event::Resumed`), the time during which the terminal's output is not delivered (the \
             daemon's own part, output not read, is in the next table, which the goal of issue 30, under 100 ms \
             at 16 terminals, is about; this one adds the client's reconnection and the harness's scheduling on a \
             machine its busy terminals saturate); the median is the p50 over terminals, max the worst terminal. Beside it, the longest silence of each terminal in a {} ms window without an \
             upgrade just before (scheduling noise of the daemon, the harness and the machine). `upgrade`: from the \
             request to its `ok` (the preflight `upgrade-check` run of the program included), beside a daemon's \
             start-up (spawn to registration, no terminals). Milliseconds.",
            plan.upgrades,
            QUIET_WINDOW.as_millis()
        ),
    );
    let startup = table.add(Row::new("startup", "daemon start-up (spawn to registration)", Unit::Milliseconds));
    let mut steps = Steps::new();
    let mut rows = Vec::with_capacity(plan.upgrade_terminals.len());
    for &n in &plan.upgrade_terminals {
        let quiet = table.add(Row::new(
            format!("quiet_{n}"),
            format!("longest silence without an upgrade, {}", terminals(n)),
            Unit::Milliseconds,
        ));
        let pause = table.add(
            Row::new(format!("pause_{n}"), format!("pause at the upgrade, {}", terminals(n)), Unit::Milliseconds)
                .vs(&[&format!("quiet_{n}")]),
        );
        let upgrade = table.add(
            Row::new(format!("upgrade_{n}"), format!("`upgrade` round trip, {}", terminals(n)), Unit::Milliseconds)
                .vs(&["startup"]),
        );
        rows.push(Rows { terminals: n, quiet, pause, upgrade, steps: steps.add(n), fell_behind: Default::default() });
    }
    for _ in 0..plan.repetitions {
        for rows in &rows {
            let root = ctx.fresh_dir("daemon")?;
            let mut daemon = Daemon::start(&ctx.daemon, &root).await?;
            table.push_sample(startup, ms(daemon.startup()));
            let measured = measure(ctx, &mut daemon, program, rows, &mut table).await;
            let stopped = daemon.stop().await;
            measured?;
            stopped?;
            steps.push(&rows.steps, &phases::read(&root.join(daemon::LOG_FILE))?, plan.upgrades);
        }
    }
    for rows in &rows {
        if rows.fell_behind.get() > 0 {
            let note = format!(
                "{} subscriptions fell further behind than the ring keeps (the harness did not keep up) and \
                 subscribed again from the tail",
                rows.fell_behind.get()
            );
            table.note(rows.pause, note);
        }
    }
    Ok([table.finish(), steps.finish()])
}

/// The rows of one terminal count.
struct Rows {
    terminals: usize,
    quiet: usize,
    pause: usize,
    upgrade: usize,
    steps: StepRows,
    /// Subscriptions that fell further behind than the ring keeps (see `follow`), over every repetition.
    fell_behind: std::cell::Cell<usize>,
}

/// Starts the busy terminals on `daemon` and their followers, upgrades it `plan.upgrades` times, and stops
/// the terminals.
async fn measure(ctx: &Context, daemon: &mut Daemon, program: &Path, rows: &Rows, table: &mut Table) -> Result<()> {
    let client = daemon.client().clone();
    let cwd = ctx.work.display().to_string();
    let looping = format!("while :; do cat {}; done", quote(&ctx.files.ingest));
    let mut ids = Vec::with_capacity(rows.terminals);
    let mut followers = Vec::with_capacity(rows.terminals);
    let started = async {
        for _ in 0..rows.terminals {
            let params = CreatePty { args: vec!["-c".into(), looping.clone()], ..CreatePty::new("sh", cwd.clone()) };
            let id = client.create_pty(params).await?.id;
            ids.push(id);
            let subscription = daemon::subscribe(&client, id, 0, "observer", Role::Observer).await?;
            followers.push(Follower::start(client.clone(), id, subscription));
        }
        anyhow::Ok(())
    };
    let measured = match started.await {
        Ok(()) => upgrades(ctx, daemon, program, rows, table, &followers).await,
        Err(error) => Err(error),
    };
    for follower in &followers {
        follower.task.abort();
    }
    for id in ids {
        client.terminate(id).await?;
    }
    measured
}

/// The upgrades of one terminal count, each after a window without one.
async fn upgrades(
    ctx: &Context,
    daemon: &mut Daemon,
    program: &Path,
    rows: &Rows,
    table: &mut Table,
    followers: &[Follower],
) -> Result<()> {
    wait_for(followers, "every terminal to print", |seen| seen.bytes > 0).await?;
    tokio::time::sleep(SETTLE).await;
    for _ in 0..ctx.plan.upgrades {
        let since = Instant::now();
        for follower in followers {
            follower.seen().window(since);
        }
        tokio::time::sleep(QUIET_WINDOW).await;
        let now = Instant::now();
        for follower in followers {
            let seen = follower.seen();
            seen.check()?;
            let silent = now.saturating_duration_since(seen.last.unwrap_or(since).max(since));
            table.push_sample(rows.quiet, ms(seen.longest.max(silent)));
        }
        let requested = Instant::now();
        table.push_sample(rows.upgrade, ms(daemon.upgrade(Some(program)).await?));
        wait_for(followers, "every terminal to print again after the upgrade", |seen| {
            seen.pauses.iter().any(|(at, _)| *at >= requested)
        })
        .await?;
        for follower in followers {
            let mut seen = follower.seen();
            rows.fell_behind.set(rows.fell_behind.get() + std::mem::take(&mut seen.fell_behind));
            let pauses = seen.pauses.iter().filter(|(at, _)| *at >= requested);
            // One pause per upgrade; were there two (an observer also dropped for falling behind), the longest.
            let pause = pauses.map(|(_, pause)| *pause).max().unwrap_or_default();
            table.push_sample(rows.pause, ms(pause));
        }
        tokio::time::sleep(SETTLE).await;
    }
    Ok(())
}

/// Waits, within [`OUTPUT_TIMEOUT`], until `done` holds for every follower; a follower whose subscription
/// ended fails the wait.
async fn wait_for(followers: &[Follower], what: &str, done: impl Fn(&Seen) -> bool) -> Result<()> {
    let deadline = Instant::now() + OUTPUT_TIMEOUT;
    loop {
        let mut all = true;
        for follower in followers {
            let seen = follower.seen();
            seen.check()?;
            all &= done(&seen);
        }
        if all {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("waited {OUTPUT_TIMEOUT:?} for {what}");
        }
        tokio::time::sleep(POLL).await;
    }
}

/// One terminal's observer, read by a task of its own.
struct Follower {
    /// What it saw, shared with its task.
    seen: Arc<Mutex<Seen>>,
    /// The task, aborted once the terminal is done with.
    task: JoinHandle<()>,
}

impl Follower {
    /// Reads `subscription` of terminal `id` in a task of its own.
    fn start(client: Client, id: u64, subscription: Subscription) -> Follower {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let task = tokio::spawn(follow(client, id, subscription, seen.clone()));
        Follower { seen, task }
    }

    /// What it saw so far.
    fn seen(&self) -> MutexGuard<'_, Seen> {
        // A task that panicked holding the lock left nothing half-done worth refusing.
        self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What a follower saw.
#[derive(Debug, Default)]
struct Seen {
    /// Output bytes received.
    bytes: u64,
    /// When output last arrived.
    last: Option<Instant>,
    /// The start of the current window, from which silences are counted.
    since: Option<Instant>,
    /// The longest time between two outputs (or the window's start and an output) in the current window.
    longest: Duration,
    /// Set when the subscription resumed: when output last arrived before its connection was closed.
    broken: Option<Instant>,
    /// The pauses since the window started: when output came back, and how long it had stopped.
    pauses: Vec<(Instant, Duration)>,
    /// Why the subscription ended, if it did.
    ended: Option<String>,
    /// The offset just past the output received.
    next_offset: u64,
    /// How many times the subscription could not resume because it was further behind than the terminal's ring
    /// keeps (the harness did not keep up), and subscribed again from the tail.
    fell_behind: usize,
}

impl Seen {
    /// Starts a new window at `since`.
    fn window(&mut self, since: Instant) {
        self.since = Some(since);
        self.longest = Duration::ZERO;
        self.pauses.clear();
    }

    /// Output of `len` bytes arrived at `now`.
    fn output(&mut self, now: Instant, len: usize) {
        if let Some(broken) = self.broken.take()
            && self.pauses.len() < KEPT_PAUSES
        {
            self.pauses.push((now, now.saturating_duration_since(broken)));
        }
        if let Some(since) = self.since {
            let from = self.last.map_or(since, |last| last.max(since));
            self.longest = self.longest.max(now.saturating_duration_since(from));
        }
        self.last = Some(now);
        self.bytes += len as u64;
    }

    /// Fails once the subscription ended.
    fn check(&self) -> Result<()> {
        match &self.ended {
            Some(why) => bail!("a busy terminal's subscription ended: {why}"),
            None => Ok(()),
        }
    }
}

/// Reads `subscription` of terminal `id` until it ends, into `seen`. A subscription that could not resume
/// because it had fallen further behind than the ring keeps (which the daemon confirms: its ring starts past
/// the offset) subscribes again from the tail, and is counted.
async fn follow(client: Client, id: u64, mut subscription: Subscription, seen: Arc<Mutex<Seen>>) {
    loop {
        let event = subscription.next().await;
        let now = Instant::now();
        if let Some(Err(ClientError::Closed)) = &event {
            let offset = seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner).next_offset;
            if let Some(again) = subscribe_past(&client, id, offset).await {
                subscription = again;
                let mut seen = seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                seen.fell_behind += 1;
                seen.broken = Some(seen.last.unwrap_or(now));
                continue;
            }
        }
        let mut seen = seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match event {
            Some(Ok(Event::Output { start, bytes })) => {
                seen.next_offset = start + bytes.len() as u64;
                seen.output(now, bytes.len());
            }
            Some(Ok(Event::Resumed(_))) => seen.broken = Some(seen.last.unwrap_or(now)),
            Some(Ok(Event::Message(message))) if matches!(*message, Response::Exited { .. }) => {
                seen.ended = Some("`exited`".into());
                return;
            }
            Some(Ok(Event::Message(_))) => {}
            Some(Err(error)) => {
                seen.ended = Some(format!("{:#}", anyhow::Error::from(error).context("the subscription failed")));
                return;
            }
            None => {
                seen.ended = Some("the subscription ended".into());
                return;
            }
        }
    }
}

/// A new subscription from the tail of terminal `id`, when its ring no longer holds `offset` (else `None`: the
/// subscription ended for another reason).
async fn subscribe_past(client: &Client, id: u64, offset: u64) -> Option<Subscription> {
    let info = client.get(id).await.ok()?;
    if info.output_head <= offset {
        return None;
    }
    daemon::subscribe(client, id, info.output_tail, "observer", Role::Observer).await.ok()
}

/// Milliseconds of `duration`.
fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

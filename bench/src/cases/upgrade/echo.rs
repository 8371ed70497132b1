//! The echo of a terminal during an in-place upgrade: echo round trips (as the echo case takes them) back to
//! back from shortly before an `upgrade` until shortly after its controller subscription resumed, beside the
//! same round trips on the same daemon without an upgrade.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use opencode_pty_client::{Client, ClientError, CreatePty, DEFAULT_COLS, DEFAULT_ROWS, Event, Role, Subscription};

use crate::cases::echo::{ATTACHMENT, ECHO_TIMEOUT, READY, echo, next, wait_ready};
use crate::daemon::{self, Daemon};
use crate::plan::Context;
use crate::stats::{Row, Table, Unit};

/// How long round trips are taken before the upgrade is asked for.
const LEAD: Duration = Duration::from_millis(50);

/// How long round trips go on after the upgrade was answered.
const TRAIL: Duration = Duration::from_millis(150);

/// The most round trips kept around one upgrade (about a thousand are taken at the idle round trip's pace).
const MAX_ROUNDS: usize = 16_384;

/// The end of the error that refuses an `input` of the controller's attachment before its subscription
/// resumed: the new image keeps the controller, but the attachment is not subscribed again until the client
/// subscribes again.
const NOT_SUBSCRIBED: &str = " is not subscribed";

/// The pause between two sends of an `input` the upgrade kept from being taken.
const RESEND_PAUSE: Duration = Duration::from_millis(5);

/// The echo-during-an-upgrade table.
pub(super) async fn run(ctx: &Context, program: &Path) -> Result<Table> {
    let plan = &ctx.plan;
    let mut table = Table::new(
        "upgrade_echo",
        "In-place upgrade: echo latency",
        format!(
            "The echo round trip of the echo case (`input` of one byte to `stty raw -echo; cat`, until it comes back \
             on the controller's subscription), {} per repetition on an otherwise idle daemon, then back to back \
             from {} ms before an `upgrade` to a private copy of the daemon binary until {} ms after it was \
             answered, {} upgrades per repetition. During: every round trip that overlapped the upgrade (from the \
             request to `ok` or, if later, to the subscription's `Event::Resumed`); worst: the longest of each \
             upgrade. An `input` the upgrade kept from being taken (its connection closed unanswered, or refused by \
             the new image because the controller's subscription had not resumed yet: `attachment echo is not \
             subscribed`) is sent again after {} ms, as a client would, and the time counts. \
             Milliseconds.",
            plan.echo_samples,
            LEAD.as_millis(),
            TRAIL.as_millis(),
            plan.upgrade_echoes,
            RESEND_PAUSE.as_millis()
        ),
    );
    let idle = table.add(Row::new("idle", "daemon, no upgrade", Unit::Milliseconds));
    let during = table.add(Row::new("during", "round trips during an upgrade", Unit::Milliseconds).vs(&["idle"]));
    let worst = table.add(Row::new("worst", "longest round trip of each upgrade", Unit::Milliseconds).vs(&["idle"]));
    let upgrade = table.add(Row::new("upgrade", "`upgrade` round trip", Unit::Milliseconds));
    let mut daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
    let client = daemon.client().clone();
    let measured = async {
        let cwd = ctx.work.display().to_string();
        let command = format!("stty raw -echo; printf {}; exec cat", String::from_utf8_lossy(READY));
        let params = CreatePty { args: vec!["-c".into(), command], ..CreatePty::new("sh", cwd) };
        let id = client.create_pty(params).await?.id;
        let mut subscription = daemon::subscribe(&client, id, 0, ATTACHMENT, Role::Controller).await?;
        wait_ready(&mut subscription).await?;
        let mut byte = b'a';
        let mut resent = Resent::default();
        for _ in 0..plan.repetitions {
            for _ in 0..plan.echo_samples {
                table.push_sample(idle, echo(&client, id, &mut subscription, next(&mut byte)).await?);
            }
            for _ in 0..plan.upgrade_echoes {
                let mut round = Round { client: &client, id, subscription: &mut subscription, byte: &mut byte };
                let around = round.around(&mut daemon, program).await?;
                resent.add(around.resent);
                table.push_sample(upgrade, around.round_trip);
                let overlapping: Vec<f64> = around
                    .rounds
                    .iter()
                    .filter(|(started, ended)| *started < around.until && *ended > around.requested)
                    .map(|(started, ended)| ms(ended.saturating_duration_since(*started)))
                    .collect();
                ensure!(!overlapping.is_empty(), "no echo round trip overlapped the upgrade");
                for &sample in &overlapping {
                    table.push_sample(during, sample);
                }
                table.push_sample(worst, overlapping.iter().copied().fold(0.0, f64::max));
            }
        }
        if resent.closed + resent.refused > 0 {
            table.note(
                during,
                format!(
                    "inputs sent again: {} whose connection closed unanswered, {} refused as `attachment {ATTACHMENT} \
                     is not subscribed`",
                    resent.closed, resent.refused
                ),
            );
        }
        drop(subscription);
        client.terminate(id).await?;
        anyhow::Ok(())
    };
    let measured = measured.await;
    let stopped = daemon.stop().await;
    measured?;
    stopped?;
    Ok(table.finish())
}

/// What the round trips around one upgrade found.
struct Around {
    /// When `upgrade` was sent.
    requested: Instant,
    /// When it was answered, or the subscription resumed if that was later.
    until: Instant,
    /// Its round trip, milliseconds.
    round_trip: f64,
    /// Every echo round trip: when it started and ended.
    rounds: Vec<(Instant, Instant)>,
    /// How many inputs were sent again.
    resent: Resent,
}

/// Inputs sent again, by why.
#[derive(Debug, Default, Clone, Copy)]
struct Resent {
    /// Their connection was closed unanswered (the old image quiescing).
    closed: usize,
    /// The new image refused them: the controller's subscription had not resumed yet.
    refused: usize,
}

impl Resent {
    fn add(&mut self, other: Resent) {
        self.closed += other.closed;
        self.refused += other.refused;
    }
}

/// The echo terminal, as the round trips around an upgrade use it.
struct Round<'a> {
    client: &'a Client,
    id: u64,
    subscription: &'a mut Subscription,
    byte: &'a mut u8,
}

impl Round<'_> {
    /// Round trips back to back from [`LEAD`] before an upgrade of `daemon` to `program` until [`TRAIL`] after
    /// it was answered.
    async fn around(&mut self, daemon: &mut Daemon, program: &Path) -> Result<Around> {
        let stop = AtomicBool::new(false);
        let mut rounds = Vec::new();
        let mut resent = Resent::default();
        let mut resumed = None;
        let sampling = async {
            while !stop.load(Ordering::Acquire) && rounds.len() < MAX_ROUNDS {
                let started = Instant::now();
                let byte = next(self.byte);
                let (again, resumed_at) = self.echo_once(byte).await?;
                rounds.push((started, Instant::now()));
                resent.add(again);
                resumed = resumed.or(resumed_at);
            }
            anyhow::Ok(())
        };
        let upgrading = async {
            tokio::time::sleep(LEAD).await;
            let requested = Instant::now();
            let upgraded = daemon.upgrade(Some(program)).await;
            let answered = Instant::now();
            tokio::time::sleep(TRAIL).await;
            stop.store(true, Ordering::Release);
            upgraded.map(|round_trip| (requested, answered, round_trip))
        };
        let (sampled, upgraded) = tokio::join!(sampling, upgrading);
        let (requested, answered, round_trip) = upgraded?;
        sampled?;
        let Some(resumed) = resumed else { bail!("the echo terminal's subscription did not resume after the upgrade") };
        Ok(Around { requested, until: answered.max(resumed), round_trip: ms(round_trip), rounds, resent })
    }

    /// One round trip: `input` of `byte` (sent again while the upgrade keeps it from being taken: [`Resent`]),
    /// until it comes back; how many times it was sent again, and when the subscription resumed if it did
    /// meanwhile.
    /// Other bytes are skipped: a byte sent again whose first send the daemon had taken comes back twice.
    async fn echo_once(&mut self, byte: u8) -> Result<(Resent, Option<Instant>)> {
        let data = [byte];
        let (client, id) = (self.client, self.id);
        let send = async {
            let mut again = Resent::default();
            loop {
                match client.input(id, ATTACHMENT, DEFAULT_COLS, DEFAULT_ROWS, &data).await {
                    Ok(_) => return anyhow::Ok(again),
                    Err(ClientError::Closed | ClientError::Io { .. }) => again.closed += 1,
                    Err(ClientError::Daemon { message }) if message.ends_with(NOT_SUBSCRIBED) => again.refused += 1,
                    Err(error) => return Err(error.into()),
                }
                tokio::time::sleep(RESEND_PAUSE).await;
            }
        };
        let subscription = &mut *self.subscription;
        let receive = async {
            let mut resumed = None;
            loop {
                match subscription.next().await.context("the subscription ended")?? {
                    Event::Output { bytes, .. } if bytes.contains(&byte) => return anyhow::Ok(resumed),
                    Event::Resumed(_) => resumed = Some(Instant::now()),
                    Event::Output { .. } | Event::Message(_) => {}
                }
            }
        };
        tokio::time::timeout(ECHO_TIMEOUT, async { tokio::try_join!(send, receive) })
            .await
            .context("no echo in time")?
    }
}

/// Milliseconds of `duration`.
fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

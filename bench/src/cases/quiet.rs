//! Case 10, quiet: what compressing a quiet terminal's memory (SPEC D18) costs the requests and output that
//! come after, against a twin daemon that never compresses (`--compress-after-ms 0`), in the same run: the
//! first `snapshot`, `read_rows`, `resize` and `replay` of a terminal that has been quiet past the delay, an
//! echo landing while the terminal is being compressed, and the ingest of a terminal printing without pause.

use std::num::NonZeroU16;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use opencode_pty_client::{Client, CreatePty, Role, Subscription};

use super::echo::{self, ATTACHMENT, READY};
use super::requests::{history_terminal, resize, rows_that_fit, timed};
use crate::daemon::{self, Daemon};
use crate::fifo::quote;
use crate::plan::Context;
use crate::stats::{Row, Table, Unit, mb_per_s};

/// The quiet delay of the compressing daemon: short, so that a sample waits little.
const DELAY_MS: u64 = 300;

/// How long each read waits after the previous one: the delay and ample time for a pass (20 incremental steps
/// of at most a millisecond for 10,000 lines).
const QUIET: Duration = Duration::from_millis(DELAY_MS + 400);

/// Echo round trips per repetition (at most), each timed to land in the compression pass that follows the
/// previous echo.
const ECHO_SAMPLES: usize = 60;

/// The two daemons, compressing and not, in that order.
struct Twins {
    on: Daemon,
    off: Daemon,
}

/// The quiet table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let size = crate::data::human(plan.ingest_bytes);
    let mut table = Table::new(
        "quiet",
        "Quiet terminals: what compression costs",
        format!(
            "Two daemons in the same run: one compressing a terminal's memory after {DELAY_MS} ms of quiet (the \
             default is 2 s; the same work), its twin never (`--compress-after-ms 0`). Each has an 80x24 \
             terminal that printed {} lines of log text. Each screen request is made after {} ms without \
             output or reads, so that the compressing daemon's terminal is compressed when it comes (its first \
             read restores what it reads), then the same on the twin; {} of each per repetition, milliseconds. Echo: `input` of one byte to a \
             `cat` in raw mode behind the same history, each sent {DELAY_MS}-{} ms after the previous echo, when \
             the compressing daemon is compressing (at most {ECHO_SAMPLES} per repetition), and to the twin right after. Ingest: {size} through one \
             terminal drained by one observer, MB/s (compression never runs while output flows; this is what \
             watching for quiet costs).",
            plan.history_lines,
            QUIET.as_millis(),
            plan.heavy_samples,
            DELAY_MS + 6,
        ),
    );
    let pair = |table: &mut Table, key: &str, label: &str, unit: Unit| {
        let off = table.add(Row::new(format!("{key}_off"), format!("{label}, never compressed"), unit));
        let on = table.add(
            Row::new(format!("{key}_on"), format!("{label}, quiet and compressed"), unit).vs(&[&format!("{key}_off")]),
        );
        (on, off)
    };
    let snapshot = pair(&mut table, "snapshot", "`snapshot`", Unit::Milliseconds);
    let rows_50 = pair(&mut table, "read_rows_50", "`read_rows` 50", Unit::Milliseconds);
    let rows_all = pair(&mut table, "read_rows_all", "`read_rows` of the whole history", Unit::Milliseconds);
    let resized = pair(&mut table, "resize", "`resize` to `resized`", Unit::Milliseconds);
    let replay = pair(&mut table, "replay", "`replay` from the oldest kept byte", Unit::Milliseconds);
    let echoed = pair(&mut table, "echo", "echo", Unit::Milliseconds);
    let ingest = pair(&mut table, "ingest", "ingest", Unit::MegabytesPerSecond);
    let twins = Twins {
        on: start(ctx, "on", &["--compress-after-ms", &DELAY_MS.to_string()]).await?,
        off: start(ctx, "off", &["--compress-after-ms", "0"]).await?,
    };
    let mut screens = Vec::new();
    let mut echoes = Vec::new();
    for daemon in [&twins.on, &twins.off] {
        let client = daemon.client();
        let (id, observer) = history_terminal(ctx, client, 80, 24).await?;
        let want = u16::try_from(plan.history_lines + 24).unwrap_or(u16::MAX);
        let fit = rows_that_fit(client, id, want).await?;
        screens.push((id, observer, fit));
        echoes.push(echo_terminal(ctx, client).await?);
    }
    let mut jitter = 0x2545_F491_4F6C_DD1D_u64;
    let mut byte = b'a';
    for _ in 0..plan.repetitions {
        for i in 0..plan.heavy_samples {
            let (c, r) = if i % 2 == 0 { (79, 23) } else { (80, 24) };
            for kind in 0..5 {
                // Quiet past the delay: the compressing twin's terminal is compressed when its read comes.
                tokio::time::sleep(QUIET).await;
                for (n, daemon) in [&twins.on, &twins.off].into_iter().enumerate() {
                    let (client, (id, observer, fit)) = (daemon.client(), &mut screens[n]);
                    let (id, fit) = (*id, Some(*fit));
                    let pick = |pair: (usize, usize)| if n == 0 { pair.0 } else { pair.1 };
                    let (row, sample) = match kind {
                        0 => (pick(snapshot), timed(client.snapshot(id)).await?),
                        1 => (pick(rows_50), timed(client.read_rows(id, NonZeroU16::new(50))).await?),
                        2 => (pick(rows_all), timed(client.read_rows(id, fit)).await?),
                        3 => (pick(resized), resize(client, id, observer, c, r).await?),
                        _ => {
                            let head = client.get(id).await?.output_head;
                            (pick(replay), timed(client.replay(id, head)).await?)
                        }
                    };
                    table.push_sample(row, sample);
                }
            }
        }
        if plan.heavy_samples % 2 == 1 {
            for (n, daemon) in [&twins.on, &twins.off].into_iter().enumerate() {
                let (id, observer, _) = &mut screens[n];
                resize(daemon.client(), *id, observer, 80, 24).await?;
            }
        }
        for _ in 0..ECHO_SAMPLES.min(plan.echo_samples) {
            // A few ms past the delay that the previous echo started: the pass over 10,000 lines takes a few
            // ms (SPEC D18), and the echo lands in it.
            jitter ^= jitter << 13;
            jitter ^= jitter >> 7;
            jitter ^= jitter << 17;
            tokio::time::sleep(Duration::from_millis(DELAY_MS) + Duration::from_micros(jitter % 6_000)).await;
            for (n, daemon) in [&twins.on, &twins.off].into_iter().enumerate() {
                let (id, subscription) = &mut echoes[n];
                let sample = echo::echo(daemon.client(), *id, subscription, echo::next(&mut byte)).await?;
                table.push_sample(if n == 0 { echoed.0 } else { echoed.1 }, sample);
            }
        }
        for (n, daemon) in [&twins.on, &twins.off].into_iter().enumerate() {
            table.push_sample(if n == 0 { ingest.0 } else { ingest.1 }, ingest_once(ctx, daemon.client()).await?);
        }
    }
    drop(screens);
    drop(echoes);
    twins.on.stop().await?;
    twins.off.stop().await?;
    Ok(vec![table.finish()])
}

/// A daemon of the twins, its runtime under a fresh directory named `name`.
async fn start(ctx: &Context, name: &str, args: &[&str]) -> Result<Daemon> {
    Daemon::start_with(&ctx.daemon, &ctx.fresh_dir(name)?, args).await
}

/// A terminal running `cat` in raw mode behind a history of the history file, with its controller.
async fn echo_terminal(ctx: &Context, client: &Client) -> Result<(u64, Subscription)> {
    let command = format!(
        "cat {}; stty raw -echo; printf {}; exec cat",
        quote(&ctx.files.history),
        String::from_utf8_lossy(READY)
    );
    let params = CreatePty { args: vec!["-c".into(), command], ..CreatePty::new("sh", ctx.work.display().to_string()) };
    let id = client.create_pty(params).await?.id;
    let mut subscription = daemon::subscribe(client, id, 0, ATTACHMENT, Role::Controller).await?;
    echo::wait_ready(&mut subscription).await?;
    Ok((id, subscription))
}

/// MB/s of the ingest file through one terminal, drained by one observer until `exited`.
async fn ingest_once(ctx: &Context, client: &Client) -> Result<f64> {
    let params = CreatePty {
        args: vec![ctx.files.ingest.display().to_string()],
        ..CreatePty::new("cat", ctx.work.display().to_string())
    };
    let started = Instant::now();
    let id = client.create_pty(params).await?.id;
    let subscription = daemon::subscribe(client, id, 0, "ingest", Role::Observer).await?;
    let drained = daemon::drain(subscription, ctx.plan.timeout()).await?;
    let seconds = drained.exited_at.duration_since(started).as_secs_f64();
    client.terminate(id).await.context("terminating the ingest terminal")?;
    Ok(mb_per_s(ctx.plan.ingest_bytes, seconds))
}

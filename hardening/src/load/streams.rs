//! Streaming under load: many terminals printing at once to one observer each (every byte, in order), a slow
//! observer dropped within its bound while the others keep their speed, and a controller that never reads,
//! which holds back only its own terminal while takeover and terminate still answer at once.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use opencode_pty_bench::daemon::{self, Daemon};
use opencode_pty_client::{Client, CreatePty, Event, Response, Role, Subscription, Takeover};

use super::{Holdings, Scale};

/// How long a request on a terminal held back by its controller may take (it must not wait for the output).
const PROMPT_ANSWER: Duration = Duration::from_secs(2);

/// The same bound in the short run, on a loaded machine: still a third of the daemon's request timeout
/// (30 s), which a request that waited for the stalled controller would reach.
const PROMPT_ANSWER_LOADED: Duration = Duration::from_secs(10);

/// The least share of its unloaded speed a healthy observer keeps beside a slow one.
const MIN_SHARE_BESIDE_SLOW: f64 = 0.5;

/// A terminal that prints `seq 1 lines` once `go` is written to it (so every observer is attached first).
async fn seq_terminal(client: &Client, dir: &Path, lines: u64) -> Result<u64> {
    let script = format!("stty -echo; read go; exec seq 1 {lines}");
    let params = CreatePty { args: vec!["-c".into(), script], ..CreatePty::new("sh", dir.display().to_string()) };
    Ok(client.create_pty(params).await?.id)
}

/// Checks a `seq` stream as it arrives: contiguous offsets, then the lines 1, 2, ... in order (an echoed `go`
/// before the first number is allowed: the shell may not have run `stty` yet).
#[derive(Debug, Default)]
struct SeqCheck {
    offset: u64,
    next: u64,
    line: Vec<u8>,
}

impl SeqCheck {
    fn feed(&mut self, start: u64, bytes: &[u8]) -> Result<()> {
        ensure!(start == self.offset, "output at {start}, expected {}", self.offset);
        self.offset += bytes.len() as u64;
        for &byte in bytes {
            if byte != b'\n' {
                self.line.push(byte);
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let text = String::from_utf8_lossy(line.strip_suffix(b"\r").unwrap_or(&line)).into_owned();
            if self.next == 0 && (text == "go" || text.is_empty()) {
                continue;
            }
            let expected = self.next.max(1);
            ensure!(text == expected.to_string(), "line {text:?} where {expected} was due");
            self.next = expected + 1;
        }
        Ok(())
    }

    fn finish(&self, lines: u64) -> Result<()> {
        ensure!(
            self.line.is_empty() && self.next == lines + 1,
            "ended after {} of {lines} lines",
            self.next.max(1) - 1
        );
        Ok(())
    }
}

/// Reads `subscription` to `exited`, checking the `seq` stream of `lines`; bytes received and when it ended.
async fn verify(mut subscription: Subscription, lines: u64) -> Result<(u64, Instant)> {
    let mut check = SeqCheck { offset: subscription.next_offset(), ..SeqCheck::default() };
    while let Some(event) = subscription.next().await {
        match event.context("the subscription broke")? {
            Event::Output { start, bytes } => check.feed(start, &bytes)?,
            Event::Message(message) if matches!(*message, Response::Exited { .. }) => {
                check.finish(lines)?;
                return Ok((check.offset, Instant::now()));
            }
            // Gone on across an in-place upgrade, at the same offset.
            Event::Message(_) | Event::Resumed(_) => {}
        }
    }
    bail!("the subscription ended without `exited`")
}

/// `count` terminals printing `lines` each, one observer each, started at once; aggregate MB/s, the slowest
/// terminal's share of the mean, and the daemon's peak threads and memory.
pub(super) async fn many_terminals(daemon: &Daemon, dir: &Path, scale: Scale) -> Result<String> {
    let client = daemon.client();
    let mut ids = Vec::new();
    let mut tasks = Vec::new();
    for n in 0..scale.terminals {
        let id = seq_terminal(client, dir, scale.lines).await?;
        let subscription = daemon::subscribe(client, id, 0, &format!("observer-{n}"), Role::Observer).await?;
        tasks.push(tokio::spawn(verify(subscription, scale.lines)));
        ids.push(id);
    }
    let idle = Holdings::of(daemon)?;
    let started = Instant::now();
    for &id in &ids {
        client.write(id, None, b"go\n").await?;
    }
    let mut peak = idle;
    let mut results = Vec::new();
    for task in tasks {
        while !task.is_finished() {
            let now = Holdings::of(daemon)?;
            peak = Holdings { rss_kib: peak.rss_kib.max(now.rss_kib), threads: peak.threads.max(now.threads), ..now };
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        results.push(task.await.context("an observer panicked")??);
    }
    for id in ids {
        client.terminate(id).await?;
    }
    let bytes: u64 = results.iter().map(|(bytes, _)| bytes).sum();
    let seconds: Vec<f64> = results.iter().map(|(_, end)| (*end - started).as_secs_f64()).collect();
    let last = seconds.iter().copied().fold(0.0, f64::max);
    let rates: Vec<f64> = results.iter().zip(&seconds).map(|((bytes, _), s)| *bytes as f64 / s.max(1e-9)).collect();
    let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
    let slowest = rates.iter().copied().fold(f64::INFINITY, f64::min) / mean;
    Ok(format!(
        "{} terminals x {:.1} MiB, every byte in order: {:.1} MB/s together, slowest {slowest:.2} of the mean; \
         peak {} threads, {:.1} MiB RSS (idle with all attached: {} threads, {:.1} MiB)",
        scale.terminals,
        bytes as f64 / scale.terminals.max(1) as f64 / (1 << 20) as f64,
        bytes as f64 / last / 1e6,
        peak.threads,
        peak.rss_kib as f64 / 1024.0,
        idle.threads,
        idle.rss_kib as f64 / 1024.0
    ))
}

/// One terminal printing `flood_lines`, drained by a controller and an observer; with `slow`, a third
/// subscriber that never reads. Seconds until both healthy readers had everything, and the slow one.
async fn flood(daemon: &Daemon, dir: &Path, lines: u64, slow: bool) -> Result<(f64, Option<Subscription>)> {
    let client = daemon.client();
    let id = seq_terminal(client, dir, lines).await?;
    let controller = client.subscribe(id, 0, "controller", Role::Controller, Takeover::Refuse).await?;
    let observer = daemon::subscribe(client, id, 0, "observer", Role::Observer).await?;
    let stuck = if slow { Some(daemon::subscribe(client, id, 0, "slow", Role::Observer).await?) } else { None };
    let started = Instant::now();
    client.write(id, Some("controller"), b"go\n").await?;
    let (a, b) = (tokio::spawn(verify(controller, lines)), tokio::spawn(verify(observer, lines)));
    let a = a.await.context("the controller's reader panicked")?.context("the controller")?;
    let b = b.await.context("the observer's reader panicked")?.context("the healthy observer")?;
    let end = a.1.max(b.1);
    client.terminate(id).await?;
    Ok(((end - started).as_secs_f64(), stuck))
}

/// A subscriber that never reads is dropped (its stream ends before `exited`, with less than everything),
/// while the controller and a healthy observer get every byte at no less than half their unloaded speed.
pub(super) async fn slow_observer(daemon: &Daemon, dir: &Path, scale: Scale) -> Result<String> {
    let (alone, _) = flood(daemon, dir, scale.flood_lines, false).await?;
    let (beside, stuck) = flood(daemon, dir, scale.flood_lines, true).await?;
    let mut stuck = stuck.context("the slow subscriber")?;
    let mut received = 0u64;
    let mut exited = false;
    let read = async {
        while let Some(Ok(event)) = stuck.next().await {
            match event {
                Event::Output { bytes, .. } => received += bytes.len() as u64,
                Event::Message(message) => exited |= matches!(*message, Response::Exited { .. }),
                Event::Resumed(_) => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read).await.context("the slow subscription never ended")?;
    ensure!(!exited, "the slow subscriber was kept to the end ({received} bytes): it should have been dropped");
    let share = alone / beside;
    if scale.judge_speed {
        ensure!(share >= MIN_SHARE_BESIDE_SLOW, "beside a slow observer the others ran at {share:.2} of their speed");
    }
    Ok(format!(
        "slow observer dropped after {:.1} MiB buffered for it; controller and observer got every byte at {share:.2} \
         of their speed without it ({alone:.2} s alone, {beside:.2} s beside it)",
        received as f64 / (1 << 20) as f64
    ))
}

/// A controller that never reads holds back its own terminal only: another terminal prints everything to its
/// observer meanwhile, and a takeover and a terminate of the held terminal answer within [`PROMPT_ANSWER`].
pub(super) async fn stalled_controller(daemon: &Daemon, dir: &Path, scale: Scale) -> Result<String> {
    let client = daemon.client();
    let held = seq_terminal(client, dir, scale.flood_lines).await?;
    let _stalled = client.subscribe(held, 0, "stalled", Role::Controller, Takeover::Refuse).await?;
    client.write(held, Some("stalled"), b"go\n").await?;
    let other = seq_terminal(client, dir, scale.lines).await?;
    let observer = daemon::subscribe(client, other, 0, "observer", Role::Observer).await?;
    let started = Instant::now();
    client.write(other, None, b"go\n").await?;
    verify(observer, scale.lines).await.context("the other terminal")?;
    let other_seconds = started.elapsed().as_secs_f64();
    let before = client.get(held).await?.output_tail;
    let bound = if scale.judge_speed { PROMPT_ANSWER } else { PROMPT_ANSWER_LOADED };
    let asked = Instant::now();
    let taken = tokio::time::timeout(bound, client.subscribe(held, 0, "new", Role::Controller, Takeover::Take));
    let _taken = taken.await.context("takeover did not answer in time")??;
    let takeover = asked.elapsed();
    let asked = Instant::now();
    tokio::time::timeout(bound, client.terminate(held)).await.context("terminate did not answer in time")??;
    let terminate = asked.elapsed();
    client.terminate(other).await?;
    Ok(format!(
        "held terminal stopped at {:.1} MiB of output; the other printed everything in {other_seconds:.2} s; \
         takeover answered in {:.1} ms, terminate in {:.1} ms",
        before as f64 / (1 << 20) as f64,
        takeover.as_secs_f64() * 1e3,
        terminate.as_secs_f64() * 1e3
    ))
}

//! Cycles that must leave nothing behind (create/exit/terminate of both kinds, connect/ping, subscribe/close),
//! a burst of concurrent one-shot requests, and idle connections up to the daemon's cap and past it.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use opencode_pty_bench::daemon::{self, Daemon};
use opencode_pty_client::{CreatePipe, CreatePty, Event, Response, Role};
use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;

use super::{Holdings, Scale, quantile};

/// Idle connection threads the daemon may keep after a burst (its pool's `MAX_IDLE_WORKERS`), on top of the
/// threads it had before the cycles.
const IDLE_WORKERS: u64 = 4;

/// Resident memory the daemon may keep after the cycles beyond what it had before (allocator caches).
const RSS_TOLERANCE_KIB: u64 = 4 * 1024;

/// How long the daemon may take to let go of what the cycles used (its idle threads linger 10 s).
const SETTLE: Duration = Duration::from_secs(20);

/// The daemon's connection cap (SPEC N1), and the refusal of one more.
const MAX_CONNECTIONS: usize = 1024;
const REFUSAL: &str = "too many connections: the daemon serves at most 1024 at once";

/// Connections opened past the cap.
const PAST_THE_CAP: usize = 64;

/// One round of every cycle: a PTY that exits by itself, then terminate; a pipe process waited for, then
/// terminate; a ping on a connection of its own; a subscription to `long` opened and dropped.
async fn round(daemon: &Daemon, dir: &Path, long: u64) -> Result<()> {
    let client = daemon.client();
    let params =
        CreatePty { args: vec!["-c".into(), "exit 0".into()], ..CreatePty::new("sh", dir.display().to_string()) };
    let pty = client.create_pty(params).await?.id;
    let mut subscription = daemon::subscribe(client, pty, 0, "cycle", Role::Observer).await?;
    loop {
        match subscription.next().await.context("the subscription ended before `exited`")?? {
            Event::Message(message) if matches!(*message, Response::Exited { .. }) => break,
            _ => {}
        }
    }
    drop(subscription);
    client.terminate(pty).await?;
    let output = dir.join("pipe.out").display().to_string();
    let pipe = client.create_pipe(CreatePipe::new("/bin/true", dir.display().to_string(), output)).await?.id;
    client.wait(pipe).await?;
    client.terminate(pipe).await?;
    client.ping().await?;
    drop(daemon::subscribe(client, long, 0, "passing", Role::Observer).await?);
    Ok(())
}

/// Polls (bounded by [`SETTLE`]) until the daemon holds no more than `baseline` allows.
async fn settle(daemon: &Daemon, baseline: Holdings) -> Result<Holdings> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let now = Holdings::of(daemon)?;
        let back = now.fds <= baseline.fds
            && now.children <= baseline.children
            && now.threads <= baseline.threads + IDLE_WORKERS
            && now.rss_kib <= baseline.rss_kib + RSS_TOLERANCE_KIB;
        if back {
            return Ok(now);
        }
        if Instant::now() > deadline {
            bail!("after {SETTLE:?} the daemon still holds {now} (before: {baseline})");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `scale.cycles` rounds of every cycle; descriptors and children back to where they were, threads within the
/// idle pool, memory within [`RSS_TOLERANCE_KIB`].
pub(super) async fn cycles(daemon: &Daemon, dir: &Path, scale: Scale) -> Result<String> {
    let client = daemon.client();
    let long = client.create_pty(CreatePty::new("cat", dir.display().to_string())).await?.id;
    // One round first, so that what the daemon starts once (its wait thread, pooled threads) is in the baseline.
    round(daemon, dir, long).await?;
    let baseline = settle(daemon, Holdings::of(daemon)?).await?;
    let started = Instant::now();
    for _ in 0..scale.cycles {
        round(daemon, dir, long).await?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let after = settle(daemon, baseline).await?;
    client.terminate(long).await?;
    Ok(format!(
        "{n} rounds of each cycle (PTY create/exit/terminate, pipe create/wait/terminate, connect/ping, \
         subscribe/close) in {seconds:.1} s; before: {baseline}; after: {after} (tolerance: fds and children \
         exact, threads +{IDLE_WORKERS}, RSS +{} MiB)",
        RSS_TOLERANCE_KIB / 1024,
        n = scale.cycles
    ))
}

/// `scale.concurrent` one-shot requests (`get` and `ping`, alternately) sent at once: all answered; p50 and p99.
pub(super) async fn concurrent(daemon: &Daemon, dir: &Path, scale: Scale) -> Result<String> {
    let client = daemon.client();
    let id = client.create_pty(CreatePty::new("cat", dir.display().to_string())).await?.id;
    let mut tasks = Vec::with_capacity(scale.concurrent);
    for n in 0..scale.concurrent {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let started = Instant::now();
            if n % 2 == 0 { client.get(id).await.map(drop) } else { client.ping().await.map(drop) }
                .map(|()| started.elapsed().as_secs_f64() * 1e3)
        }));
    }
    let mut latencies = Vec::with_capacity(tasks.len());
    for task in tasks {
        latencies.push(task.await.context("a request task panicked")?.context("a request failed")?);
    }
    client.terminate(id).await?;
    Ok(format!(
        "{} at once, all answered: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        scale.concurrent,
        quantile(&mut latencies, 0.5),
        quantile(&mut latencies, 0.99),
        quantile(&mut latencies, 1.0)
    ))
}

/// The first frame's payload on `stream`, or `None` when it ends first or nothing comes within `limit`.
async fn first_frame(stream: &mut UnixStream, limit: Duration) -> Option<Vec<u8>> {
    let read = async {
        let length = stream.read_u32().await.ok()? as usize;
        let mut payload = vec![0; length.min(64 * 1024)];
        stream.read_exact(&mut payload).await.ok()?;
        Some(payload)
    };
    tokio::time::timeout(limit, read).await.ok().flatten()
}

/// How long a connection past the cap may wait for its refusal: the daemon refuses on accept, but it accepts
/// the connections in turn, and under load (a debug build beside `stress-ng`) a fixed 2 s per connection once
/// ran out before it reached the last ones.
const REFUSAL_WITHIN: Duration = Duration::from_secs(60);

/// Idle connections fill the cap (the owner channel holds one slot); each one past it is answered with the
/// refusal and closed; once the idle ones close, requests are served again. The daemon accepts connections in
/// the order they were made, so the first `MAX_CONNECTIONS - 1` are the served ones: once every later one has
/// its refusal, the daemon has taken them all, and a served one must have nothing to read.
pub(super) async fn connection_cap(daemon: &Daemon, _dir: &Path, _scale: Scale) -> Result<String> {
    let socket = daemon.client().registration().socket.clone();
    let mut idle = Vec::with_capacity(MAX_CONNECTIONS + PAST_THE_CAP);
    for _ in 0..MAX_CONNECTIONS + PAST_THE_CAP {
        idle.push(UnixStream::connect(&socket).await.context("connecting (is the descriptor limit too low?)")?);
    }
    let past = idle.split_off(MAX_CONNECTIONS - 1);
    let tasks: Vec<_> = past
        .into_iter()
        .map(|mut stream| tokio::spawn(async move { first_frame(&mut stream, REFUSAL_WITHIN).await }))
        .collect();
    let mut refused = Vec::with_capacity(tasks.len());
    for task in tasks {
        let answer = task.await.context("a connection task panicked")?;
        let answer =
            answer.with_context(|| format!("a connection past the cap heard nothing in {REFUSAL_WITHIN:?}"))?;
        refused.push(answer);
    }
    for answer in &refused {
        let text = String::from_utf8_lossy(answer);
        ensure!(text.contains(REFUSAL), "a refused connection was answered {text}");
    }
    let mut buffer = [0u8; 1];
    let answered = idle
        .iter()
        .filter(|stream| !matches!(stream.try_read(&mut buffer), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock))
        .count();
    let served = idle.len() - answered;
    ensure!(
        served == MAX_CONNECTIONS - 1,
        "{served} idle connections were served beside the owner's, not {} ({answered} of them heard something)",
        MAX_CONNECTIONS - 1
    );
    drop(idle);
    let closed = Instant::now();
    loop {
        match daemon.client().ping().await {
            Ok(_) => break,
            Err(_) if closed.elapsed() < SETTLE => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(error) => bail!("not served again {SETTLE:?} after the idle connections closed: {error}"),
        }
    }
    Ok(format!(
        "{served} idle connections served beside the owner's (cap {MAX_CONNECTIONS}), {} past it refused with \
         the documented error; served again {:.0} ms after they closed",
        refused.len(),
        closed.elapsed().as_secs_f64() * 1e3
    ))
}

//! Case 7, requests: the round trip of `ping` (against a bare Unix-socket echo, the floor of one request per
//! connection), `get`, `read_rows` (50 rows and the whole history), `snapshot` and a `resize` until its
//! `resized` event with the checkpoint arrives, at 80x24 and 200x50 with the history file behind the screen;
//! and the daemon's start-up until its registration can be read.

use std::num::NonZeroU16;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use opencode_pty_client::{Client, ClientError, CreatePty, Event, Response, Role, Subscription};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::daemon::{self, Daemon};
use crate::fifo::quote;
use crate::plan::Context;
use crate::stats::{Row, Table, Unit};

/// The sizes the screen requests run at.
const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

/// What a history terminal prints after its history.
const MARK: &[u8] = b"HISTORY-DONE";

/// The bound of one request or event wait.
const WAIT: Duration = Duration::from_secs(60);

/// The requests table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let mut table = Table::new(
        "requests",
        "Requests",
        format!(
            "Round trips through the client, each request on its own connection, in milliseconds: {} of each cheap \
             request and {} of each costly one per repetition. The screen requests run on a terminal of the given \
             size that printed {} lines of log text; `read_rows` of all asks for every history and screen row; \
             `resize` alternates between the size and one column and row less, timed until the `resized` event \
             (with its checkpoint) reaches an observer. Start-up: from spawning the daemon binary until its \
             registration parses.",
            plan.request_samples, plan.heavy_samples, plan.history_lines
        ),
    );
    let echo = table.add(Row::new("socket_echo", "bare Unix-socket echo (connect, 1 byte, close)", Unit::Milliseconds));
    let ping = table.add(Row::new("ping", "`ping`", Unit::Milliseconds).vs(&["socket_echo"]));
    let get = table.add(Row::new("get", "`get` of an idle terminal", Unit::Milliseconds).vs(&["socket_echo"]));
    let startup = table.add(Row::new("startup", "daemon start-up to registration", Unit::Milliseconds));
    let echo_path = ctx.fresh_dir("echo")?.join("echo.sock");
    let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
    let client = daemon.client();
    let cwd = ctx.work.display().to_string();
    let idle = client.create_pty(CreatePty::new("sh", cwd.clone())).await?.id;
    let mut terminals = Vec::new();
    let mut sized = Vec::new();
    for (cols, rows) in SIZES {
        let (id, observer) = history_terminal(ctx, client, cols, rows).await?;
        let want = u16::try_from(plan.history_lines + u64::from(rows)).unwrap_or(u16::MAX);
        let fit = rows_that_fit(client, id, want).await?;
        terminals.push((id, observer, fit));
        let size = format!("{cols}x{rows}");
        let all = if fit.get() == want {
            format!("`read_rows` all ({want}), {size}")
        } else {
            format!("`read_rows` {fit} of {want} (the most under MAX_ROWS_BYTES), {size}")
        };
        sized.push([
            table.add(Row::new(format!("read_rows_50_{size}"), format!("`read_rows` 50, {size}"), Unit::Milliseconds)),
            table.add(Row::new(format!("read_rows_all_{size}"), all, Unit::Milliseconds)),
            table.add(Row::new(format!("snapshot_{size}"), format!("`snapshot`, {size}"), Unit::Milliseconds)),
            table.add(Row::new(format!("resize_{size}"), format!("`resize` to `resized`, {size}"), Unit::Milliseconds)),
        ]);
    }
    for _ in 0..plan.repetitions {
        for sample in socket_echo(&echo_path, plan.request_samples).await? {
            table.push_sample(echo, sample);
        }
        for _ in 0..plan.request_samples {
            table.push_sample(ping, timed(client.ping()).await?);
            table.push_sample(get, timed(client.get(idle)).await?);
        }
        for (i, (cols, rows)) in SIZES.into_iter().enumerate() {
            let (indices, terminal) = (sized[i], &mut terminals[i]);
            let id = terminal.0;
            let fifty = NonZeroU16::new(50);
            let all = Some(terminal.2);
            for _ in 0..plan.request_samples {
                table.push_sample(indices[0], timed(client.read_rows(id, fifty)).await?);
            }
            for i in 0..plan.heavy_samples {
                table.push_sample(indices[1], timed(client.read_rows(id, all)).await?);
                table.push_sample(indices[2], timed(client.snapshot(id)).await?);
                let (c, r) = if i % 2 == 0 { (cols - 1, rows - 1) } else { (cols, rows) };
                table.push_sample(indices[3], resize(client, id, &mut terminal.1, c, r).await?);
            }
            // Back to the nominal size for the next repetition.
            if plan.heavy_samples % 2 == 1 {
                resize(client, id, &mut terminal.1, cols, rows).await?;
            }
        }
        for _ in 0..plan.startups {
            let other = Daemon::start(&ctx.daemon, &ctx.fresh_dir("startup")?).await?;
            table.push_sample(startup, other.startup().as_secs_f64() * 1e3);
            other.stop().await?;
        }
    }
    drop(terminals);
    daemon.stop().await?;
    Ok(vec![table.finish()])
}

/// The most rows up to `want` that one `read_rows` returns: the daemon refuses an answer over `MAX_ROWS_BYTES`
/// rather than cutting it, so long history may not fit in one request.
pub(super) async fn rows_that_fit(client: &Client, id: u64, want: u16) -> Result<NonZeroU16> {
    let fits = async |rows: u16| match client.read_rows(id, NonZeroU16::new(rows)).await {
        Ok(_) => Ok(true),
        Err(ClientError::Daemon { message }) if message.contains("byte limit") => Ok(false),
        Err(error) => Err(error),
    };
    if fits(want).await? {
        return NonZeroU16::new(want).context("zero rows");
    }
    // The largest count that fits lies in lo..hi.
    let (mut lo, mut hi) = (1u16, want);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid).await? { lo = mid } else { hi = mid }
    }
    NonZeroU16::new(lo).context("not even one row fits")
}

/// Milliseconds one request took.
pub(super) async fn timed<T>(
    request: impl Future<Output = Result<T, opencode_pty_client::ClientError>>,
) -> Result<f64> {
    let started = Instant::now();
    tokio::time::timeout(WAIT, request).await.context("a request took too long")??;
    Ok(started.elapsed().as_secs_f64() * 1e3)
}

/// A `cols` x `rows` terminal that has printed the history file, with an observer on it.
pub(super) async fn history_terminal(
    ctx: &Context,
    client: &Client,
    cols: u16,
    rows: u16,
) -> Result<(u64, Subscription)> {
    let command = format!("cat {}; printf {}; exec cat", quote(&ctx.files.history), String::from_utf8_lossy(MARK));
    let params = CreatePty {
        args: vec!["-c".into(), command],
        cols: NonZeroU16::new(cols).context("zero columns")?,
        rows: NonZeroU16::new(rows).context("zero rows")?,
        ..CreatePty::new("sh", ctx.work.display().to_string())
    };
    let id = client.create_pty(params).await?.id;
    let mut subscription = daemon::subscribe(client, id, 0, "history", Role::Observer).await?;
    let mut tail = subscription.attached().replay.clone();
    let wait = async {
        while !tail.windows(MARK.len()).any(|window| window == MARK) {
            // Keep only what could hold the start of the mark.
            let keep = tail.len().saturating_sub(MARK.len());
            tail.drain(..keep);
            match subscription.next().await.context("the subscription ended")?? {
                Event::Output { bytes, .. } => tail.extend_from_slice(&bytes),
                Event::Message(_) | Event::Resumed(_) => {}
            }
        }
        anyhow::Ok(())
    };
    tokio::time::timeout(WAIT, wait).await.context("the history never finished")??;
    Ok((id, subscription))
}

/// `resize` to `cols` x `rows` until the observer gets `resized`; milliseconds.
pub(super) async fn resize(client: &Client, id: u64, observer: &mut Subscription, cols: u16, rows: u16) -> Result<f64> {
    let started = Instant::now();
    let (c, r) = (NonZeroU16::new(cols).context("zero")?, NonZeroU16::new(rows).context("zero")?);
    let request = client.resize(id, None, c, r);
    let event = async {
        loop {
            match observer.next().await.context("the subscription ended")?? {
                Event::Message(message) if matches!(*message, Response::Resized { .. }) => {
                    return anyhow::Ok(started.elapsed());
                }
                Event::Message(message) if matches!(*message, Response::Exited { .. }) => bail!("the terminal exited"),
                _ => {}
            }
        }
    };
    let (sent, arrived) =
        tokio::time::timeout(WAIT, async { tokio::join!(request, event) }).await.context("no `resized`")?;
    sent?;
    Ok(arrived?.as_secs_f64() * 1e3)
}

/// `count` round trips of a bare Unix-socket echo (a thread accepts, reads one byte, writes it back); ms each.
async fn socket_echo(path: &Path, count: usize) -> Result<Vec<f64>> {
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path)?;
    let server = std::thread::spawn(move || -> std::io::Result<()> {
        use std::io::{Read, Write};
        for _ in 0..count {
            let (mut stream, _) = listener.accept()?;
            let mut byte = [0u8];
            stream.read_exact(&mut byte)?;
            stream.write_all(&byte)?;
        }
        Ok(())
    });
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let mut stream = tokio::net::UnixStream::connect(path).await?;
        stream.write_all(b"x").await?;
        let mut byte = [0u8];
        tokio::time::timeout(WAIT, stream.read_exact(&mut byte)).await.context("no echo")??;
        samples.push(started.elapsed().as_secs_f64() * 1e3);
    }
    server.join().map_err(|_| anyhow::anyhow!("the echo thread panicked"))??;
    Ok(samples)
}

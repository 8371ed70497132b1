//! Case 3, echo latency: one byte sent with `input` to a terminal running `cat` in raw mode, until its echo
//! arrives on the controller's subscription; idle, then while other terminals print at full speed; each beside
//! the same round trip on a PTY the harness opened itself (the kernel's floor) and through the harness's own
//! minimal relay with the 1 ms window (the floor of any daemon with the spec's window).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use opencode_pty_client::{Client, CreatePty, DEFAULT_COLS, DEFAULT_ROWS, Event, Role, Subscription};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::daemon::{self, Daemon};
use crate::fifo::quote;
use crate::plan::Context;
use crate::pty::EchoPty;
use crate::relay::Relay;
use crate::stats::{Row, Table, Unit};

/// The bound of one echo.
pub(super) const ECHO_TIMEOUT: Duration = Duration::from_secs(10);

/// What the echo terminal prints once it is in raw mode.
pub(super) const READY: &[u8] = b"ECHO-READY";

/// The attachment of the controller.
pub(super) const ATTACHMENT: &str = "echo";

/// The echo table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let load = plan.echo_load_terminals;
    let mut table = Table::new(
        "echo",
        "Echo latency",
        format!(
            "`input` of one byte (a request on its own connection, as the client sends it) to a terminal running \
             `stty raw -echo; cat`, until the byte comes back on the controller's subscription; {} round trips per \
             repetition, idle and while {load} other terminals of the daemon run `cat` of the ingest file in a loop \
             (no subscribers). The floor beside each: the same child on a PTY the harness opened itself, the byte \
             written to the master and read back (the kernel's PTY path alone, under the same load), one sample \
             of it after each of ours. The daemon adds its 1 ms output coalescing window (SPEC) to the floor. \
             The relay: the harness's own least daemon with that window, one thread writing each input (a byte \
             on a connection of its own) to a PTY running the same child, another writing each read to a \
             subscriber's socket 1 ms after the read (no emulator, no JSON, no hand-off), one sample after each \
             of ours. \
             Milliseconds; p99 is the 99th percentile of all round trips.",
            plan.echo_samples
        ),
    );
    let raw_idle = table.add(Row::new("raw_idle", "raw PTY (kernel floor), idle", Unit::Milliseconds));
    let relay_idle = table.add(
        Row::new("relay_idle", "relay with the 1 ms window (daemon floor), idle", Unit::Milliseconds).vs(&["raw_idle"]),
    );
    let idle = table.add(Row::new("idle", "daemon, idle", Unit::Milliseconds).vs(&["raw_idle", "relay_idle"]));
    let raw_loaded = table.add(
        Row::new("raw_loaded", format!("raw PTY, {load} terminals printing"), Unit::Milliseconds).vs(&["raw_idle"]),
    );
    let relay_loaded = table.add(
        Row::new("relay_loaded", format!("relay, {load} terminals printing"), Unit::Milliseconds).vs(&["relay_idle"]),
    );
    let loaded = table.add(Row::new("loaded", format!("daemon, {load} terminals printing"), Unit::Milliseconds).vs(&[
        "raw_loaded",
        "relay_loaded",
        "idle",
    ]));
    let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
    let client = daemon.client();
    let cwd = ctx.work.display().to_string();
    let command = format!("stty raw -echo; printf {}; exec cat", String::from_utf8_lossy(READY));
    let params = CreatePty { args: vec!["-c".into(), command], ..CreatePty::new("sh", cwd.clone()) };
    let id = client.create_pty(params).await?.id;
    let mut subscription = daemon::subscribe(client, id, 0, ATTACHMENT, Role::Controller).await?;
    wait_ready(&mut subscription).await?;
    let mut raw = tokio::task::block_in_place(|| EchoPty::start(READY))?;
    let mut relay = tokio::task::block_in_place(|| Relay::start(&ctx.fresh_dir("relay")?.join("relay.sock"), READY))?;
    let relay_output = relay.output.take().context("the relay's output")?;
    relay_output.set_nonblocking(true)?;
    let mut relay_output = UnixStream::from_std(relay_output)?;
    let mut byte = b'a';
    for _ in 0..plan.repetitions {
        for _ in 0..plan.echo_samples {
            table.push_sample(idle, echo(client, id, &mut subscription, next(&mut byte)).await?);
            table.push_sample(raw_idle, tokio::task::block_in_place(|| raw.round_trip(next(&mut byte)))?);
            table.push_sample(relay_idle, relay_echo(&relay.path, &mut relay_output, next(&mut byte)).await?);
        }
        let looping = format!("while :; do cat {}; done", quote(&ctx.files.ingest));
        let mut loaders = Vec::with_capacity(load);
        for _ in 0..load {
            let params = CreatePty { args: vec!["-c".into(), looping.clone()], ..CreatePty::new("sh", cwd.clone()) };
            loaders.push(client.create_pty(params).await?.id);
        }
        // A few round trips first, so that every loader is printing when the samples start.
        for _ in 0..5 {
            echo(client, id, &mut subscription, next(&mut byte)).await?;
        }
        for _ in 0..plan.echo_samples {
            table.push_sample(loaded, echo(client, id, &mut subscription, next(&mut byte)).await?);
            table.push_sample(raw_loaded, tokio::task::block_in_place(|| raw.round_trip(next(&mut byte)))?);
            table.push_sample(relay_loaded, relay_echo(&relay.path, &mut relay_output, next(&mut byte)).await?);
        }
        for loader in loaders {
            client.terminate(loader).await?;
        }
    }
    drop(subscription);
    drop(relay_output);
    tokio::task::block_in_place(|| drop(relay));
    client.terminate(id).await?;
    daemon.stop().await?;
    Ok(vec![table.finish()])
}

/// The next byte to send: a lowercase letter, never the same twice in a row.
pub(super) fn next(byte: &mut u8) -> u8 {
    *byte = if *byte == b'z' { b'a' } else { *byte + 1 };
    *byte
}

/// Reads until the terminal has printed `READY` (replay included).
pub(super) async fn wait_ready(subscription: &mut Subscription) -> Result<()> {
    let mut seen = subscription.attached().replay.clone();
    let wait = async {
        while !seen.windows(READY.len()).any(|window| window == READY) {
            match subscription.next().await.context("the subscription ended")?? {
                Event::Output { bytes, .. } => seen.extend_from_slice(&bytes),
                Event::Message(_) | Event::Resumed(_) => {}
            }
        }
        anyhow::Ok(())
    };
    tokio::time::timeout(ECHO_TIMEOUT, wait).await.context("the echo terminal never got ready")?
}

/// One round trip: `input` of `byte`, until it comes back; milliseconds. Any other output first is an error.
pub(super) async fn echo(client: &Client, id: u64, subscription: &mut Subscription, byte: u8) -> Result<f64> {
    round_trip(client, id, subscription, byte, Other::Refused).await
}

/// Output other than the echo while waiting for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Other {
    /// An error: the child echoes nothing else (`cat` in raw mode).
    Refused,
    /// Skipped: a shell's replayed prompt, or what it printed first.
    Skipped,
}

/// `input` of `byte` as the controller, until output holding it comes back; milliseconds.
pub(super) async fn round_trip(
    client: &Client,
    id: u64,
    subscription: &mut Subscription,
    byte: u8,
    other: Other,
) -> Result<f64> {
    let data = [byte];
    let started = Instant::now();
    let send = client.input(id, ATTACHMENT, DEFAULT_COLS, DEFAULT_ROWS, &data);
    let receive = async {
        loop {
            match subscription.next().await.context("the subscription ended")?? {
                Event::Output { bytes, .. } if bytes.contains(&byte) => return anyhow::Ok(started.elapsed()),
                Event::Output { bytes, .. } if other == Other::Refused => {
                    bail!("unexpected output {bytes:?} while waiting for {byte}")
                }
                Event::Output { .. } | Event::Message(_) | Event::Resumed(_) => {}
            }
        }
    };
    let (sent, received) =
        tokio::time::timeout(ECHO_TIMEOUT, async { tokio::join!(send, receive) }).await.context("no echo in time")?;
    sent?;
    Ok(received?.as_secs_f64() * 1e3)
}

/// One round trip through the relay: `byte` on a connection of its own, until it comes back on the output
/// socket; milliseconds.
async fn relay_echo(path: &Path, output: &mut UnixStream, byte: u8) -> Result<f64> {
    let started = Instant::now();
    let round = async {
        let mut input = UnixStream::connect(path).await?;
        input.write_all(&[byte]).await?;
        let mut got = [0u8; 64];
        let n = output.read(&mut got).await?;
        if !got[..n].contains(&byte) {
            bail!("unexpected relay output {:?} while waiting for {byte}", &got[..n]);
        }
        anyhow::Ok(started.elapsed().as_secs_f64() * 1e3)
    };
    tokio::time::timeout(ECHO_TIMEOUT, round).await.context("no echo from the relay in time")?
}

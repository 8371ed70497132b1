//! Case 5, memory: the daemon's resident memory and threads per idle `sh` terminal, and its growth after the
//! memory file went through one terminal, against what that terminal may keep (the replay ring plus the
//! scrollback, measured as libghostty-vt alone in a fresh harness process), and again once that terminal has
//! gone quiet and the daemon has given back what it gives back (issue 31's goal 1: at most a quarter); tmux per
//! pane measured the same way (server RSS and threads, from `/proc`).

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use opencode_pty_client::{CreatePty, Event, Role};

use crate::daemon::{self, Daemon};
use crate::fifo::{Finish, quote};
use crate::plan::Context;
use crate::stats::{Row, Table, Unit};
use crate::system::{self, ProcStatus};
use crate::tmux::{self, Tmux};

/// The daemon's replay ring per terminal (`DEFAULT_REPLAY_BYTES` in `server/`), in MiB.
pub(super) const REPLAY_MIB: f64 = 2.0;

/// The bound of waiting for a shell's prompt.
const PROMPT_TIMEOUT: Duration = Duration::from_secs(30);

/// The memory table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let (k, size) = (plan.idle_terminals, crate::data::human(plan.memory_bytes));
    let mut table = Table::new(
        "memory",
        "Memory",
        format!(
            "Resident memory (VmRSS) and threads of the daemon process before and after {k} idle `sh` terminals \
             (each has printed its prompt), divided by {k}; then, in a fresh daemon, the growth after {size} of log \
             text went through one 80x24 terminal (still open after its `cat` exited), against the \
             bound it may keep: the {REPLAY_MIB:.0} MiB replay ring plus the growth of libghostty-vt alone (a \
             fresh process parsing the same text with the default scrollback). Then quiet: the same terminal left \
             alone (no output, no reads) past the daemon's quiet delay ({quiet} s), its RSS read every {poll} ms \
             until it has not fallen for {steady} s (at most {limit} s; SPEC D18); issue 31's goal 1 is at most \
             {GOAL_QUIET}x of the full figure. The same again with {size} of plain log lines (the same words and \
             timestamps without colour or non-ASCII text, as builds and services usually print), which compress \
             far better than the deliberately dense default text. The anonymous rows count `RssAnon` alone: VmRSS \
             also grows by the daemon's own code as its first use pages it in (about a MiB of the binary's \
             text, shared with the page cache, the same however many terminals). tmux: the server process, {k} sessions running `sh`, and one pane \
             that printed the same text (tmux keeps 2000 lines).",
            quiet = daemon::QUIET_DELAY.as_secs(),
            poll = daemon::SETTLE_POLL.as_millis(),
            steady = daemon::SETTLE_STEADY.as_secs(),
            limit = daemon::SETTLE_LIMIT.as_secs(),
        ),
    );
    let rss =
        table.add(Row::new("daemon_idle_rss", "daemon RSS per idle terminal", Unit::Kibibytes).vs(&["tmux_idle_rss"]));
    let tmux_rss = table.add(Row::new("tmux_idle_rss", "tmux server RSS per idle pane", Unit::Kibibytes));
    let threads = table.add(Row::new("daemon_idle_threads", "daemon threads per idle terminal", Unit::Count));
    let tmux_threads = table.add(Row::new("tmux_idle_threads", "tmux threads per idle pane", Unit::Count));
    let grown = table.add(
        Row::new("daemon_output_rss", format!("daemon RSS growth after {size}"), Unit::Mebibytes)
            .vs(&["bound", "tmux_output_rss"]),
    );
    let quiet = table.add(
        Row::new("daemon_quiet_rss", format!("daemon RSS growth after {size}, then quiet"), Unit::Mebibytes)
            .vs(&["daemon_output_rss", "tmux_output_rss"]),
    );
    let plain_grown = table.add(Row::new(
        "daemon_plain_rss",
        format!("daemon RSS growth after {size} of plain log lines"),
        Unit::Mebibytes,
    ));
    let plain_quiet = table.add(
        Row::new(
            "daemon_plain_quiet_rss",
            format!("daemon RSS growth after {size} of plain log lines, then quiet"),
            Unit::Mebibytes,
        )
        .vs(&["daemon_plain_rss", "daemon_output_rss"]),
    );
    let mut anon_rows = Vec::new();
    for (key, what) in [("daemon_anon", String::new()), ("daemon_plain_anon", " of plain log lines".to_owned())] {
        let full = table.add(Row::new(
            format!("{key}_rss"),
            format!("daemon anonymous memory growth after {size}{what}"),
            Unit::Mebibytes,
        ));
        let quiet = table.add(
            Row::new(
                format!("{key}_quiet_rss"),
                format!("daemon anonymous memory growth after {size}{what}, then quiet"),
                Unit::Mebibytes,
            )
            .vs(&[&format!("{key}_rss")]),
        );
        anon_rows.push((full, quiet));
    }
    let bound = table.add(Row::new("bound", "bound: replay + scrollback (vt alone)", Unit::Mebibytes));
    let vt_alone = table.add(Row::new("vt_alone", format!("libghostty-vt alone after {size}"), Unit::Mebibytes));
    let tmux_grown = table.add(Row::new("tmux_output_rss", format!("tmux RSS growth after {size}"), Unit::Mebibytes));
    if ctx.tmux.is_none() {
        for row in [tmux_rss, tmux_threads, tmux_grown] {
            table.note(row, tmux::MISSING);
        }
    }
    for _ in 0..plan.repetitions {
        let (per_rss, per_threads) = daemon_idle(ctx, k).await?;
        table.push_sample(rss, per_rss);
        table.push_sample(threads, per_threads);
        let files = [
            (&ctx.files.memory, grown, quiet, anon_rows[0]),
            (&ctx.files.plain, plain_grown, plain_quiet, anon_rows[1]),
        ];
        for (file, full_row, quiet_row, (anon_full, anon_quiet)) in files {
            let (full, settled) = daemon_after_output(ctx, file).await?;
            table.push_sample(full_row, full.mib);
            table.push_sample(quiet_row, settled.mib);
            table.push_sample(anon_full, full.anon_mib);
            table.push_sample(anon_quiet, settled.anon_mib);
            if !settled.steady {
                table.note(quiet_row, format!("still falling after {} s", daemon::SETTLE_LIMIT.as_secs()));
            }
        }
        let alone = vt_alone_mib(&ctx.files.memory)?;
        table.push_sample(vt_alone, alone);
        table.push_sample(bound, REPLAY_MIB + alone);
        if ctx.tmux.is_some() {
            let (per_rss, per_threads) = tmux_idle(ctx, k)?;
            table.push_sample(tmux_rss, per_rss);
            table.push_sample(tmux_threads, per_threads);
            table.push_sample(tmux_grown, tmux_after_output(ctx)?);
        }
    }
    let mut table = table.finish();
    for row in [quiet, plain_quiet, anon_rows[0].1, anon_rows[1].1] {
        if let Some(ratio) = table.rows[row].ratios.first().map(|ratio| ratio.value)
            && ratio > GOAL_QUIET
        {
            table.note(row, format!("above issue 31's goal of {GOAL_QUIET}x the full figure"));
        }
    }
    Ok(vec![table])
}

/// Issue 31's goal 1: a full terminal, once quiet, holds at most this share of what it held full.
const GOAL_QUIET: f64 = 0.25;

/// What a terminal held, full or once quiet.
#[derive(Debug, Clone, Copy)]
struct Quiet {
    /// The daemon's growth since before the terminal, in MiB.
    mib: f64,
    /// The growth of its anonymous memory, in MiB.
    anon_mib: f64,
    /// Whether the RSS had stopped falling (else: the bound of the wait was reached).
    steady: bool,
}

/// KiB and threads per terminal: a fresh daemon before and after `k` idle `sh` terminals.
async fn daemon_idle(ctx: &Context, k: usize) -> Result<(f64, f64)> {
    let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
    let before = daemon.status()?;
    idle_shells(ctx, &daemon, k).await?;
    let after = daemon.status()?;
    daemon.stop().await?;
    Ok(per(before, after, k))
}

/// Starts `k` idle `sh` terminals in `daemon` and waits until each has printed its prompt.
pub(super) async fn idle_shells(ctx: &Context, daemon: &Daemon, k: usize) -> Result<()> {
    let client = daemon.client();
    for _ in 0..k {
        let id = client.create_pty(CreatePty::new("sh", ctx.work.display().to_string())).await?.id;
        let mut subscription = daemon::subscribe(client, id, 0, "prompt", Role::Observer).await?;
        if subscription.attached().replay.is_empty() {
            let first = tokio::time::timeout(PROMPT_TIMEOUT, subscription.next()).await.context("no prompt")?;
            if !matches!(first, Some(Ok(Event::Output { .. }))) {
                bail!("an idle shell sent {first:?} instead of its prompt");
            }
        }
    }
    Ok(())
}

/// MiB the daemon grew by after `file` went through one terminal, and once that terminal was quiet.
async fn daemon_after_output(ctx: &Context, file: &std::path::Path) -> Result<(Quiet, Quiet)> {
    let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
    let client = daemon.client();
    let before = daemon.status()?;
    let params =
        CreatePty { args: vec![file.display().to_string()], ..CreatePty::new("cat", ctx.work.display().to_string()) };
    let id = client.create_pty(params).await?.id;
    let subscription = daemon::subscribe(client, id, 0, "drain", Role::Observer).await?;
    daemon::drain(subscription, ctx.plan.timeout()).await?;
    let after = daemon.status()?;
    let settled = daemon.settled_rss(daemon::QUIET_DELAY, daemon::SETTLE_LIMIT).await?;
    daemon.stop().await?;
    let growth = |kib: u64, from: u64| kib.saturating_sub(from) as f64 / 1024.0;
    let full = Quiet {
        mib: growth(after.rss_kib, before.rss_kib),
        anon_mib: growth(after.anon_kib, before.anon_kib),
        steady: true,
    };
    let quiet = Quiet {
        mib: growth(settled.rss_kib, before.rss_kib),
        anon_mib: growth(settled.anon_kib, before.anon_kib),
        steady: settled.steady,
    };
    Ok((full, quiet))
}

/// MiB a fresh harness process grows by when libghostty-vt alone parses `file` (the hidden `vt-memory`
/// command).
pub(super) fn vt_alone_mib(file: &std::path::Path) -> Result<f64> {
    let mut command = Command::new(std::env::current_exe()?);
    command.arg("vt-memory").arg(file);
    let output = system::run(&mut command, Duration::from_secs(300))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let kib: u64 = text.trim().parse().with_context(|| format!("vt-memory printed {text:?}"))?;
    Ok(kib as f64 / 1024.0)
}

/// The hidden `vt-memory FILE` command: prints how many KiB this process's RSS grew by while one 80x24
/// terminal with the daemon's scrollback parsed `file`.
pub(crate) fn vt_memory_command(file: &std::path::Path) -> Result<()> {
    use std::io::Read;
    // Streamed in reads of the daemon's size, so that only the terminal grows.
    let mut input = std::fs::File::open(file)?;
    let mut chunk = vec![0u8; crate::pty::READ_BYTES];
    let before = system::status(std::process::id())?;
    let mut terminal = opencode_pty_vt::Terminal::new(80, 24, super::ingest::DAEMON_SCROLLBACK_LINES)?;
    loop {
        let n = input.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        terminal.write(&chunk[..n]);
        let _ = terminal.take_replies();
    }
    let after = system::status(std::process::id())?;
    println!("{}", after.rss_kib.saturating_sub(before.rss_kib));
    Ok(())
}

/// KiB and threads per pane: a fresh tmux server before and after `k` sessions running `sh`.
fn tmux_idle(ctx: &Context, k: usize) -> Result<(f64, f64)> {
    let tmux = Tmux::start(&ctx.fresh_dir("tmux")?, "idle")?;
    let pid = tmux.server_pid()?;
    let before = system::status(pid)?;
    tmux_idle_panes(&tmux, k)?;
    let after = system::status(pid)?;
    tmux.stop()?;
    Ok(per(before, after, k))
}

/// Starts `k` sessions running `sh` in `tmux` and waits until each pane shows its prompt.
pub(super) fn tmux_idle_panes(tmux: &Tmux, k: usize) -> Result<()> {
    for i in 0..k {
        tmux.new_session(&format!("idle{i}"), 80, 24, "sh")?;
    }
    // tmux tells nothing when a pane's shell has printed its prompt: poll each pane's text, within a bound.
    let deadline = Instant::now() + PROMPT_TIMEOUT;
    for i in 0..k {
        while tmux.capture(&format!("idle{i}"))?.trim().is_empty() {
            if Instant::now() > deadline {
                bail!("tmux pane {i} printed no prompt");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    Ok(())
}

/// MiB the tmux server grew by after one pane printed the memory file.
fn tmux_after_output(ctx: &Context) -> Result<f64> {
    let dir = ctx.fresh_dir("tmux")?;
    let tmux = Tmux::start(&dir, "output")?;
    let pid = tmux.server_pid()?;
    let before = system::status(pid)?;
    let mut finish = Finish::new(&dir.join("done"), 1)?;
    let command = format!("cat {}; {}; exec cat", quote(&ctx.files.memory), finish.report_command(0));
    tmux.new_session("output", 80, 24, &command)?;
    tokio::task::block_in_place(|| finish.wait(1, ctx.plan.timeout()))?;
    let after = system::status(pid)?;
    tmux.stop()?;
    Ok(after.rss_kib.saturating_sub(before.rss_kib) as f64 / 1024.0)
}

/// KiB and threads per item between two readings.
fn per(before: ProcStatus, after: ProcStatus, k: usize) -> (f64, f64) {
    let k = k.max(1) as f64;
    (after.rss_kib.saturating_sub(before.rss_kib) as f64 / k, after.threads.saturating_sub(before.threads) as f64 / k)
}

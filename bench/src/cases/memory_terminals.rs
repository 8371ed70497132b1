//! Memory against terminals (issue 31), the rows behind the memory chart: the resident memory of the whole
//! server process holding N terminals that are idle `sh`, full (each printed a history that fills its bounds)
//! and full then quiet (left alone past the daemon's quiet delay), for our daemon and for tmux (which keeps the
//! same memory whether quiet or not, so it has no third series).

use anyhow::{Context as _, Result};
use opencode_pty_client::{CreatePty, Role};

use super::memory::{idle_shells, tmux_idle_panes};
use crate::daemon::{self, Daemon};
use crate::fifo::{Finish, Gate, quote};
use crate::plan::Context;
use crate::stats::{Row, Table, Unit};
use crate::system;
use crate::tmux::{self, Tmux};

/// The daemon argument that turns compression off, so that "full" is measured before any terminal is
/// compressed however long the others take to print (SPEC D18).
const NO_COMPRESSION: [&str; 2] = ["--compress-after-ms", "0"];

/// The memory-against-terminals table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let file = &ctx.files.scale;
    let size = crate::data::human(crate::data::file_len(file)?);
    let mut table = Table::new(
        "memory_terminals",
        "Memory against terminals",
        format!(
            "Resident memory (VmRSS) of the whole server process, in one run per count, each in a fresh daemon \
             or tmux server: N idle 80x24 `sh` terminals (each has printed its prompt); N full terminals, each \
             of which printed {size} of log text (enough to fill the default 10,000 lines of scrollback and \
             the 2 MiB replay ring) and is still open, measured once all have printed in a daemon started with \
             `--compress-after-ms 0` (nothing compressed yet, however long the last one took); and N full \
             terminals, then quiet: the same in a daemon with its defaults, left alone past its quiet delay \
             ({quiet} s) until its RSS stopped falling (at most {limit} s; SPEC D18). tmux: N sessions \
             beside the one that holds the server up, its `history-limit` of 2000 lines; it keeps the same \
             memory quiet or not. Charted in memory.svg.",
            quiet = daemon::QUIET_DELAY.as_secs(),
            limit = daemon::SETTLE_LIMIT.as_secs(),
        ),
    );
    let mut rows = Vec::new();
    for &n in &plan.memory_terminals {
        let (terminals, panes) = if n == 1 { ("terminal", "pane") } else { ("terminals", "panes") };
        let key = |what: &str| format!("{what}_{n}");
        let idle = table.add(
            Row::new(key("daemon_idle"), format!("daemon, {n} idle {terminals}"), Unit::Mebibytes)
                .vs(&[&key("tmux_idle")]),
        );
        let full = table.add(
            Row::new(key("daemon_full"), format!("daemon, {n} full {terminals}"), Unit::Mebibytes)
                .vs(&[&key("tmux_full")]),
        );
        let quiet = table.add(
            Row::new(key("daemon_quiet"), format!("daemon, {n} full {terminals}, then quiet"), Unit::Mebibytes)
                .vs(&[&key("daemon_full"), &key("tmux_full")]),
        );
        let tmux_idle = table.add(Row::new(key("tmux_idle"), format!("tmux, {n} idle {panes}"), Unit::Mebibytes));
        let tmux_full = table.add(Row::new(key("tmux_full"), format!("tmux, {n} full {panes}"), Unit::Mebibytes));
        if ctx.tmux.is_none() {
            table.note(tmux_idle, tmux::MISSING);
            table.note(tmux_full, tmux::MISSING);
        }
        rows.push((n, idle, full, quiet, tmux_idle, tmux_full));
    }
    for (n, idle, full, quiet, tmux_idle, tmux_full) in rows {
        let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
        idle_shells(ctx, &daemon, n).await?;
        table.push_sample(idle, mib(daemon.status()?.rss_kib));
        daemon.stop().await?;

        let daemon = Daemon::start_with(&ctx.daemon, &ctx.fresh_dir("daemon")?, &NO_COMPRESSION).await?;
        print_all(ctx, &daemon, n, file).await?;
        table.push_sample(full, mib(daemon.status()?.rss_kib));
        daemon.stop().await?;

        let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
        print_all(ctx, &daemon, n, file).await?;
        let settled = daemon.settled_rss(daemon::QUIET_DELAY, daemon::SETTLE_LIMIT).await?;
        table.push_sample(quiet, mib(settled.rss_kib));
        if !settled.steady {
            table.note(quiet, format!("still falling after {} s", daemon::SETTLE_LIMIT.as_secs()));
        }
        daemon.stop().await?;

        if ctx.tmux.is_some() {
            let server = Tmux::start(&ctx.fresh_dir("tmux")?, "idle")?;
            tmux_idle_panes(&server, n)?;
            table.push_sample(tmux_idle, mib(system::status(server.server_pid()?)?.rss_kib));
            server.stop()?;
            table.push_sample(tmux_full, tmux_full_mib(ctx, n, file)?);
        }
    }
    Ok(vec![table.finish()])
}

/// KiB as MiB.
fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// `n` terminals of `daemon` each `cat` `file`, each drained by one observer until `exited`; they stay open.
async fn print_all(ctx: &Context, daemon: &Daemon, n: usize, file: &std::path::Path) -> Result<()> {
    let client = daemon.client();
    let mut drains = Vec::with_capacity(n);
    for _ in 0..n {
        let params = CreatePty {
            args: vec![file.display().to_string()],
            ..CreatePty::new("cat", ctx.work.display().to_string())
        };
        let id = client.create_pty(params).await?.id;
        let subscription = daemon::subscribe(client, id, 0, "drain", Role::Observer).await?;
        drains.push(tokio::spawn(daemon::drain(subscription, ctx.plan.timeout())));
    }
    for drain in drains {
        drain.await.context("an observer task panicked")??;
    }
    Ok(())
}

/// The MiB of a fresh tmux server once `n` panes, released at one moment, each printed `file` (and wait).
fn tmux_full_mib(ctx: &Context, n: usize, file: &std::path::Path) -> Result<f64> {
    let dir = ctx.fresh_dir("tmux")?;
    let server = Tmux::start(&dir, "full")?;
    let mut gate = Gate::new(&dir.join("gate"))?;
    let mut finish = Finish::new(&dir.join("done"), n)?;
    for i in 0..n {
        let command = format!("{}; cat {}; {}; exec cat", gate.wait_command(), quote(file), finish.report_command(i));
        server.new_session(&format!("full{i}"), 80, 24, &command)?;
    }
    gate.open(n)?;
    tokio::task::block_in_place(|| finish.wait(n, ctx.plan.timeout()))?;
    let rss = system::status(server.server_pid()?)?.rss_kib;
    server.stop()?;
    Ok(mib(rss))
}

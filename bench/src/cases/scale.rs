//! Case 4, scale: 1, 16, 64 and 256 terminals each print the scale file at once, each drained by one observer
//! until `exited`; tmux with the same number of detached sessions is the baseline. Reported: the aggregate
//! throughput and how the slowest terminal fared against the mean (starvation shows as a small ratio).

use anyhow::Result;

use crate::daemon::Daemon;
use crate::plan::Context;
use crate::stats::{Row, Table, Unit};
use crate::tmux::{self, Tmux};
use crate::workload;

/// The scale table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let size = crate::data::human(plan.scale_bytes);
    let mut table = Table::new(
        "scale",
        "Scale: many terminals printing at once",
        format!(
            "N 80x24 terminals each `cat` {size} of log text, released at one moment; ours each drained by \
             one observer until `exited`, tmux as N detached sessions until each `cat` finished. Aggregate: all \
             bytes over the time until the last terminal finished. Slowest/mean: the slowest terminal's \
             throughput over the mean (1 when fair)."
        ),
    );
    let mut rows = Vec::new();
    for &n in &plan.scale_terminals {
        let (ours, theirs) = (format!("daemon_{n}"), format!("tmux_{n}"));
        let daemon = table.add(
            Row::new(&ours, format!("daemon, {n} terminal{}", plural(n)), Unit::MegabytesPerSecond).vs(&[&theirs]),
        );
        let tmux_row =
            table.add(Row::new(&theirs, format!("tmux, {n} session{}", plural(n)), Unit::MegabytesPerSecond));
        let fair =
            table.add(Row::new(format!("daemon_{n}_fairness"), format!("daemon, {n}: slowest/mean"), Unit::Ratio));
        let tmux_fair =
            table.add(Row::new(format!("tmux_{n}_fairness"), format!("tmux, {n}: slowest/mean"), Unit::Ratio));
        if ctx.tmux.is_none() {
            table.note(tmux_row, tmux::MISSING);
            table.note(tmux_fair, tmux::MISSING);
        }
        rows.push((n, daemon, tmux_row, fair, tmux_fair));
    }
    let server = match ctx.tmux {
        Some(_) => Some(Tmux::start(&ctx.work, "scale")?),
        None => None,
    };
    let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
    let file = &ctx.files.scale;
    let bytes = crate::data::file_len(file)?;
    for _ in 0..plan.scale_repetitions {
        for &(n, ours, theirs, fair, tmux_fair) in &rows {
            let dir = ctx.fresh_dir("scale")?;
            match workload::cat_at_once(&daemon, &dir, n, 1, file, plan.timeout()).await {
                Ok(run) => {
                    table.push_sample(ours, run.aggregate(bytes));
                    table.push_sample(fair, run.slowest_over_mean());
                }
                Err(error) => table.note(ours, format!("a run failed: {error:#}")),
            }
            if let Some(server) = &server {
                let run = server.cat_at_once(&ctx.fresh_dir("tmux")?, n, file, plan.timeout())?;
                table.push_sample(theirs, run.aggregate(bytes));
                table.push_sample(tmux_fair, run.slowest_over_mean());
            }
        }
    }
    daemon.stop().await?;
    if let Some(server) = server {
        server.stop()?;
    }
    Ok(vec![table.finish()])
}

/// `s` unless there is one.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

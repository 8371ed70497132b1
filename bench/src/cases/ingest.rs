//! Cases 1 and 2, ingest and fan-out: one 80x24 terminal prints the ingest file, measured on the raw PTY (the
//! kernel's limit), in libghostty-vt alone (the parser's limit), in a detached tmux session and in our daemon
//! with 1, 4 and 16 observers draining the socket until `exited`, and where the CPU of each daemon run went
//! (with the most MB/s both cores could carry at that cost). Every repetition runs each of them once, in turn.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use opencode_pty_vt::Terminal;

use crate::cpu::{CpuTimes, per_mb};
use crate::daemon::Daemon;
use crate::plan::Context;
use crate::pty;
use crate::stats::{Row, Table, Unit, mb_per_s};
use crate::tmux::{self, Tmux};
use crate::workload::{self, Integration};

/// The scrollback the daemon gives a terminal by default (`DEFAULT_SCROLLBACK_LINES` in `server/`).
pub(super) const DAEMON_SCROLLBACK_LINES: usize = 10_000;

/// The ingest table, the fan-out table and the fan-out's CPU table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let size = crate::data::human(plan.ingest_bytes);
    let mut ingest = Table::new(
        "ingest",
        "Ingest: one terminal prints the file",
        format!(
            "{size} of generated log text (SGR colours, CRLF, UTF-8 and wide characters) printed by `cat` \
             into one 80x24 terminal; MB/s of the file's size from the start to the end. Raw PTY: `cat` into a PTY \
             the harness opened, drained with 64 KiB reads. libghostty-vt: the same bytes written in 64 KiB \
             chunks into an in-process `Terminal` with the daemon's default scrollback. PTY read and parsed in \
             one thread: the raw PTY drain writing each read into such a `Terminal` before the next read, the \
             least any emulator behind a PTY does (no thread hand-off, no replay, no socket). tmux: a detached session \
             (default settings) until `cat` finished. Daemon: `cat` in a PTY of our daemon, one observer \
             subscription draining the socket until `exited`. Shell integration on: the same in `bash -c` started \
             with `shell_integration` (issue 29), so that the daemon scans every byte for marks."
        ),
    );
    let raw = ingest.add(Row::new("raw_pty", "raw PTY drain (kernel limit)", Unit::MegabytesPerSecond));
    let vt = ingest.add(Row::new("vt_parse", "libghostty-vt parse alone (parser limit)", Unit::MegabytesPerSecond));
    let pty_vt = ingest.add(
        Row::new("pty_vt", "PTY read and parsed in one thread (no daemon)", Unit::MegabytesPerSecond)
            .vs(&["vt_parse", "raw_pty"]),
    );
    let tmux_row = ingest.add(Row::new("tmux", "tmux, detached session", Unit::MegabytesPerSecond));
    let ours = ingest.add(
        Row::new("daemon_1", "daemon, 1 observer over the socket", Unit::MegabytesPerSecond)
            .vs(&["vt_parse", "tmux", "raw_pty", "pty_vt"]),
    );
    let shell = ingest.add(
        Row::new("daemon_shell", "daemon, 1 observer, shell integration on", Unit::MegabytesPerSecond)
            .vs(&["daemon_1"]),
    );
    let mut fanout = Table::new(
        "fanout",
        "Fan-out: one terminal, several observers",
        "The ingest run of our daemon with 1, 4 and 16 observer subscriptions on the same terminal, each \
         draining the socket; the time runs until the last observer has `exited`.",
    );
    let fan_vt = fanout.add(Row::new("vt_parse", "libghostty-vt parse alone (parser limit)", Unit::MegabytesPerSecond));
    let fan_rows: Vec<(usize, usize, usize)> = plan
        .observers
        .iter()
        .map(|&n| {
            let label = format!("daemon, {n} observer{}", if n == 1 { "" } else { "s" });
            let row = Row::new(format!("daemon_{n}"), label, Unit::MegabytesPerSecond);
            let row = if n == plan.observers[0] { row.vs(&["vt_parse"]) } else { row.vs(&["daemon_1", "vt_parse"]) };
            let ceiling = Row::new(
                format!("ceiling_{n}"),
                format!(
                    "ceiling of {n} observer{}: every CPU busy at that run's CPU per MB",
                    if n == 1 { "" } else { "s" }
                ),
                Unit::MegabytesPerSecond,
            );
            (n, fanout.add(row), fanout.add(ceiling.vs(&["daemon_1"])))
        })
        .collect();
    let mut cpu = Table::new(
        "fanout_cpu",
        "Fan-out: where the CPU goes",
        "The CPU time of each fan-out run above, from the start to the last `exited`, per megabyte of the file: \
         the whole machine's (`/proc/stat`, busy: user, system, interrupts), the daemon's with its reaped \
         children (the `cat`), the harness's (the observers' reads and decoding) and the rest (kernel threads \
         such as the PTY's, anything else running); and how many CPUs were busy on average. The ceiling rows \
         of the fan-out table divide every CPU of the machine by the machine's cost per MB: no run that costs \
         that much can go faster on this machine.",
    );
    let cpu_rows: Vec<CpuRows> = plan.observers.iter().map(|&n| CpuRows::add(&mut cpu, n)).collect();
    let tmux_server = match &ctx.tmux {
        Some(_) => Some(Tmux::start(&ctx.work, "ingest")?),
        None => {
            ingest.note(tmux_row, tmux::MISSING);
            None
        }
    };
    let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
    let file = &ctx.files.ingest;
    let bytes = crate::data::file_len(file)?;
    for _ in 0..plan.repetitions {
        let (_, elapsed) = tokio::task::block_in_place(|| pty::drain_cat(file))?;
        ingest.push_sample(raw, mb_per_s(bytes, elapsed.as_secs_f64()));
        let parse = tokio::task::block_in_place(|| vt_parse(file))?;
        ingest.push_sample(vt, parse);
        fanout.push_sample(fan_vt, parse);
        ingest.push_sample(pty_vt, tokio::task::block_in_place(|| pty_parse(file))?);
        if let Some(server) = &tmux_server {
            let run = server.cat_at_once(&ctx.fresh_dir("tmux")?, 1, file, plan.timeout())?;
            ingest.push_sample(tmux_row, run.aggregate(bytes));
        }
        for (&(observers, row, ceiling), cpu_row) in fan_rows.iter().zip(&cpu_rows) {
            let run =
                workload::cat_at_once(&daemon, &ctx.fresh_dir("ingest")?, 1, observers, file, plan.timeout()).await;
            match run {
                Ok(run) => {
                    fanout.push_sample(row, run.aggregate(bytes));
                    if let Some(used) = run.cpu {
                        // A run shorter than the clock tick of /proc/stat may show no busy time at all, and no
                        // ceiling can be drawn from nothing.
                        if used.machine_busy > 0.0 {
                            fanout.push_sample(ceiling, used.ceiling_mb_per_s(bytes));
                        }
                        cpu_row.push(&mut cpu, &used, bytes);
                    }
                    if observers == 1 {
                        ingest.push_sample(ours, run.aggregate(bytes));
                    }
                }
                Err(error) => fanout.note(row, format!("a run failed: {error:#}")),
            }
        }
        let dir = ctx.fresh_dir("ingest")?;
        match workload::cat_at_once_in(&daemon, &dir, 1, 1, file, plan.timeout(), Integration::Bash).await {
            Ok(run) => ingest.push_sample(shell, run.aggregate(bytes)),
            Err(error) => ingest.note(shell, format!("a run failed: {error:#}")),
        }
    }
    daemon.stop().await?;
    if let Some(server) = tmux_server {
        server.stop()?;
    }
    Ok(vec![ingest.finish(), fanout.finish(), cpu.finish()])
}

/// The CPU rows of one observer count.
struct CpuRows {
    machine: usize,
    daemon: usize,
    observers: usize,
    rest: usize,
    busy: usize,
}

impl CpuRows {
    /// Adds the rows of `n` observers to `table`, compared with those of one observer.
    fn add(table: &mut Table, n: usize) -> CpuRows {
        let of = format!("{n} observer{}", if n == 1 { "" } else { "s" });
        let mut row = |key: &str, label: &str, unit: Unit| {
            let row = Row::new(format!("{key}_{n}"), format!("{label}, {of}"), unit);
            let vs = format!("{key}_1");
            table.add(if n == 1 { row } else { row.vs(&[vs.as_str()]) })
        };
        CpuRows {
            machine: row("machine", "machine", Unit::CpuMillisecondsPerMegabyte),
            daemon: row("daemon", "daemon with its `cat`", Unit::CpuMillisecondsPerMegabyte),
            observers: row("observers", "observers, in the harness", Unit::CpuMillisecondsPerMegabyte),
            rest: row("rest", "rest of the machine", Unit::CpuMillisecondsPerMegabyte),
            busy: row("busy", "CPUs busy", Unit::Cpus),
        }
    }

    /// Records one run's use for `bytes` of output.
    fn push(&self, table: &mut Table, used: &CpuTimes, bytes: u64) {
        table.push_sample(self.machine, per_mb(used.machine_busy, bytes));
        table.push_sample(self.daemon, per_mb(used.process, bytes));
        table.push_sample(self.observers, per_mb(used.harness, bytes));
        table.push_sample(self.rest, per_mb(used.rest(), bytes));
        table.push_sample(self.busy, used.busy_cpus());
    }
}

/// `cat file` on a PTY of the harness's, each read parsed in a fresh 80x24 terminal (the daemon's scrollback)
/// before the next; MB/s of the whole.
fn pty_parse(file: &Path) -> Result<f64> {
    let mut terminal = Terminal::new(80, 24, DAEMON_SCROLLBACK_LINES)?;
    let (_, elapsed) = pty::drain_cat_into(file, |chunk| {
        terminal.write(chunk);
        let _ = terminal.take_replies();
    })?;
    Ok(mb_per_s(crate::data::file_len(file)?, elapsed.as_secs_f64()))
}

/// Parses `file` in a fresh 80x24 terminal with the daemon's scrollback, 64 KiB at a time; MB/s.
pub(super) fn vt_parse(file: &Path) -> Result<f64> {
    let bytes = std::fs::read(file)?;
    let mut terminal = Terminal::new(80, 24, DAEMON_SCROLLBACK_LINES)?;
    let started = Instant::now();
    for chunk in bytes.chunks(pty::READ_BYTES) {
        terminal.write(chunk);
        // The daemon drains query replies after every write; this text asks for none.
        let _ = terminal.take_replies();
    }
    Ok(mb_per_s(bytes.len() as u64, started.elapsed().as_secs_f64()))
}

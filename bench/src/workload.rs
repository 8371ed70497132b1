//! The workload of the ingest, fan-out and scale cases on our daemon: terminals that each `cat` a file once,
//! all released at one moment by a gate, every terminal drained by its observers through the socket until
//! `exited`. `CatRun` is what both this and tmux's version (`Tmux::cat_at_once`) report: the start and each
//! terminal's end, and for our daemon the CPU the run used.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use opencode_pty_client::{CreatePty, Role};

use crate::cpu::CpuTimes;
use crate::daemon::{self, Daemon};
use crate::fifo::{Gate, quote};
use crate::stats::mb_per_s;

/// When a run of terminals started and when each one finished.
#[derive(Debug, Clone)]
pub(crate) struct CatRun {
    /// When the gate opened.
    pub started: Instant,
    /// When each terminal finished, by terminal.
    pub ends: Vec<Instant>,
    /// The CPU used from the start to the last end: the machine's, the daemon's (with the children it reaped:
    /// the `cat`s) and the harness's (the observers). Not measured for tmux.
    pub cpu: Option<CpuTimes>,
}

impl CatRun {
    /// Seconds from the start to each terminal's end.
    pub(crate) fn seconds(&self) -> Vec<f64> {
        self.ends.iter().map(|end| end.saturating_duration_since(self.started).as_secs_f64()).collect()
    }

    /// All terminals' bytes (`bytes` each) over the time until the last one finished, in MB/s.
    pub(crate) fn aggregate(&self, bytes: u64) -> f64 {
        let last = self.seconds().into_iter().fold(0.0, f64::max);
        mb_per_s(bytes * self.ends.len() as u64, last)
    }

    /// The slowest terminal's throughput over the mean throughput (1 when all are equal).
    pub(crate) fn slowest_over_mean(&self) -> f64 {
        let rates: Vec<f64> = self.seconds().into_iter().map(|s| 1.0 / s.max(1e-9)).collect();
        let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
        rates.iter().copied().fold(f64::INFINITY, f64::min) / mean
    }
}

/// `terminals` 80x24 terminals of `daemon` each `cat` `file` once, with `observers` observer subscriptions each
/// (attached before the start) draining the socket; a terminal ends when all its observers have `exited`.
/// Every terminal is terminated afterwards.
pub(crate) async fn cat_at_once(
    daemon: &Daemon,
    dir: &Path,
    terminals: usize,
    observers: usize,
    file: &Path,
    limit: Duration,
) -> Result<CatRun> {
    cat_at_once_in(daemon, dir, terminals, observers, file, limit, Integration::Off).await
}

/// Whether the terminals of [`cat_at_once_in`] run `sh` or `bash` started with shell integration (whose
/// output the daemon then scans for marks; `bash -c` reads no rcfile, so it writes none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Integration {
    Off,
    Bash,
}

/// [`cat_at_once`], in terminals started as `integration` says.
pub(crate) async fn cat_at_once_in(
    daemon: &Daemon,
    dir: &Path,
    terminals: usize,
    observers: usize,
    file: &Path,
    limit: Duration,
    integration: Integration,
) -> Result<CatRun> {
    let client = daemon.client();
    let file_len = crate::data::file_len(file)?;
    let mut gate = Gate::new(&dir.join("gate"))?;
    let command = format!("{}; exec cat {}", gate.wait_command(), quote(file));
    let cwd = dir.display().to_string();
    let mut ids = Vec::with_capacity(terminals);
    let mut drains = Vec::with_capacity(terminals);
    for _ in 0..terminals {
        let args = vec!["-c".into(), command.clone()];
        let params = match integration {
            Integration::Off => CreatePty { args, ..CreatePty::new("sh", cwd.clone()) },
            Integration::Bash => {
                CreatePty { args, shell_integration: Some(true), ..CreatePty::new("bash", cwd.clone()) }
            }
        };
        let id = client.create_pty(params).await?.id;
        ids.push(id);
        let mut tasks = Vec::with_capacity(observers);
        for o in 0..observers {
            let subscription = daemon::subscribe(client, id, 0, &format!("observer-{o}"), Role::Observer).await?;
            tasks.push(tokio::spawn(daemon::drain(subscription, limit)));
        }
        drains.push(tasks);
    }
    let before = CpuTimes::read(daemon.pid())?;
    let started = gate.open(terminals)?;
    let mut ends = Vec::with_capacity(terminals);
    for tasks in drains {
        let mut end = started;
        for task in tasks {
            let drained = task.await.context("an observer task panicked")??;
            ensure!(drained.bytes >= file_len, "an observer saw {} of {file_len} bytes", drained.bytes);
            end = end.max(drained.exited_at);
        }
        ends.push(end);
    }
    // Every terminal has `exited`: its `cat` was reaped, so its CPU time is the daemon's children's.
    let cpu = CpuTimes::read(daemon.pid())?.since(&before);
    for id in ids {
        client.terminate(id).await?;
    }
    Ok(CatRun { started, ends, cpu: Some(cpu) })
}

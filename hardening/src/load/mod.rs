//! Load runs against a real daemon through its socket (issue 16): many terminals streaming to observers at
//! once, slow and stalled readers, create/connect/subscribe cycles that must leave nothing behind, and a burst
//! of concurrent one-shot requests. Each case is pass or fail with its figures; `Scale::quick` is the short
//! version the test command runs, `Scale::full` what `just load` runs.

mod cycles;
mod latency;
mod streams;

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use opencode_pty_bench::daemon::Daemon;
use opencode_pty_bench::system;

/// How big each case is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    /// Terminals streaming at once, one observer each.
    pub terminals: usize,
    /// Lines each of them prints (`seq 1 N`: about 7 bytes a line, 600,000 lines are 4 MiB).
    pub lines: u64,
    /// Lines the terminal with a slow observer prints (enough to overflow the observer's backlog bound).
    pub flood_lines: u64,
    /// Create/exit/terminate, connect/ping and subscribe/close cycles of each kind.
    pub cycles: usize,
    /// One-shot requests sent at once.
    pub concurrent: usize,
    /// Whether speed is judged (the full run) or only reported (the short run in the test command, where
    /// timing on a loaded machine proves nothing).
    pub judge_speed: bool,
}

impl Scale {
    /// The sizes: 200 terminals of 4 MiB, 1,000 cycles, 500 concurrent requests.
    pub fn full() -> Scale {
        Scale {
            terminals: 200,
            lines: 600_000,
            flood_lines: 4_000_000,
            cycles: 1000,
            concurrent: 500,
            judge_speed: true,
        }
    }

    /// A short run for the test command (it still overflows a slow observer's bound).
    pub fn quick() -> Scale {
        Scale { terminals: 8, lines: 20_000, flood_lines: 2_500_000, cycles: 60, concurrent: 100, judge_speed: false }
    }
}

/// One case's outcome.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The case, as HARDENING.md names it.
    pub case: &'static str,
    /// `None` when it passed, else what went wrong.
    pub failure: Option<String>,
    /// Its figures, as one line.
    pub figures: String,
}

/// How long any one case may take before it fails (the full 200-terminal case takes well under this).
pub const CASE_TIMEOUT: Duration = Duration::from_secs(900);

/// Runs every case against a fresh daemon `binary` with runtime directories under `root`; the outcomes in
/// order. A case that cannot even run is a failed outcome, not an early return, so every case is reported.
/// With `only`, just the cases whose name contains it run.
pub async fn run_all(binary: &Path, root: &Path, scale: Scale, only: Option<&str>) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    let cases: [(&'static str, CaseFn); 7] = [
        ("terminals streaming at once", |d, dir, s| Box::pin(streams::many_terminals(d, dir, s))),
        ("a slow observer is dropped", |d, dir, s| Box::pin(streams::slow_observer(d, dir, s))),
        ("a stalled controller stops only its terminal", |d, dir, s| Box::pin(streams::stalled_controller(d, dir, s))),
        ("create/exit/terminate, connect, subscribe cycles", |d, dir, s| Box::pin(cycles::cycles(d, dir, s))),
        ("concurrent one-shot requests", |d, dir, s| Box::pin(cycles::concurrent(d, dir, s))),
        ("idle connections up to the cap and past it", |d, dir, s| Box::pin(cycles::connection_cap(d, dir, s))),
        ("requests beside busy terminals", |d, dir, s| Box::pin(latency::beside_busy_terminals(d, dir, s))),
    ];
    for (n, (case, body)) in cases.into_iter().enumerate() {
        if only.is_some_and(|only| !case.contains(only)) {
            continue;
        }
        let dir = root.join(format!("case-{n}"));
        let result = async {
            let daemon = Daemon::start(binary, &dir).await?;
            let figures = tokio::time::timeout(CASE_TIMEOUT, body(&daemon, &dir, scale)).await;
            let figures = figures.map_err(|_| anyhow::anyhow!("not done within {CASE_TIMEOUT:?}"));
            daemon.stop().await?;
            figures?
        };
        let outcome = match result.await {
            Ok(figures) => Outcome { case, failure: None, figures },
            Err(error) => Outcome { case, failure: Some(format!("{error:#}")), figures: String::new() },
        };
        outcomes.push(outcome);
    }
    outcomes
}

/// A case: the daemon, a directory of its own, the scale; its figures as one line.
type CaseFn = for<'a> fn(
    &'a Daemon,
    &'a Path,
    Scale,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String>> + 'a>>;

/// What the daemon holds now: descriptors, threads, children and resident memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holdings {
    pub fds: usize,
    pub threads: u64,
    pub children: usize,
    pub rss_kib: u64,
}

impl Holdings {
    /// Reads them from `/proc`.
    pub fn of(daemon: &Daemon) -> Result<Holdings> {
        let pid = daemon.pid();
        let status = system::status(pid)?;
        Ok(Holdings {
            fds: system::open_fds(pid)?,
            threads: status.threads,
            children: system::children(pid).len(),
            rss_kib: status.rss_kib,
        })
    }
}

impl std::fmt::Display for Holdings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} fds, {} threads, {} children, {} KiB", self.fds, self.threads, self.children, self.rss_kib)
    }
}

/// The `q`th quantile (0..=1) of `values` (sorted here), in the values' unit; 0 for none.
pub fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q).round() as usize]
}

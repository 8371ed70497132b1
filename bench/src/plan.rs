//! What a run measures and with what: the sizes and repetitions of a full or a quick run (`Plan`), and what
//! every case shares (`Context`): the daemon binary, the work directory, the generated files and whether tmux
//! is there.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::data::{self, SEED};

/// Sizes and repetitions of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Plan {
    /// Whether this is the quick smoke run.
    pub quick: bool,
    /// Repetitions of every case, each running the figure and its baselines in turn.
    pub repetitions: usize,
    /// Bytes each ingest and fan-out run prints (one terminal, 80x24).
    pub ingest_bytes: u64,
    /// Observer counts of the fan-out case (the first is the ingest case's one observer).
    pub observers: Vec<usize>,
    /// Echo round trips per repetition.
    pub echo_samples: usize,
    /// Terminals printing at full speed during the loaded echo measurement.
    pub echo_load_terminals: usize,
    /// Terminal counts of the scale case.
    pub scale_terminals: Vec<usize>,
    /// Bytes each terminal prints in the scale case.
    pub scale_bytes: u64,
    /// Repetitions of the scale case (its largest run moves 256 x 4 MiB through ours and through tmux).
    pub scale_repetitions: usize,
    /// Idle `sh` terminals whose memory and threads are measured.
    pub idle_terminals: usize,
    /// Bytes through one terminal before its memory is measured.
    pub memory_bytes: u64,
    /// Bytes through a pipe process into its output file.
    pub pipe_bytes: u64,
    /// Lines the child writes while `get` is timed.
    pub pipe_lines: u64,
    /// History lines behind `read_rows`, `snapshot` and `resize`.
    pub history_lines: u64,
    /// Samples of each cheap request (`ping`, `get`, `read_rows` of 50) per repetition.
    pub request_samples: usize,
    /// Samples of each costly request (`read_rows` of all, `snapshot`, `resize`) per repetition.
    pub heavy_samples: usize,
    /// Daemon start-ups timed per repetition.
    pub startups: usize,
    /// The bound of every wait for a run to finish, in seconds.
    pub timeout_s: u64,
    /// Busy terminal counts of the upgrade case (absent from results written before it existed).
    #[serde(default)]
    pub upgrade_terminals: Vec<usize>,
    /// In-place upgrades per terminal count and repetition of the upgrade case.
    #[serde(default)]
    pub upgrades: usize,
    /// In-place upgrades per repetition during which the echo of a terminal is sampled.
    #[serde(default)]
    pub upgrade_echoes: usize,
    /// Terminal counts of the memory chart: the server's RSS with that many idle, full, and full then quiet
    /// terminals (issue 31).
    #[serde(default)]
    pub memory_terminals: Vec<usize>,
    /// Terminals printing at full speed while the daemon's peak RSS is watched (issue 31's goal 5).
    #[serde(default)]
    pub busy_terminals: usize,
    /// How long they print, in seconds.
    #[serde(default)]
    pub busy_seconds: u64,
    /// Idle `sh` terminals of the many case (absent from results written before it existed).
    #[serde(default)]
    pub many_terminals: usize,
    /// Lines of history the web case's terminal holds when a page (or attach) restores it (issue 32).
    #[serde(default)]
    pub web_history_lines: u64,
    /// Bytes of the web case's `cat`.
    #[serde(default)]
    pub web_cat_bytes: u64,
    /// Page loads (and attach starts) per repetition of the web case.
    #[serde(default)]
    pub web_restores: usize,
    /// `list` samples (whole and paged) of the many case.
    #[serde(default)]
    pub many_lists: usize,
    /// Idle terminals of the many case woken by a keystroke.
    #[serde(default)]
    pub many_wakes: usize,
}

impl Plan {
    /// The full run: the sizes, three repetitions (two of the scale case), about ten minutes on two
    /// cores (the upgrade case about two and a half of them, the web case with its browser about two).
    pub(crate) fn full() -> Plan {
        Plan {
            quick: false,
            repetitions: 3,
            ingest_bytes: 64 << 20,
            observers: vec![1, 4, 16],
            echo_samples: 200,
            echo_load_terminals: 16,
            scale_terminals: vec![1, 16, 64, 256],
            scale_bytes: 4 << 20,
            scale_repetitions: 2,
            idle_terminals: 64,
            memory_bytes: 64 << 20,
            pipe_bytes: 256 << 20,
            pipe_lines: 100_000,
            history_lines: 10_000,
            request_samples: 200,
            heavy_samples: 10,
            startups: 3,
            timeout_s: 300,
            upgrade_terminals: vec![1, 16, 100],
            upgrades: 5,
            upgrade_echoes: 10,
            memory_terminals: vec![1, 10, 50, 100],
            busy_terminals: 200,
            busy_seconds: 60,
            many_terminals: 1000,
            many_lists: 50,
            many_wakes: 50,
            web_history_lines: 10_000,
            web_cat_bytes: 16 << 20,
            web_restores: 3,
        }
    }

    /// The smoke run: tiny sizes, one repetition, few terminals; it proves the harness works, nothing more.
    pub(crate) fn quick() -> Plan {
        Plan {
            quick: true,
            repetitions: 1,
            // Long enough for the CPU accounting (10 ms clock ticks) to see each fan-out run.
            ingest_bytes: 4 << 20,
            observers: vec![1, 4, 16],
            echo_samples: 10,
            echo_load_terminals: 2,
            scale_terminals: vec![1, 4],
            scale_bytes: 64 << 10,
            scale_repetitions: 1,
            idle_terminals: 4,
            memory_bytes: 1 << 20,
            pipe_bytes: 1 << 20,
            pipe_lines: 2_000,
            history_lines: 300,
            request_samples: 10,
            heavy_samples: 2,
            startups: 1,
            timeout_s: 60,
            upgrade_terminals: vec![1, 4],
            upgrades: 1,
            upgrade_echoes: 2,
            memory_terminals: vec![1, 2],
            busy_terminals: 3,
            busy_seconds: 2,
            many_terminals: 8,
            many_lists: 3,
            many_wakes: 3,
            // The quick run measures attach alone: a browser run takes a minute or more (see the web case).
            web_history_lines: 300,
            web_cat_bytes: 256 << 10,
            web_restores: 1,
        }
    }

    /// The bound of every wait for a run to finish.
    pub(crate) fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_s)
    }
}

/// The generated inputs, written once per run.
#[derive(Debug, Clone)]
pub(crate) struct Files {
    /// Log text of `Plan::ingest_bytes`.
    pub ingest: PathBuf,
    /// Log text of `Plan::scale_bytes`.
    pub scale: PathBuf,
    /// Log text of `Plan::memory_bytes`.
    pub memory: PathBuf,
    /// `Plan::memory_bytes` of plain log text (no colour, ASCII: `data::plain_log_text`).
    pub plain: PathBuf,
    /// `Plan::pipe_bytes` of log text (the ingest text repeated).
    pub pipe: PathBuf,
    /// Exactly `Plan::history_lines` lines.
    pub history: PathBuf,
}

/// What every case gets.
#[derive(Debug)]
pub(crate) struct Context {
    /// Sizes and repetitions.
    pub plan: Plan,
    /// The daemon binary under test.
    pub daemon: PathBuf,
    /// A scratch directory removed after the run.
    pub work: PathBuf,
    /// `tmux -V`, or `None` when tmux is missing.
    pub tmux: Option<String>,
    /// The generated inputs.
    pub files: Files,
    /// Numbers fresh directory names.
    counter: AtomicUsize,
}

impl Context {
    /// Generates the inputs into `work`.
    pub(crate) fn new(plan: Plan, daemon: PathBuf, work: &Path, tmux: Option<String>) -> Result<Context> {
        let ingest = data::log_text(SEED, usize::try_from(plan.ingest_bytes)?);
        let files = Files {
            ingest: data::write_file(work, "ingest.log", &ingest)?,
            scale: data::write_file(work, "scale.log", &data::log_text(SEED ^ 1, usize::try_from(plan.scale_bytes)?))?,
            memory: data::write_file(
                work,
                "memory.log",
                &data::log_text(SEED ^ 2, usize::try_from(plan.memory_bytes)?),
            )?,
            plain: data::write_file(
                work,
                "plain.log",
                &data::plain_log_text(SEED ^ 5, usize::try_from(plan.memory_bytes)?),
            )?,
            pipe: data::write_repeated(work, "pipe.log", &ingest, plan.pipe_bytes)?,
            history: data::write_file(work, "history.log", &data::log_lines(SEED ^ 3, plan.history_lines))?,
        };
        Ok(Context { plan, daemon, work: work.to_owned(), tmux, files, counter: AtomicUsize::new(0) })
    }

    /// A fresh, empty directory under the work directory, named after `what`.
    pub(crate) fn fresh_dir(&self, what: &str) -> Result<PathBuf> {
        let dir = self.work.join(format!("{what}-{}", self.counter.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }
}

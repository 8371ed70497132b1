//! `opencode-pty-bench`: the benchmark harness of issue 14. It generates seeded data, runs every case against a
//! real daemon binary through its socket with the Rust client (and against tmux and the limits), prints
//! medians, extremes and ratios, and writes `results.json`, `BENCHMARKS.md` and the SVG charts. `--quick` is a
//! smoke run with tiny sizes into a temporary directory (or `--out DIR`) that never touches committed results.

mod cases;
mod charts;
mod cpu;
mod data;
mod fifo;
mod plan;
mod pty;
mod relay;
mod report;
mod stats;
mod tmux;
mod workload;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use clap::{Parser, Subcommand};
// The kit the hardening runs share, under the names the cases use (`crate::daemon`, `crate::system`).
use opencode_pty_bench::{daemon, system};

use crate::plan::{Context, Plan};
use crate::report::Results;

/// Benchmarks an opencode-pty daemon against tmux and the limits (issue 14).
#[derive(Debug, Parser)]
#[command(name = "opencode-pty-bench")]
struct Args {
    /// A smoke run: tiny sizes, one repetition, few terminals (it asserts nothing about speed).
    #[arg(long)]
    quick: bool,
    /// The daemon binary to measure (default: `opencode-pty` next to this executable).
    #[arg(long, value_name = "PATH")]
    daemon: Option<PathBuf>,
    /// Where results.json, BENCHMARKS.md and charts/ go. Default: the repository (bench/results.json,
    /// BENCHMARKS.md, bench/charts/) for a full run; a new temporary directory for a quick or partial run.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run only the case of this name (ingest, echo, scale, memory, memory-terminals, memory-busy, many, pipes,
    /// requests, commands, upgrade, quiet, web), or if none has it, the cases whose name contains it (`memory-`).
    #[arg(long, value_name = "NAME")]
    case: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

/// Commands besides a run.
#[derive(Debug, Subcommand)]
enum Command {
    /// Renders BENCHMARKS.md and the charts again from an existing results.json (the repository's, or the one
    /// in `--out DIR`), without measuring anything.
    Report,
    /// Prints the KiB this process grows by while libghostty-vt alone parses FILE.
    #[command(name = "vt-memory", hide = true)]
    VtMemory {
        /// The file to parse.
        file: PathBuf,
    },
}

/// Where a run writes.
#[derive(Debug)]
struct Output {
    /// results.json.
    results: PathBuf,
    /// BENCHMARKS.md.
    markdown: PathBuf,
    /// The folder of the charts.
    charts: PathBuf,
    /// The charts' folder as linked from the markdown.
    charts_link: &'static str,
    /// results.json as linked from the markdown.
    results_link: &'static str,
    /// An earlier run to compare with, when there is one (`bench/before.json`, for the repository's report).
    before: Option<PathBuf>,
}

fn main() -> Result<()> {
    let args = Args::parse();
    match &args.command {
        Some(Command::VtMemory { file }) => return cases::vt_memory_command(file),
        Some(Command::Report) => {
            let output = output(&args)?;
            let text = std::fs::read_to_string(&output.results)
                .with_context(|| format!("reading {}", output.results.display()))?;
            write(&output, &serde_json::from_str(&text)?)?;
            println!("wrote {} and {}", output.markdown.display(), output.charts.display());
            return Ok(());
        }
        None => {}
    }
    let workers = std::thread::available_parallelism().map_or(2, usize::from).max(2);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build()?;
    runtime.block_on(run(args))
}

/// Where this invocation writes: `--out DIR`, else a new temporary directory for a quick or partial run, else
/// the repository.
fn output(args: &Args) -> Result<Output> {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("the repository")?.to_owned();
    Ok(match &args.out {
        Some(dir) => in_dir(dir)?,
        None if args.quick || args.case.is_some() => {
            in_dir(&tempfile::Builder::new().prefix("opencode-pty-bench-").tempdir()?.keep())?
        }
        None => Output {
            results: repository.join("bench/results.json"),
            markdown: repository.join("BENCHMARKS.md"),
            charts: repository.join("bench/charts"),
            charts_link: "bench/charts",
            results_link: "bench/results.json",
            before: Some(repository.join("bench/before.json")),
        },
    })
}

async fn run(args: Args) -> Result<()> {
    let output = output(&args)?;
    let daemon = match args.daemon {
        Some(path) => path,
        None => std::env::current_exe()?.parent().context("the executable's directory")?.join("opencode-pty"),
    };
    if !daemon.is_file() {
        bail!("no daemon binary at {} (build it: cargo build --release -p opencode-pty)", daemon.display());
    }
    let plan = if args.quick { Plan::quick() } else { Plan::full() };
    let work_parent = output.results.parent().context("the output folder")?;
    let work_parent = if args.quick || args.out.is_some() { work_parent.to_owned() } else { std::env::temp_dir() };
    let work = tempfile::Builder::new().prefix("work-").tempdir_in(&work_parent)?;
    let tmux = tmux::version();
    let machine = system::Machine::describe(tmux.as_deref());
    let date = system::run(std::process::Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]), plan.timeout())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default();
    println!(
        "opencode-pty-bench: {} run of {} on {} ({} cores), {}",
        if plan.quick { "quick" } else { "full" },
        daemon.display(),
        machine.cpu,
        machine.cores,
        machine.tmux
    );
    let started = Instant::now();
    let ctx = Context::new(plan.clone(), daemon.clone(), work.path(), tmux)?;
    let mut failed = false;
    let tables = cases::run_all(&ctx, args.case.as_deref(), &mut failed).await;
    drop(ctx);
    work.close().context("removing the work directory")?;
    let results = Results {
        date,
        seconds: started.elapsed().as_secs_f64(),
        daemon: daemon.display().to_string(),
        machine,
        plan,
        tables,
    };
    write(&output, &results)?;
    println!("wrote {}, {} and {}", output.results.display(), output.markdown.display(), output.charts.display());
    if failed {
        bail!("a case failed (see above)");
    }
    Ok(())
}

/// Everything in `dir`.
fn in_dir(dir: &Path) -> Result<Output> {
    std::fs::create_dir_all(dir)?;
    Ok(Output {
        results: dir.join("results.json"),
        markdown: dir.join("BENCHMARKS.md"),
        charts: dir.join("charts"),
        charts_link: "charts",
        results_link: "results.json",
        before: None,
    })
}

/// Writes results.json, the charts and BENCHMARKS.md.
fn write(output: &Output, results: &Results) -> Result<()> {
    std::fs::create_dir_all(&output.charts)?;
    std::fs::write(&output.results, serde_json::to_string_pretty(results)? + "\n")?;
    let charts = [
        ("Throughput against observers", "observers.svg", charts::observers(results)),
        ("Aggregate throughput against terminals", "terminals.svg", charts::terminals(results)),
        ("Server memory against terminals", "memory.svg", charts::memory(results)),
    ];
    let mut links = Vec::new();
    for (title, file, svg) in &charts {
        std::fs::write(output.charts.join(file), svg)?;
        links.push((*title, format!("{}/{file}", output.charts_link)));
    }
    let links: Vec<(&str, &str)> = links.iter().map(|(title, link)| (*title, link.as_str())).collect();
    let before = match &output.before {
        Some(path) if path.is_file() => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            Some(serde_json::from_str::<report::Before>(&text).with_context(|| format!("parsing {}", path.display()))?)
        }
        _ => None,
    };
    std::fs::write(&output.markdown, report::markdown(results, output.results_link, &links, before.as_ref()))?;
    Ok(())
}

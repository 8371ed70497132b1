//! `opencode-pty-hardening`: `seed DIR` writes the fuzz targets' seed inputs for `cargo fuzz` (from the
//! repository's `schema/`); `load [--quick]` runs the load cases against a real daemon and prints a table of
//! outcomes and figures (failing when any case fails); `soak [MINUTES]` runs the soak and charts it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use opencode_pty_hardening::load::{self, Scale};
use opencode_pty_hardening::seeds::{TARGETS, seeds};

#[derive(Debug, Parser)]
#[command(name = "opencode-pty-hardening")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write every fuzz target's seeds into DIR/<target>/.
    Seed { dir: PathBuf },
    /// Run the load cases (issue 16) against a daemon.
    Load {
        /// The short version (the test command's): a few terminals, fewer cycles.
        #[arg(long)]
        quick: bool,
        /// The daemon binary (default: `opencode-pty` next to this executable).
        #[arg(long, value_name = "PATH")]
        daemon: Option<PathBuf>,
        /// Where the daemons' runtime directories go (default: a new temporary directory).
        #[arg(long, value_name = "DIR")]
        work: Option<PathBuf>,
        /// Only the cases whose name contains TEXT.
        #[arg(long, value_name = "TEXT")]
        only: Option<String>,
    },
    /// Run the soak for MINUTES (default 60); samples go to DIR (default: the current directory).
    Soak {
        #[arg(default_value_t = 60)]
        minutes: u64,
        #[arg(long, value_name = "PATH")]
        daemon: Option<PathBuf>,
        #[arg(long, value_name = "DIR", default_value = ".")]
        out: PathBuf,
    },
}

fn main() -> Result<()> {
    match Args::parse().command {
        Command::Seed { dir } => seed(&dir),
        Command::Load { quick, daemon, work, only } => {
            let binary = daemon_binary(daemon)?;
            opencode_pty_hardening::raise_descriptor_limit();
            let temporary = tempfile::tempdir()?;
            let work = work.unwrap_or_else(|| temporary.path().to_owned());
            let scale = if quick { Scale::quick() } else { Scale::full() };
            let outcomes = runtime()?.block_on(load::run_all(&binary, &work, scale, only.as_deref()));
            let mut failed = 0;
            for outcome in &outcomes {
                match &outcome.failure {
                    None => println!("pass  {}: {}", outcome.case, outcome.figures),
                    Some(why) => {
                        failed += 1;
                        println!("FAIL  {}: {why}", outcome.case);
                    }
                }
            }
            if failed > 0 {
                bail!("{failed} of {} load cases failed", outcomes.len());
            }
            Ok(())
        }
        Command::Soak { minutes, daemon, out } => {
            let binary = daemon_binary(daemon)?;
            let work = tempfile::tempdir()?;
            let summary =
                runtime()?.block_on(opencode_pty_hardening::soak::soak(&binary, work.path(), &out, minutes))?;
            println!("soak passed: {summary}; samples in {}", out.join("soak.csv").display());
            Ok(())
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

/// `given`, or the daemon next to this executable.
fn daemon_binary(given: Option<PathBuf>) -> Result<PathBuf> {
    let binary = match given {
        Some(path) => path,
        None => std::env::current_exe()?.parent().context("no directory")?.join("opencode-pty"),
    };
    if !binary.is_file() {
        bail!("no daemon binary at {} (build it: cargo build -p opencode-pty)", binary.display());
    }
    Ok(binary)
}

fn seed(dir: &Path) -> Result<()> {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema");
    for target in TARGETS {
        let out = dir.join(target);
        std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
        for (n, seed) in seeds(target, &schema).iter().enumerate() {
            let path = out.join(format!("seed-{n:03}"));
            std::fs::write(&path, seed).with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}

//! `opencode-pty-conformance`: replays recorded frame transcripts against any daemon binary of protocol 8 and
//! reports each one that differs (`--daemon PATH [FILTER]`), and records new transcripts from scripts
//! (`record`). It depends on `opencode-pty-protocol`, and on the Rust client only for its launcher: a daemon is
//! a black box behind its socket.

mod conn;
mod daemon;
mod failure;
mod matching;
mod record;
mod runner;
mod schema;
mod session;
mod transcript;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

/// Where the transcripts of this source tree live, the default for `--transcripts`.
const DEFAULT_TRANSCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/transcripts");
/// Where the recorder's scripts live, the default for `record --scripts`.
const DEFAULT_SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts");
/// How long a started daemon has to write its registration, by default.
const DEFAULT_START_TIMEOUT_MS: u64 = 10_000;
/// Transcripts replayed at once, by default.
const DEFAULT_JOBS: usize = 4;

#[derive(Debug, Parser)]
#[command(version, about = "Replays recorded frame transcripts against an opencode-pty daemon (protocol 8)")]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The daemon binary to test; it is started as `PATH daemon --name conformance --runtime-dir <temp>`.
    #[arg(long, conflicts_with = "registration", required_unless_present = "registration")]
    daemon: Option<PathBuf>,
    /// A program to start the daemon through: it gets the daemon's whole command line and must `exec` it,
    /// keeping its pid (an emulator: `packaging/emulate-aarch64.sh` runs an aarch64 daemon under qemu-user).
    #[arg(long, requires = "daemon")]
    exec_through: Option<PathBuf>,
    /// The registration file of a daemon someone else started and owns; only shareable transcripts run.
    #[arg(long)]
    registration: Option<PathBuf>,
    /// Run only the transcripts whose `<area>/<name>` contains this text.
    filter: Option<String>,
    /// The directory of transcripts (one folder per area).
    #[arg(long, default_value = DEFAULT_TRANSCRIPTS)]
    transcripts: PathBuf,
    /// How many transcripts to replay at once (at most 64).
    #[arg(long, default_value_t = DEFAULT_JOBS)]
    jobs: usize,
    /// How long a started daemon has to write its registration, in milliseconds.
    #[arg(long, default_value_t = DEFAULT_START_TIMEOUT_MS)]
    start_timeout_ms: u64,
    /// Compare every error message byte for byte as recorded (our daemon's wording), not only the texts the
    /// protocol fixes (those a transcript marks `fixed_message`); without it, other messages match any text.
    #[arg(long)]
    strict_messages: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run scripts against fresh daemons and write the transcripts they produce.
    Record {
        /// The daemon binary to record against.
        #[arg(long)]
        daemon: PathBuf,
        /// A program to start the daemon through, as for a run.
        #[arg(long)]
        exec_through: Option<PathBuf>,
        /// The directory of scripts (one folder per area).
        #[arg(long, default_value = DEFAULT_SCRIPTS)]
        scripts: PathBuf,
        /// Where to write the transcripts (the same relative paths).
        #[arg(long, default_value = DEFAULT_TRANSCRIPTS)]
        out: PathBuf,
        /// Record only the scripts whose `<area>/<name>` contains this text.
        filter: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let start_timeout = Duration::from_millis(cli.run.start_timeout_ms);
    let result = match cli.command {
        Some(Command::Record { daemon, exec_through, scripts, out, filter }) => {
            let binary = daemon::Binary { path: daemon, exec_through };
            record::record_all(&binary, &scripts, &out, filter.as_deref(), start_timeout).map(|()| true)
        }
        None => {
            let target = match (cli.run.daemon, cli.run.registration) {
                (Some(path), _) => runner::Target::Binary(daemon::Binary { path, exec_through: cli.run.exec_through }),
                (None, Some(file)) => runner::Target::Registration(file),
                (None, None) => unreachable!("clap requires one of --daemon and --registration"),
            };
            let options = runner::Options {
                target,
                transcripts: cli.run.transcripts,
                filter: cli.run.filter,
                jobs: cli.run.jobs,
                start_timeout,
                strict_messages: cli.run.strict_messages,
            };
            runner::run(&options)
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("opencode-pty-conformance: {error:#}");
            ExitCode::from(2)
        }
    }
}

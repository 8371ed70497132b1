//! The command line: argument parsing (clap) and one function per command. `daemon` runs the service on this
//! thread; the others are clients of a daemon and run on a small tokio runtime.

mod attach;
mod escape;
mod generate;
mod observe;
mod play;
mod prompt;
mod run;
mod screen;
mod upgrade;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use opencode_pty::TerminalConfig;
use opencode_pty::{DaemonOptions, run_daemon};
use opencode_pty::{default_root, validate_name};
use opencode_pty_protocol::PROTOCOL_VERSION;

/// The line printed by `--version`, `-V` and `version`.
fn version_line() -> String {
    format!("opencode-pty {} (protocol {PROTOCOL_VERSION})", env!("CARGO_PKG_VERSION"))
}

/// opencode-pty: a persistent PTY and process daemon for OpenCode.
#[derive(Debug, Parser)]
#[command(name = "opencode-pty", disable_version_flag = true, override_usage = "opencode-pty <COMMAND> [OPTIONS]")]
pub(crate) struct Cli {
    /// Print the version and protocol number.
    #[arg(short = 'V', long = "version")]
    version: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

/// Where the daemon's runtime directory is: `DIR/NAME`.
#[derive(Debug, Clone, Args)]
pub(crate) struct Location {
    /// The runtime directory's name: one path component of letters, digits, '.', '_' or '-'.
    #[arg(long)]
    name: String,
    /// The parent of runtime directories [default: ${XDG_STATE_HOME:-~/.local/state}/opencode/pty].
    #[arg(long, value_name = "DIR")]
    runtime_dir: Option<PathBuf>,
}

impl Location {
    /// The parent directory, after checking the name.
    fn root(&self) -> anyhow::Result<PathBuf> {
        validate_name(&self.name)?;
        Ok(self.runtime_dir.clone().unwrap_or_else(default_root))
    }

    /// The runtime directory itself.
    fn dir(&self) -> anyhow::Result<PathBuf> {
        Ok(self.root()?.join(&self.name))
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon in the foreground; it needs an owner within 5 seconds.
    Daemon {
        #[command(flatten)]
        location: Location,
        /// Keep the daemon's environment variable NAME out of every PTY child (repeatable; a create_pty `env`
        /// may still set it). PTY children otherwise get the daemon's whole environment, secrets included.
        #[arg(long = "withhold-env", value_name = "NAME", value_parser = env_name)]
        withhold_env: Vec<String>,
        /// How long a terminal must stay quiet (no output, no read of its screen) before its history and replay
        /// ring are compressed in memory, in milliseconds; 0 never compresses. Reads answer the same either way.
        #[arg(long, value_name = "MS", default_value_t = opencode_pty::limits::COMPACT_AFTER.as_millis() as u64)]
        compress_after_ms: u64,
        /// History lines each terminal's emulator keeps unless its `create_pty` names `scrollback_lines`
        /// (0 to 100000).
        #[arg(long, value_name = "LINES", default_value_t = opencode_pty_protocol::DEFAULT_SCROLLBACK_LINES,
              value_parser = clap::value_parser!(u32).range(0..=i64::from(opencode_pty_protocol::MAX_SCROLLBACK_LINES)))]
        scrollback_lines: u32,
        /// Bytes of raw output each terminal keeps for replay unless its `create_pty` names `replay_bytes`
        /// (4096 to 67108864).
        #[arg(long, value_name = "BYTES", default_value_t = opencode_pty_protocol::DEFAULT_REPLAY_BYTES,
              value_parser = clap::value_parser!(u32).range(
                  i64::from(opencode_pty_protocol::MIN_REPLAY_BYTES)..=i64::from(opencode_pty_protocol::MAX_REPLAY_BYTES)))]
        replay_bytes: u32,
        /// How long handoff tickets last, in milliseconds (for tests of their expiry; the protocol says 120 s).
        #[arg(long, hide = true, default_value_t = opencode_pty_protocol::HANDOFF_TTL.as_millis() as u64)]
        handoff_ttl_ms: u64,
        /// How long a new connection may take to send its first request, in milliseconds (for tests of what that
        /// deadline must not cut).
        #[arg(long, hide = true, default_value_t = opencode_pty::limits::FIRST_REQUEST_TIMEOUT.as_millis() as u64)]
        first_request_timeout_ms: u64,
        /// How long a terminal's session has after its hangup before what is left of it is killed, in
        /// milliseconds, at most 60000 (for tests of the hangup's order on a loaded machine; the stop's watchdog
        /// grows by what it adds).
        #[arg(long, hide = true, default_value_t = opencode_pty::limits::HANGUP_GRACE.as_millis() as u64,
              value_parser = clap::value_parser!(u64).range(0..=60_000))]
        hangup_grace_ms: u64,
        /// The terminals' listing budget in bytes, at most the built-in 7 MiB (for tests that cross it without
        /// starting thousands of shells).
        #[arg(long, hide = true, default_value_t = opencode_pty::limits::MAX_PTY_INFO_BYTES as u64,
              value_parser = clap::value_parser!(u64).range(0..=opencode_pty::limits::MAX_PTY_INFO_BYTES as u64))]
        pty_listing_bytes: u64,
        /// A pause at the start of the stop, in milliseconds (for tests of the cleanup watchdog).
        #[arg(long, hide = true, default_value_t = 0)]
        stop_stall_ms: u64,
        /// Send the daemon SIGTERM just before an upgrade's execve, and wait until it took it (for tests of a
        /// signal in that window).
        #[arg(long, hide = true)]
        signal_at_upgrade_exec: bool,
        /// How long a finished connection thread waits for the next connection, in milliseconds (for tests of
        /// what that wait must not cut).
        #[arg(long, hide = true, default_value_t = opencode_pty::limits::IDLE_WORKER_LINGER.as_millis() as u64)]
        worker_linger_ms: u64,
        /// Where the usual socket directory `opencode-pty-<euid>` is made without `$XDG_RUNTIME_DIR` (for tests
        /// of a squatted one; the daemon uses /tmp).
        #[arg(long, hide = true, default_value = opencode_pty::limits::DEFAULT_SOCKET_TMP)]
        socket_tmp: PathBuf,
    },
    /// Start a new daemon, own it, and play with it interactively; leaving stops the daemon.
    Play {
        #[command(flatten)]
        location: Location,
    },
    /// Show the running daemon: pid, instance, socket and process counts. Without `--name`, list every daemon
    /// under the runtime directory: name, pid, processes, whether it has an owner.
    Status {
        /// The runtime directory's name; without it, every daemon is listed.
        #[arg(long)]
        name: Option<String>,
        /// The parent of runtime directories [default: ${XDG_STATE_HOME:-~/.local/state}/opencode/pty].
        #[arg(long, value_name = "DIR")]
        runtime_dir: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List the daemon's processes.
    List {
        #[command(flatten)]
        location: Location,
        /// Print the processes as a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Attach this terminal to a PTY process: its screen here, your keys to it, its size following this
    /// terminal's. Ctrl-\ twice detaches and leaves it running; when it exits, attach exits with its code.
    Attach {
        /// The process id.
        id: u64,
        /// Take control from another attachment that has it (otherwise attaching fails while one does).
        #[arg(long, conflicts_with = "observe")]
        takeover: bool,
        /// Only watch: no keys reach the process, and its size is left alone.
        #[arg(long)]
        observe: bool,
        #[command(flatten)]
        location: Location,
    },
    /// Run a command in a terminal started with shell integration, as if typed at its prompt: prints the
    /// command's output as text and exits with its exit code (124 when --timeout passes first; the command then
    /// goes on).
    Run {
        /// The terminal's process id.
        id: u64,
        /// Give up waiting after this many seconds [default: wait until the command ends].
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<u64>,
        #[command(flatten)]
        location: Location,
        /// The command line (its words joined by spaces).
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Copy a process's raw output (from the start) to stdout until it exits.
    Watch {
        /// The process id.
        id: u64,
        #[command(flatten)]
        location: Location,
    },
    /// Shut the daemon down (stopping every process) and wait until it is gone.
    Stop {
        #[command(flatten)]
        location: Location,
    },
    /// The daemon's guardian (started by the daemon itself): waits for end-of-file on stdin, then ends the
    /// process groups the record lists if the daemon `--instance` wrote it.
    #[command(hide = true)]
    Guard {
        /// The daemon's record of process groups.
        #[arg(long)]
        record: PathBuf,
        /// The daemon's instance id.
        #[arg(long)]
        instance: String,
    },
    /// What this build says to a daemon that would upgrade to it: one JSON line (version, protocol, the upgrade
    /// state formats it reads, its libghostty revision).
    #[command(hide = true, name = "upgrade-check")]
    UpgradeCheck,
    /// A daemon after an in-place upgrade (started by the daemon itself, through `execve`): takes the state it
    /// was passed, or goes back to the previous executable with it.
    #[command(hide = true)]
    Resume {
        /// The descriptor of the upgrade state's memory file.
        #[arg(long, value_name = "FD")]
        state_fd: i32,
        /// The descriptor of the previous executable, to go back to when this one cannot take the state.
        #[arg(long, value_name = "FD")]
        fallback_exe_fd: Option<i32>,
        /// Refuse any state (for tests of the fallback).
        #[arg(long)]
        refuse_state: bool,
        /// Refuse the state at the last step before committing to it, once the descriptors are adopted and
        /// the registration written (for tests of the fallback from there).
        #[arg(long)]
        fail_late: bool,
        /// Why the new image could not take the state (given by it to the previous executable, which resumes
        /// and tells the owner so).
        #[arg(long, value_name = "WHY")]
        refused_by_new_image: Option<String>,
        /// The daemon's own arguments (`daemon --name NAME ...`).
        #[arg(last = true, value_name = "DAEMON_ARGS")]
        daemon_args: Vec<std::ffi::OsString>,
    },
    /// Print the completion script for SHELL to stdout, to install as that shell's completions for opencode-pty.
    Completions {
        /// The shell: bash, zsh or fish.
        shell: generate::Shell,
    },
    /// Print the man page (roff) to stdout: opencode-pty(1), or COMMAND's own page, opencode-pty-COMMAND(1).
    /// `opencode-pty man | man -l -` reads it.
    Man {
        /// The command whose page to print (without it, the page of opencode-pty itself).
        #[arg(conflicts_with = "dir")]
        command: Option<String>,
        /// Write every page into DIR instead (opencode-pty.1 and opencode-pty-COMMAND.1), printing their paths.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Print the version and protocol number.
    Version {
        /// Also name the libghostty-vt library in use.
        #[arg(long)]
        verbose: bool,
    },
}

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if cli.version {
        println!("{}", version_line());
        return Ok(ExitCode::SUCCESS);
    }
    let Some(command) = cli.command else {
        use clap::CommandFactory;
        eprintln!("{}", Cli::command().render_help());
        return Ok(ExitCode::from(2));
    };
    match command {
        Command::Version { verbose } => {
            println!("{}", version_line());
            if verbose {
                println!(
                    "libghostty-vt {} (Ghostty {})",
                    opencode_pty_vt::library_version(),
                    opencode_pty_vt::ffi::GHOSTTY_REVISION
                );
            }
        }
        daemon @ Command::Daemon { .. } => run_daemon(daemon_options(daemon)?)?,
        Command::UpgradeCheck => upgrade::check()?,
        Command::Resume { state_fd, fallback_exe_fd, refuse_state, fail_late, refused_by_new_image, daemon_args } => {
            let args = opencode_pty::ResumeArgs {
                state_fd,
                fallback_exe_fd,
                refuse_state,
                refused_by_new_image,
                fail_late,
                daemon_args,
            };
            upgrade::resume(args)?
        }
        Command::Guard { record, instance } => opencode_pty::serve_guardian(&record, &instance)?,
        Command::Play { location } => {
            let runtime = client_runtime()?;
            let played = runtime.block_on(play::play(&location.root()?, &location.name));
            // Its stdin reader may still be blocked in a read nobody wants now: do not wait for a line.
            runtime.shutdown_background();
            return played;
        }
        Command::Status { name: Some(name), runtime_dir, json } => {
            let dir = Location { name, runtime_dir }.dir()?;
            client_runtime()?.block_on(observe::status(&dir, observe::Format::from_json_flag(json)))?
        }
        Command::Status { name: None, runtime_dir, json } => {
            let root = runtime_dir.unwrap_or_else(default_root);
            client_runtime()?.block_on(observe::status_all(&root, observe::Format::from_json_flag(json)))?
        }
        Command::List { location, json } => {
            client_runtime()?.block_on(observe::list(&location.dir()?, observe::Format::from_json_flag(json)))?
        }
        Command::Attach { id, takeover, observe, location } => {
            let mode = match (observe, takeover) {
                (true, _) => attach::Mode::Observe,
                (false, true) => attach::Mode::Control(opencode_pty_client::Takeover::Take),
                (false, false) => attach::Mode::Control(opencode_pty_client::Takeover::Refuse),
            };
            let runtime = client_runtime()?;
            let attached = runtime.block_on(attach::attach(&location.dir()?, id, mode));
            // Its keyboard reader may still be blocked in a read: do not wait for a key.
            runtime.shutdown_background();
            return attached;
        }
        Command::Watch { id, location } => client_runtime()?.block_on(observe::watch(&location.dir()?, id))?,
        Command::Run { id, timeout, location, command } => {
            let timeout = timeout.map(std::time::Duration::from_secs);
            return client_runtime()?.block_on(run::run(&location.dir()?, id, &command, timeout));
        }
        Command::Completions { shell } => generate::completions(shell, &mut std::io::stdout().lock())?,
        Command::Man { command, dir } => {
            generate::man(command.as_deref(), dir.as_deref(), &mut std::io::stdout().lock())?
        }
        Command::Stop { location } => client_runtime()?.block_on(observe::stop(&location.dir()?))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The daemon's options from its command (`daemon ...`); any other command is an error.
fn daemon_options(command: Command) -> anyhow::Result<DaemonOptions> {
    let Command::Daemon {
        location,
        withhold_env,
        compress_after_ms,
        scrollback_lines,
        replay_bytes,
        handoff_ttl_ms,
        first_request_timeout_ms,
        hangup_grace_ms,
        pty_listing_bytes,
        stop_stall_ms,
        signal_at_upgrade_exec,
        worker_linger_ms,
        socket_tmp,
    } = command
    else {
        anyhow::bail!("not the daemon command");
    };
    Ok(DaemonOptions {
        root: location.root()?,
        name: location.name.clone(),
        config: TerminalConfig {
            withheld_env: withhold_env.into(),
            hangup_grace: std::time::Duration::from_millis(hangup_grace_ms),
            scrollback_lines: scrollback_lines as usize,
            replay_bytes: replay_bytes as usize,
            compact_after: (compress_after_ms > 0).then(|| std::time::Duration::from_millis(compress_after_ms)),
            pty_listing_bytes: usize::try_from(pty_listing_bytes)?,
            ..TerminalConfig::default()
        },
        handoff_ttl: std::time::Duration::from_millis(handoff_ttl_ms),
        first_request_timeout: std::time::Duration::from_millis(first_request_timeout_ms),
        stop_stall: std::time::Duration::from_millis(stop_stall_ms),
        signal_at_exec: signal_at_upgrade_exec,
        worker_linger: std::time::Duration::from_millis(worker_linger_ms),
        socket_tmp,
    })
}

/// The runtime the client commands run on: one thread is plenty for one connection at a time.
fn client_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?)
}

/// A variable name for `--withhold-env`: not empty, without `=` or NUL.
fn env_name(name: &str) -> Result<String, String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return Err(format!("{name:?} is not an environment variable name"));
    }
    Ok(name.to_owned())
}

//! The hidden commands of an in-place upgrade: `upgrade-check` (what this build says of itself to a daemon that
//! would become it) and `resume` (the image an upgrade's `execve` starts).

use std::ffi::OsString;

use clap::Parser as _;
use opencode_pty::DaemonOptions;
use opencode_pty::ResumeArgs;

use super::{Cli, Command, daemon_options};

/// `upgrade-check`: prints this build's report as one JSON line.
pub(super) fn check() -> anyhow::Result<()> {
    println!("{}", serde_json::to_string(&opencode_pty::upgrade_check_report())?);
    Ok(())
}

/// `resume`: resumes the daemon from the state it was passed, or goes back to the previous executable.
pub(super) fn resume(args: ResumeArgs) -> anyhow::Result<()> {
    opencode_pty::resume_daemon(args, |daemon_args| parse_daemon_args(daemon_args).map_err(|e| format!("{e:#}")))?;
    Ok(())
}

/// The daemon's options from its arguments as typed after the program's name (`daemon --name NAME ...`).
fn parse_daemon_args(daemon_args: &[OsString]) -> anyhow::Result<DaemonOptions> {
    let argv = std::iter::once(OsString::from("opencode-pty")).chain(daemon_args.iter().cloned());
    let cli = Cli::try_parse_from(argv)?;
    match cli.command {
        Some(command @ Command::Daemon { .. }) => daemon_options(command),
        _ => anyhow::bail!("{daemon_args:?} is not the daemon command"),
    }
}

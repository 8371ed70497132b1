//! The `opencode-pty` binary: the daemon itself (`daemon`), the interactive playground (`play`), and commands
//! that observe or operate a running daemon (`status`, `list`, `watch`, `stop`) without ever starting one.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

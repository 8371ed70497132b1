//! The `opencode-pty` binary: the daemon itself (`daemon`), the interactive playground (`play`), and commands
//! that observe or operate a running daemon (`status`, `list`, `watch`, `stop`) without ever starting one.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    init_logging();
    // Before any thread allocates: freed buffers of 128 KiB or more go back to the kernel (vt/src/allocator.rs),
    // so a quiet daemon's memory comes back down after a large replay or snapshot.
    if !opencode_pty_vt::return_freed_buffers() {
        tracing::warn!("the allocator refused a fixed mmap threshold: freed large buffers may stay resident");
    }
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(error) => {
            // The command's own answer to its user, not a log line.
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Sends `tracing` events to stderr, filtered by `RUST_LOG` (default `info`).
fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_target(false)
        .init();
}

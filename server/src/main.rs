//! The `opencode-pty` binary: a thin command line over the daemon. Today it only reports its version; the
//! daemon, the playground and the other commands arrive with later issues.

use std::process::ExitCode;

use opencode_pty_protocol::PROTOCOL_VERSION;

/// The line printed by `--version`, `-V` and `version`.
fn version_line() -> String {
    format!("opencode-pty {} (protocol {PROTOCOL_VERSION})", env!("CARGO_PKG_VERSION"))
}

const USAGE: &str = "usage: opencode-pty <command>

commands:
  version, --version, -V   print the version and protocol number
  version --verbose        also print the libghostty-vt version in use
  help, --help, -h         print this help";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("version" | "--version" | "-V") if args.len() == 1 => {
            println!("{}", version_line());
            ExitCode::SUCCESS
        }
        Some("version") if args.get(1).map(String::as_str) == Some("--verbose") && args.len() == 2 => {
            println!("{}", version_line());
            println!(
                "libghostty-vt {} (Ghostty {})",
                opencode_pty_vt::library_version(),
                opencode_pty_vt::ffi::GHOSTTY_REVISION
            );
            ExitCode::SUCCESS
        }
        Some("help" | "--help" | "-h") if args.len() == 1 => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

//! The `opencode-pty` binary's command line: version and help output, and usage errors.

use std::process::{Command, Output};
use std::sync::mpsc;
use std::time::Duration;

/// How long one command may take before the test fails (and kills it).
const TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the daemon binary with `args`, failing the test if it does not finish within [`TIMEOUT`].
fn run(args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_opencode-pty"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn opencode-pty");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(TIMEOUT) {
        Ok(output) => output.expect("wait for opencode-pty"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("opencode-pty {args:?} did not finish within {TIMEOUT:?}");
        }
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8")
}

#[test]
fn version_names_the_protocol() {
    let expected = format!("opencode-pty {} (protocol 8)\n", env!("CARGO_PKG_VERSION"));
    for flag in ["--version", "-V", "version"] {
        let output = run(&[flag]);
        assert!(output.status.success(), "{flag}");
        assert_eq!(stdout(&output), expected, "{flag}");
    }
}

#[test]
fn verbose_version_loads_libghostty() {
    // This only prints once the binary found libghostty-vt through its rpath.
    let output = run(&["version", "--verbose"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = stdout(&output);
    assert!(text.contains("(protocol 8)"), "{text}");
    assert!(text.contains("libghostty-vt 0.1.0-dev (Ghostty 6467b1dab)"), "{text}");
}

#[test]
fn unknown_commands_print_usage_and_fail() {
    let output = run(&["frobnicate"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).to_lowercase().contains("usage: opencode-pty"));
    let help = run(&["--help"]);
    assert!(help.status.success());
    assert!(stdout(&help).to_lowercase().contains("usage: opencode-pty"));
}

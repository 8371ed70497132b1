//! Helpers for the runner's own tests: run `opencode-pty-conformance` (or another command) with a bounded wait,
//! find the daemon binary of this workspace, and write transcripts and fake daemons into a temporary directory.

#![allow(dead_code)] // Each test binary uses a different subset.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest one run of the runner may take in these tests (the whole suite takes about 17 s).
pub(crate) const RUN_LIMIT: Duration = Duration::from_secs(180);

/// What a run of the runner printed and how it exited.
#[derive(Debug)]
pub(crate) struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the runner with `args` and `envs`, killing it if it takes longer than [`RUN_LIMIT`].
pub(crate) fn run(args: &[&str], envs: &[(&str, &str)]) -> Run {
    let mut runner = Command::new(env!("CARGO_BIN_EXE_opencode-pty-conformance"));
    runner.args(args).envs(envs.iter().copied());
    run_command(runner)
}

/// Runs `command` with no input, killing it if it takes longer than [`RUN_LIMIT`].
pub(crate) fn run_command(mut command: Command) -> Run {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {command:?}: {e}"));
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + RUN_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not finish within {RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run { code: status.code(), stdout: out.join().expect("stdout"), stderr: err.join().expect("stderr") }
}

/// The `opencode-pty` binary built next to this test.
pub(crate) fn daemon_binary() -> PathBuf {
    opencode_pty_testkit::daemon_binary()
}

/// The transcripts of this crate.
pub(crate) fn transcripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("transcripts")
}

/// Writes `lines` as `<dir>/<area>/<name>.jsonl`.
pub(crate) fn write_transcript(dir: &Path, area_name: &str, lines: &[serde_json::Value]) {
    let path = dir.join(format!("{area_name}.jsonl"));
    std::fs::create_dir_all(path.parent().expect("an area")).expect("mkdir");
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(path, text).expect("write transcript");
}

/// Writes an executable shell script.
pub(crate) fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Whether a process exists (zombies included).
pub(crate) fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Reads a pid a fake daemon wrote.
pub(crate) fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path).expect("pid file").trim().parse().expect("a pid")
}

//! The load cases' short version runs in the test command: every case passes against the debug daemon of
//! this build, within a bound, and nothing it started is left running.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the quick load run may take (well under a minute on two busy cores, with the debug daemon).
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// How long its processes may take to disappear after it ended.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| {
            let text = String::from_utf8_lossy(&std::fs::read(entry.path().join("cmdline")).ok()?).replace('\0', " ");
            text.contains(needle).then(|| format!("{}: {text}", entry.file_name().to_string_lossy()))
        })
        .collect()
}

#[test]
fn every_load_case_passes_in_its_short_version_and_leaves_nothing_behind() {
    let harness = Path::new(env!("CARGO_BIN_EXE_opencode-pty-hardening"));
    let daemon = harness.parent().expect("target/<profile>").join("opencode-pty");
    if !daemon.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo).args(["build", "-p", "opencode-pty"]).status().expect("cargo");
        assert!(status.success(), "building the daemon failed");
    }
    let work = tempfile::tempdir().expect("tempdir");
    let log_path = work.path().join("run.log");
    let log = std::fs::File::create(&log_path).expect("log");
    let mut child = Command::new(harness)
        .args(["load", "--quick", "--daemon"])
        .arg(&daemon)
        .arg("--work")
        .arg(work.path())
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .expect("start the harness");
    let deadline = Instant::now() + RUN_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the quick load run took over {RUN_TIMEOUT:?}:\n{}",
                std::fs::read_to_string(&log_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let report = std::fs::read_to_string(&log_path).unwrap_or_default();
    assert!(status.success(), "a load case failed:\n{report}");
    assert_eq!(report.lines().filter(|line| line.starts_with("pass  ")).count(), 7, "{report}");
    let needle = work.path().display().to_string();
    let deadline = Instant::now() + CLEANUP_TIMEOUT;
    while !processes_mentioning(&needle).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(processes_mentioning(&needle), Vec::<String>::new(), "left running");
}

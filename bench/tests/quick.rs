//! The harness cannot rot: `cargo test` runs it in quick mode (tiny sizes, one repetition) against the debug
//! daemon of this build (`target/debug/opencode-pty`, built first when missing), within a bound, and checks
//! that every case produced numbers in `results.json` and that nothing it started is left running. It asserts
//! nothing about speed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long the quick run may take (about a minute at most with the debug daemon on two busy cores).
const RUN_TIMEOUT: Duration = Duration::from_secs(240);

/// How long building the daemon may take when it is missing.
const BUILD_TIMEOUT: Duration = Duration::from_secs(900);

/// How long the run's processes may take to disappear after it ended (a daemon's guardian ends its children).
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a running child is checked.
const POLL: Duration = Duration::from_millis(50);

/// Every table a complete run writes.
const TABLES: [&str; 15] = [
    "ingest",
    "fanout",
    "fanout_cpu",
    "echo",
    "scale",
    "memory",
    "memory_terminals",
    "memory_busy",
    "many",
    "pipes",
    "requests",
    "upgrade",
    "upgrade_echo",
    "quiet",
    "web",
];

/// A child killed when dropped unless it has exited.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Runs `command` to its end within `limit`; its exit code.
fn run(command: &mut Command, limit: Duration) -> Option<i32> {
    let mut child = KillOnDrop(command.spawn().expect("start"));
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.0.try_wait().expect("wait") {
            return status.code();
        }
        assert!(Instant::now() < deadline, "{command:?} did not finish within {limit:?}; it was killed");
        std::thread::sleep(POLL);
    }
}

/// The debug daemon next to the harness binary, built when missing (`cargo test -p opencode-pty-bench` alone
/// does not build another package's binary; `cargo test --workspace` does).
fn daemon_binary(harness: &Path) -> PathBuf {
    let binary = harness.parent().expect("target/<profile>").join("opencode-pty");
    if !binary.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let code = run(Command::new(cargo).args(["build", "-p", "opencode-pty"]), BUILD_TIMEOUT);
        assert_eq!(code, Some(0), "building the daemon failed");
    }
    assert!(binary.is_file(), "no daemon at {}", binary.display());
    binary
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) {
            found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[test]
fn a_quick_run_measures_every_case_and_leaves_nothing_behind() {
    let harness = Path::new(env!("CARGO_BIN_EXE_opencode-pty-bench"));
    let daemon = daemon_binary(harness);
    let out = tempfile::tempdir().expect("tempdir");
    // The report goes to a file, shown when the run fails.
    let log_path = out.path().join("run.log");
    let log = std::fs::File::create(&log_path).expect("log");
    let code = run(
        Command::new(harness)
            .arg("--quick")
            .arg("--daemon")
            .arg(&daemon)
            .arg("--out")
            .arg(out.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log),
        RUN_TIMEOUT,
    );
    let report = std::fs::read_to_string(&log_path).unwrap_or_default();
    assert_eq!(code, Some(0), "the quick run failed:\n{report}");

    let text = std::fs::read_to_string(out.path().join("results.json")).expect("results.json");
    let results: Value = serde_json::from_str(&text).expect("results.json is JSON");
    assert_eq!(results["plan"]["quick"], true);
    let tables = results["tables"].as_array().expect("tables");
    for case in TABLES {
        let table = tables.iter().find(|table| table["case"] == case).unwrap_or_else(|| panic!("no table {case}"));
        let rows = table["rows"].as_array().expect("rows");
        assert!(!rows.is_empty(), "{case} has no rows");
        for row in rows {
            let note = row["note"].as_str().unwrap_or("");
            // The web case's browser rows are left out of the quick run (attach's are measured).
            if note == "tmux not installed" || note == "not in the quick run" {
                continue;
            }
            let median = &row["summary"]["median"];
            assert!(median.as_f64().is_some_and(f64::is_finite), "{case}/{}: no number ({note})", row["key"]);
            assert!(row["samples"].as_array().is_some_and(|samples| !samples.is_empty()));
        }
    }
    let markdown = std::fs::read_to_string(out.path().join("BENCHMARKS.md")).expect("BENCHMARKS.md");
    assert!(markdown.contains("## Machine") && markdown.contains("| figure |"));
    for chart in ["observers.svg", "terminals.svg", "memory.svg"] {
        let svg = std::fs::read_to_string(out.path().join("charts").join(chart)).expect("a chart");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{chart}");
    }

    // Every daemon, shell, cat and tmux server of the run names a path under `out` on its command line.
    let needle = out.path().display().to_string();
    let deadline = Instant::now() + CLEANUP_TIMEOUT;
    loop {
        let left = processes_mentioning(&needle);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "processes left behind:\n{}", left.join("\n"));
        std::thread::sleep(POLL);
    }
}

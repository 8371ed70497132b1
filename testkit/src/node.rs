//! Running Node.js projects from Rust tests: the Node and npm check, `npm ci` when `node_modules` is stale,
//! commands bounded in time and killed with their whole process group, and Node's test totals.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long `npm ci` may take (installing a few packages from a warm cache takes seconds).
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);

/// The oldest Node.js the tests run on: they use `node --test --test-concurrency`, which Node has had since
/// 20.10 (the packages declare the same in `engines`).
pub const MIN_NODE: (u32, u32) = (20, 10);

/// How often a running command is checked for its exit.
const POLL: Duration = Duration::from_millis(100);

/// A child in its own process group, killed with the whole group when dropped unless it has exited.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = Command::new("kill").arg("-KILL").arg(format!("-{}", self.0.id())).status();
            let _ = self.0.wait();
        }
    }
}

/// Runs `command` in its own process group for at most `limit`; panics with `what` on a timeout (the group is
/// killed then, so nothing it started is left behind).
pub fn run_bounded(mut command: Command, what: &str, limit: Duration) -> ExitStatus {
    command.process_group(0);
    let child = command.spawn().unwrap_or_else(|error| panic!("cannot start {what}: {error}"));
    let mut group = Group(child);
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = group.0.try_wait().unwrap_or_else(|error| panic!("waiting for {what}: {error}")) {
            return status;
        }
        assert!(Instant::now() < deadline, "{what} did not finish within {limit:?}; it was killed");
        std::thread::sleep(POLL);
    }
}

/// Runs `command` for at most `limit` with its stdout and stderr kept in one log: its status and that log.
pub fn run_logged(mut command: Command, what: &str, limit: Duration) -> (ExitStatus, String) {
    let log = tempfile::NamedTempFile::new().expect("a log file");
    command.stdout(log.reopen().expect("log")).stderr(log.reopen().expect("log"));
    let status = run_bounded(command, what, limit);
    (status, std::fs::read_to_string(log.path()).unwrap_or_default())
}

/// Whether `node_modules` is missing or older than the lockfile (npm records its install in
/// `node_modules/.package-lock.json`).
pub fn needs_install(dir: &Path) -> bool {
    let modified = |path: PathBuf| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    match (modified(dir.join("node_modules/.package-lock.json")), modified(dir.join("package-lock.json"))) {
        (Some(installed), Some(locked)) => installed < locked,
        _ => true,
    }
}

/// Runs `npm ci` in `dir` when its `node_modules` needs it, one install at a time within this process.
pub fn ensure_installed(dir: &Path) {
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    if needs_install(dir) {
        let mut install = Command::new("npm");
        install.args(["ci", "--no-audit", "--no-fund"]).current_dir(dir);
        let (status, output) = run_logged(install, "npm ci", INSTALL_TIMEOUT);
        assert!(status.success(), "`npm ci` in {} failed ({status}):\n{output}", dir.display());
    }
}

/// The major and minor version in `node --version` output such as `v20.10.0`.
pub fn parse_node_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().strip_prefix('v')?.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Panics, saying how to install them, unless `node` (at least [`MIN_NODE`]) and `npm` are on `PATH`; `who`
/// names the tests that need them.
pub fn require_node(who: &str) {
    let install = "install Node.js 20.10 or newer (it includes npm), e.g. from https://nodejs.org/ or your \
                   distribution's nodejs and npm packages";
    let node = Command::new("node").arg("--version").stderr(Stdio::null()).output();
    let version = match &node {
        Ok(output) if output.status.success() => String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        _ => panic!("{who} need `node` on PATH: {install}"),
    };
    assert!(
        parse_node_version(&version).is_some_and(|found| found >= MIN_NODE),
        "{who} need Node.js {}.{} or newer (for `node --test --test-concurrency`), but `node --version` says \
         {version:?}: {install}",
        MIN_NODE.0,
        MIN_NODE.1
    );
    let npm = Command::new("npm").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    assert!(npm.is_ok_and(|status| status.success()), "{who} need `npm` on PATH: {install}");
}

/// The totals at the end of Node's test runner output.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub tests: u64,
    pub pass: u64,
    pub fail: u64,
    pub skipped: u64,
}

/// Reads Node's closing totals: `# tests 12` lines (TAP, when the output is not a terminal) or `ℹ tests 12`
/// (the spec reporter); the last of each wins.
pub fn node_totals(output: &str) -> Totals {
    let mut totals = Totals::default();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("# ").or_else(|| line.strip_prefix("ℹ ")) else { continue };
        let mut words = rest.split_whitespace();
        let (Some(name), Some(Ok(count)), None) = (words.next(), words.next().map(str::parse::<u64>), words.next())
        else {
            continue;
        };
        match name {
            "tests" => totals.tests = count,
            "pass" => totals.pass = count,
            "fail" => totals.fail = count,
            "skipped" => totals.skipped = count,
            _ => {}
        }
    }
    totals
}

/// Runs `npm test` in `dir` with `envs`, for at most `limit`, and asserts it ran tests and all passed (Node's
/// whole output in the failure); then prints one line past the test harness's capture: `label`, the totals
/// and the time.
pub fn npm_test(dir: &Path, envs: &[(&str, &Path)], limit: Duration, label: &str) {
    let mut test = Command::new("npm");
    test.arg("test").current_dir(dir);
    for (name, value) in envs {
        test.env(name, value);
    }
    let started = Instant::now();
    let (status, output) = run_logged(test, "npm test", limit);
    assert!(status.success(), "`npm test` in {} failed ({status}):\n{output}", dir.display());
    let totals = node_totals(&output);
    assert!(
        totals.tests > 0 && totals.fail == 0,
        "`npm test` in {} ran no tests, or failed some:\n{output}",
        dir.display()
    );
    let line = format!(
        "{label}: {} Node tests passed ({} skipped) in {:.1} s\n",
        totals.pass,
        totals.skipped,
        started.elapsed().as_secs_f64()
    );
    std::io::Write::write_all(&mut std::io::stdout().lock(), line.as_bytes()).expect("stdout");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_versions_are_read_from_node_version_output() {
        assert_eq!(parse_node_version("v20.10.0\n"), Some((20, 10)));
        assert_eq!(parse_node_version("v22.1.3"), Some((22, 1)));
        assert!(parse_node_version("v20.9.0").is_some_and(|version| version < MIN_NODE));
        assert_eq!(parse_node_version("20.10"), None);
        assert_eq!(parse_node_version("v20"), None);
    }

    #[test]
    fn node_totals_are_read_from_either_reporter() {
        let tap = "ok 1 - a\n# Subtest: b\n# tests 12\n# suites 2\n# pass 11\n# fail 0\n# skipped 1\n# duration_ms 9\n";
        assert_eq!(node_totals(tap), Totals { tests: 12, pass: 11, fail: 0, skipped: 1 });
        let spec = "✔ a (1ms)\nℹ tests 3\nℹ pass 2\nℹ fail 1\nℹ skipped 0\n";
        assert_eq!(node_totals(spec), Totals { tests: 3, pass: 2, fail: 1, skipped: 0 });
        assert_eq!(node_totals("# a comment with words\n"), Totals::default());
    }
}

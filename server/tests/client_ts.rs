//! Runs the TypeScript client's tests (`client-ts/`, Node's test runner) against the daemon binary this build
//! produced, so `cargo test --workspace --locked` covers both clients. `npm ci` runs first when `node_modules`
//! is missing or older than the lockfile. A passing run is summed up in one line of the cargo output (Node's
//! totals); a failing one shows Node's whole output in the failure. Also the release's npm packages
//! (`packaging/release.sh`): they pass `npm publish --dry-run`, share the workspace's version, and, installed
//! offline into a fresh project, start a daemon from the platform package.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long `npm ci` may take (installing the two dev dependencies from a warm cache takes seconds).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);

/// How long `npm test` may take: compiling plus the Node tests, whose longest holds a subscription for 16 s
/// and each of which has its own timeout of at most 60 s.
const TEST_TIMEOUT: Duration = Duration::from_secs(300);

/// The oldest Node.js the client's tests run on: `npm test` uses `node --test --test-concurrency`, which
/// Node has had since 20.10 (the package declares the same in `engines`).
const MIN_NODE: (u32, u32) = (20, 10);

/// How often a running npm is checked for its exit.
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

/// Runs `command` in its own process group for at most `limit`; panics with `what` on a timeout.
fn run(mut command: Command, what: &str, limit: Duration) -> ExitStatus {
    command.process_group(0);
    let child = command.spawn().unwrap_or_else(|error| panic!("cannot start {what}: {error}"));
    let mut group = Group(child);
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = group.0.try_wait().expect("waiting for npm") {
            return status;
        }
        assert!(Instant::now() < deadline, "{what} did not finish within {limit:?}; it was killed");
        std::thread::sleep(POLL);
    }
}

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").join("client-ts")
}

/// Whether `node_modules` is missing or older than the lockfile (npm records its install in
/// `node_modules/.package-lock.json`).
fn needs_install(dir: &Path) -> bool {
    let modified = |path: PathBuf| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    match (modified(dir.join("node_modules/.package-lock.json")), modified(dir.join("package-lock.json"))) {
        (Some(installed), Some(locked)) => installed < locked,
        _ => true,
    }
}

/// The major and minor version in `node --version` output such as `v20.10.0`.
fn parse_node_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().strip_prefix('v')?.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[test]
fn node_versions_are_read_from_node_version_output() {
    assert_eq!(parse_node_version("v20.10.0\n"), Some((20, 10)));
    assert_eq!(parse_node_version("v22.1.3"), Some((22, 1)));
    assert!(parse_node_version("v20.9.0").is_some_and(|version| version < MIN_NODE));
    assert_eq!(parse_node_version("20.10"), None);
    assert_eq!(parse_node_version("v20"), None);
}

/// Runs `npm ci` in `dir` when its `node_modules` needs it, once at a time for this binary's tests.
fn ensure_installed(dir: &Path) {
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    if needs_install(dir) {
        let log = tempfile::NamedTempFile::new().expect("a log file");
        let mut install = Command::new("npm");
        install.args(["ci", "--no-audit", "--no-fund"]).current_dir(dir);
        install.stdout(log.reopen().expect("log")).stderr(log.reopen().expect("log"));
        let status = run(install, "npm ci", INSTALL_TIMEOUT);
        let output = std::fs::read_to_string(log.path()).unwrap_or_default();
        assert!(status.success(), "`npm ci` in {} failed ({status}):\n{output}", dir.display());
    }
}

/// Runs `command` with its output kept; panics with it, naming `what`, unless it succeeds. Its stdout.
fn checked(mut command: Command, what: &str) -> String {
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let out = tempfile::NamedTempFile::new().expect("an output file");
    command.stdout(out.reopen().expect("out")).stderr(log.reopen().expect("log"));
    let status = run(command, what, INSTALL_TIMEOUT);
    let stdout = std::fs::read_to_string(out.path()).unwrap_or_default();
    let stderr = std::fs::read_to_string(log.path()).unwrap_or_default();
    assert!(status.success(), "{what} failed ({status}):\n{stdout}\n{stderr}");
    stdout
}

/// The release's packages, made by its one command (`packaging/release.sh`, here on the binary this build
/// produced): the archive with a matching sha256, then the two npm packages a project that depends on the
/// client, as OpenCode does, installs: the client and the platform package with the daemon binary. Both pass
/// `npm publish --dry-run` without npm correcting their manifests; installed offline from their tarballs into
/// a fresh project, the client starts a daemon without being told where the binary is (no `OPENCODE_PTY_BIN`)
/// although it lists the arm64 package too, which cannot be fetched.
#[test]
fn the_packed_client_finds_the_daemon_in_the_platform_package() {
    let dir = client_dir();
    ensure_installed(&dir);
    let root = dir.parent().expect("the repository").to_path_buf();
    let packages = tempfile::tempdir().unwrap();
    let mut release = Command::new("bash");
    release.arg(root.join("packaging/release.sh")).args(["--binary", env!("CARGO_BIN_EXE_opencode-pty"), "--out"]);
    release.arg(packages.path());
    let made = checked(release, "packaging/release.sh");
    let made: Vec<&str> = made.lines().collect();
    let version = env!("CARGO_PKG_VERSION");
    let ends = [
        format!("opencode-pty-{version}-x86_64-unknown-linux-gnu.tar.gz"),
        format!("opencode-pty-{version}-x86_64-unknown-linux-gnu.tar.gz.sha256"),
        format!("opencode-pty-linux-x64-{version}.tgz"),
        format!("opencode-pty-client-{version}.tgz"),
    ];
    assert_eq!(made.len(), ends.len(), "release.sh made {made:?}");
    for (path, end) in made.iter().zip(&ends) {
        assert!(path.ends_with(&format!("/{end}")), "release.sh made {path}, not {end}");
    }
    let mut sum = Command::new("sha256sum");
    sum.args(["--check", "--strict", &ends[1]]).current_dir(packages.path());
    checked(sum, "sha256sum --check of the archive's sum");
    let (platform, client) = (made[2], made[3]);
    for tarball in [platform, client] {
        let mut publish = Command::new("npm");
        publish.args(["publish", "--dry-run", "--offline", tarball]).current_dir(packages.path());
        let log = tempfile::NamedTempFile::new().expect("a log file");
        publish.stdout(Stdio::null()).stderr(log.reopen().expect("log"));
        let status = run(publish, "npm publish --dry-run", INSTALL_TIMEOUT);
        let said = std::fs::read_to_string(log.path()).unwrap_or_default();
        assert!(status.success(), "npm publish --dry-run {tarball} failed ({status}):\n{said}");
        let warnings: Vec<&str> =
            said.lines().filter(|l| l.starts_with("npm warn") && !l.contains("to be logged in")).collect();
        assert!(warnings.is_empty(), "npm publish --dry-run {tarball} warned:\n{said}");
    }

    let project = tempfile::tempdir().unwrap();
    let manifest = r#"{"name": "consumer", "version": "1.0.0", "private": true, "type": "module"}"#;
    std::fs::write(project.path().join("package.json"), manifest).unwrap();
    let mut install = Command::new("npm");
    install.args(["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock"]);
    install.arg(client).arg(platform).current_dir(project.path());
    checked(install, "npm install of the two tarballs");
    let script = r#"import { Daemon } from "opencode-pty-client";
import { readlinkSync } from "node:fs";
const { daemon, owner } = await Daemon.spawn({ runtimeDir: process.argv[2], name: "npm", timeoutMs: 20000 });
const pty = await daemon.createPty({ program: "/bin/sh", args: ["-c", "exit 0"], cwd: "/", cols: 80, rows: 24 });
console.log(readlinkSync(`/proc/${daemon.pid}/exe`), pty.id);
await owner.release();
"#;
    std::fs::write(project.path().join("start.mjs"), script).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let mut start = Command::new("node");
    start.arg("start.mjs").arg(runtime.path()).current_dir(project.path()).env_remove("OPENCODE_PTY_BIN");
    let said = checked(start, "starting a daemon through the installed client");
    // `npm publish --dry-run` does not refuse a private package: each manifest as packed says it is public.
    for name in ["opencode-pty-client", "opencode-pty-linux-x64"] {
        let installed = project.path().join(format!("node_modules/{name}/package.json"));
        let installed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(installed).unwrap()).unwrap();
        assert_eq!((&installed["version"], installed.get("private")), (&version.into(), None), "{installed}");
        assert!(installed["repository"]["url"].is_string() && installed["license"] == "MIT", "{installed}");
        if name.ends_with("x64") {
            assert_eq!(
                (&installed["os"], &installed["cpu"]),
                (&serde_json::json!(["linux"]), &serde_json::json!(["x64"]))
            );
        }
    }
    let expected = project.path().join("node_modules/opencode-pty-linux-x64/bin/opencode-pty");
    assert!(said.starts_with(&format!("{} ", expected.display())), "the platform package's binary ran: {said}");
}

/// The release has one version, the workspace's (Cargo.toml, read by `packaging/version.sh`): the client's
/// package.json and lockfile say the same, and ask for each platform package at exactly that version, as
/// optional dependencies restricted to their OS and CPU (so `npm ci` here skips them while unpublished). The
/// package ships the repository's LICENSE, as a copy (npm packs no file from outside the package's folder).
#[test]
fn the_client_and_its_platform_packages_share_the_workspace_version() {
    let dir = client_dir();
    let root = dir.parent().expect("the repository").to_path_buf();
    let mut script = Command::new("bash");
    script.arg(root.join("packaging/version.sh"));
    let version = checked(script, "packaging/version.sh");
    assert_eq!(version.trim(), env!("CARGO_PKG_VERSION"), "packaging/version.sh reads the workspace's version");
    let json = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join(name)).expect(name);
        serde_json::from_str(&text).expect(name)
    };
    let licence = |path: PathBuf| std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(licence(dir.join("LICENSE")), licence(root.join("LICENSE")), "client-ts/LICENSE is the repository's");
    let (manifest, lock) = (json("package.json"), json("package-lock.json"));
    let template: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("packaging/npm/package.json")).unwrap()).unwrap();
    for field in ["license", "engines"] {
        assert_eq!(manifest[field], template[field], "the client's and the platform packages' {field}");
    }
    assert_eq!(manifest["license"], "MIT", "LICENSE is MIT");
    assert_eq!(manifest["repository"]["url"], template["repository"]["url"], "one repository");
    let version = serde_json::Value::from(env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["version"], version, "client-ts/package.json");
    assert_eq!(manifest.get("private"), None, "the client is published");
    assert_eq!(lock["version"], version, "client-ts/package-lock.json");
    assert_eq!(lock["packages"][""]["optionalDependencies"], manifest["optionalDependencies"]);
    for cpu in ["x64", "arm64"] {
        let name = format!("opencode-pty-linux-{cpu}");
        assert_eq!(manifest["optionalDependencies"][&name], version, "the client asks for {name}");
        let entry = &lock["packages"][format!("node_modules/{name}")];
        assert_eq!(entry["version"], version, "the lockfile's {name}");
        assert_eq!(entry["optional"], true, "the lockfile's {name}");
        assert_eq!(entry["os"], serde_json::json!(["linux"]), "the lockfile's {name}");
        assert_eq!(entry["cpu"], serde_json::json!([cpu]), "the lockfile's {name}");
    }
}

#[test]
fn typescript_client_tests_pass_against_the_daemon() {
    let dir = client_dir();
    let install = "install Node.js 20.10 or newer (it includes npm), e.g. from https://nodejs.org/ or your \
                   distribution's nodejs and npm packages";
    let node = Command::new("node").arg("--version").stderr(Stdio::null()).output();
    let version = match &node {
        Ok(output) if output.status.success() => String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        _ => panic!("the TypeScript client's tests need `node` on PATH: {install}"),
    };
    let parsed = parse_node_version(&version);
    assert!(
        parsed.is_some_and(|found| found >= MIN_NODE),
        "the TypeScript client's tests need Node.js {}.{} or newer (for `node --test --test-concurrency`), \
         but `node --version` says {version:?}: {install}",
        MIN_NODE.0,
        MIN_NODE.1
    );
    let npm = Command::new("npm").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    assert!(npm.is_ok_and(|status| status.success()), "the TypeScript client's tests need `npm` on PATH: {install}");
    ensure_installed(&dir);
    let mut test = Command::new("npm");
    test.args(["test"]).current_dir(&dir).env("OPENCODE_PTY_BIN", env!("CARGO_BIN_EXE_opencode-pty"));
    // Kept, not inherited: a passing run is one line of the cargo output, a failing one shows all of Node's.
    let log = tempfile::NamedTempFile::new().expect("a log file");
    test.stdout(log.reopen().expect("log")).stderr(log.reopen().expect("log"));
    let started = Instant::now();
    let status = run(test, "npm test", TEST_TIMEOUT);
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    assert!(status.success(), "`npm test` in {} failed ({status}):\n{output}", dir.display());
    let totals = node_totals(&output);
    assert!(totals.tests > 0 && totals.fail == 0, "`npm test` ran no tests, or failed some:\n{output}");
    // Written past the test harness's capture (which keeps `println!` of a passing test), as Node's lines were.
    let line = format!(
        "client-ts: {} Node tests passed ({} skipped) in {:.1} s against {}\n",
        totals.pass,
        totals.skipped,
        started.elapsed().as_secs_f64(),
        env!("CARGO_BIN_EXE_opencode-pty")
    );
    std::io::Write::write_all(&mut std::io::stdout().lock(), line.as_bytes()).expect("stdout");
}

/// The totals at the end of Node's test runner output.
#[derive(Debug, Default, PartialEq, Eq)]
struct Totals {
    tests: u64,
    pass: u64,
    fail: u64,
    skipped: u64,
}

/// Reads Node's closing totals: `# tests 12` lines (TAP, when the output is not a terminal) or `ℹ tests 12`
/// (the spec reporter); the last of each wins.
fn node_totals(output: &str) -> Totals {
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

#[test]
fn node_totals_are_read_from_either_reporter() {
    let tap = "ok 1 - a\n# Subtest: b\n# tests 12\n# suites 2\n# pass 11\n# fail 0\n# skipped 1\n# duration_ms 9\n";
    assert_eq!(node_totals(tap), Totals { tests: 12, pass: 11, fail: 0, skipped: 1 });
    let spec = "✔ a (1ms)\nℹ tests 3\nℹ pass 2\nℹ fail 1\nℹ skipped 0\n";
    assert_eq!(node_totals(spec), Totals { tests: 3, pass: 2, fail: 1, skipped: 0 });
    assert_eq!(node_totals("# a comment with words\n"), Totals::default());
}

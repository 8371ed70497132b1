//! Runs the TypeScript client's tests (`client-ts/`, Node's test runner) against the daemon binary this build
//! produced, so `cargo test --workspace --locked` covers both clients. `npm ci` runs first when `node_modules`
//! is missing or older than the lockfile. A passing run is summed up in one line of the cargo output (Node's
//! totals); a failing one shows Node's whole output in the failure. Also the release's npm packages
//! (`packaging/release.sh`): they pass `npm publish --dry-run`, share the workspace's version, and, installed
//! offline into a fresh project, start a daemon from the platform package.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use opencode_pty_testkit::node::{INSTALL_TIMEOUT, ensure_installed, npm_test, require_node, run_bounded};

/// How long `npm test` may take: compiling plus the Node tests, whose longest holds a subscription for 16 s
/// and each of which has its own timeout of at most 60 s.
const TEST_TIMEOUT: Duration = Duration::from_secs(300);

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").join("client-ts")
}

/// Runs `command` with its output kept; panics with it, naming `what`, unless it succeeds. Its stdout.
fn checked(mut command: Command, what: &str) -> String {
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let out = tempfile::NamedTempFile::new().expect("an output file");
    command.stdout(out.reopen().expect("out")).stderr(log.reopen().expect("log"));
    let status = run_bounded(command, what, INSTALL_TIMEOUT);
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
        let status = run_bounded(publish, "npm publish --dry-run", INSTALL_TIMEOUT);
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
    require_node("the TypeScript client's tests");
    ensure_installed(&dir);
    let binary = Path::new(env!("CARGO_BIN_EXE_opencode-pty"));
    npm_test(&dir, &[("OPENCODE_PTY_BIN", binary)], TEST_TIMEOUT, &format!("client-ts (against {})", binary.display()));
}

//! The upgrade's exec mechanics through the real binary: `upgrade-check` and the preflight that reads it, and
//! the `resume` command: a new image that cannot take the state executes the old executable again, with the
//! same state, in the same process. (The handover's own `execve` is tested in the library, where this binary's
//! counterpart executes itself: `upgrade::exec::tests`.) Its own test binary: its tests pass descriptors that
//! are not close-on-exec, which any child started beside them would inherit.

use std::fs;
use std::io::{Read as _, Write as _};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::fcntl::{OFlag, open};
use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::sys::stat::Mode;
use opencode_pty::{CheckReport, PreflightError, UpgradeRefused, upgrade_check_report, vet_upgrade};

/// The binary under test.
const DAEMON: &str = env!("CARGO_BIN_EXE_opencode-pty");

/// How long a chain of images may take before the test gives up on it.
const CHAIN_DEADLINE: Duration = Duration::from_secs(60);

/// How many times a test retries a script the kernel calls busy: another test's fork may hold the fresh file
/// open for writing until its child execs.
const BUSY_RETRIES: usize = 50;

/// The envelope's layout, written here by hand so that a change to it is a visible change to this test.
fn envelope(format: u32, payload: &[u8]) -> Vec<u8> {
    let mut bytes = b"OCPTYUP1".to_vec();
    bytes.extend_from_slice(&format.to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// A memory file holding `bytes`, inheritable (no close-on-exec), as an upgrade passes its state.
fn passed_state(bytes: &[u8]) -> OwnedFd {
    let fd = memfd_create("opencode-pty-upgrade-state", MFdFlags::empty()).unwrap();
    let mut file = fs::File::from(fd);
    file.write_all(bytes).unwrap();
    file.into()
}

/// `path`, open read-only and inheritable, as an upgrade passes the old executable.
fn passed_executable(path: &Path) -> OwnedFd {
    open(path, OFlag::O_RDONLY, Mode::empty()).unwrap()
}

/// A private executable shell script with `body`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
    path
}

/// A new build as a script: it answers the preflight as this build does, then runs `resume` as this build
/// with `resume_flags`, saying its pid first.
fn new_build(dir: &Path, resume_flags: &str) -> PathBuf {
    script(
        dir,
        "new-build",
        &format!(
            "case \"$1\" in\n\
             upgrade-check) exec '{DAEMON}' upgrade-check ;;\n\
             resume) shift; echo \"new image: pid $$\" >&2; exec '{DAEMON}' resume {resume_flags} \"$@\" ;;\n\
             esac\n\
             exit 2"
        ),
    )
}

/// What a chain of images started as `program args` left: the first process's pid, its exit status, its stderr.
struct Chain {
    pid: u32,
    success: bool,
    stderr: String,
}

/// Runs `program args` (retrying while the kernel calls the fresh script busy) and waits for the chain of
/// images it becomes to end, at most [`CHAIN_DEADLINE`].
fn run_chain(program: &Path, args: &[String]) -> Chain {
    let mut spawned = None;
    for _ in 0..BUSY_RETRIES {
        match Command::new(program).args(args).env("RUST_LOG", "info").stderr(Stdio::piped()).spawn() {
            Err(error) if error.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => {
                spawned = Some(other.unwrap());
                break;
            }
        }
    }
    let mut child = spawned.expect("the script stayed busy");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let since = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if since.elapsed() > CHAIN_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the chain of images did not end within {CHAIN_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Chain { pid: child.id(), success: status.success(), stderr: reader.join().unwrap() }
}

/// The lines of `text` that contain `needle`.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    text.lines().filter(|line| line.contains(needle)).collect()
}

/// `resume --state-fd N [--fallback-exe-fd M] -- daemon --name upgrade-test --runtime-dir DIR`.
fn resume_args(state: &OwnedFd, exe: Option<&OwnedFd>, runtime_dir: &Path) -> Vec<String> {
    let mut args = vec!["resume".to_owned(), "--state-fd".to_owned(), state.as_raw_fd().to_string()];
    if let Some(exe) = exe {
        args.extend(["--fallback-exe-fd".to_owned(), exe.as_raw_fd().to_string()]);
    }
    args.extend(["--", "daemon", "--name", "upgrade-test", "--runtime-dir"].map(str::to_owned));
    args.push(runtime_dir.display().to_string());
    args
}

#[test]
fn upgrade_check_prints_this_builds_report_and_the_preflight_reads_it() {
    let out = Command::new(DAEMON).arg("upgrade-check").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout}");
    let report: CheckReport = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report, upgrade_check_report());
    assert!(report.libghostty_revision.is_some());
    // Through a private copy: a build tree made under umask 002 has the binary group-writable, which the
    // checks before the preflight rightly refuse.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("opencode-pty");
    fs::copy(DAEMON, &copy).unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o700)).unwrap();
    let mut vetted = None;
    for _ in 0..BUSY_RETRIES {
        match vet_upgrade(Some(&copy)) {
            Err(UpgradeRefused::Preflight(PreflightError::Run { source, .. }))
                if source.kind() == std::io::ErrorKind::ExecutableFileBusy =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => {
                vetted = Some(other.unwrap());
                break;
            }
        }
    }
    let (program, vetted) = vetted.expect("the copy stayed busy");
    assert_eq!(program.path(), copy);
    assert_eq!(vetted, report);
}

#[test]
fn a_new_image_that_cannot_take_the_state_hands_it_to_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let program = new_build(dir.path(), "--refuse-state");
    // The new build passes every check before the exec: it would be executed.
    vet_upgrade(Some(&program)).unwrap();
    let payload = b"what the old daemon saved".to_vec();
    let state = passed_state(&envelope(1, &payload));
    let exe = passed_executable(Path::new(DAEMON));
    let chain = run_chain(&program, &resume_args(&state, Some(&exe), &dir.path().join("runtime")));
    let log = &chain.stderr;

    // One process throughout: the script, the new image, the old one.
    assert_eq!(lines_with(log, "new image: pid "), vec![format!("new image: pid {}", chain.pid)], "{log}");
    let resumed = lines_with(log, "resuming after an upgrade");
    assert_eq!(resumed.len(), 2, "the new image, then the old one: {log}");
    for line in &resumed {
        assert!(line.contains(&format!("pid={}", chain.pid)), "{line}");
    }
    assert!(resumed[0].contains("fallback=true") && resumed[1].contains("fallback=false"), "{log}");
    let refused = lines_with(log, "this image cannot take the upgrade state; the previous executable resumes with it");
    assert_eq!(refused.len(), 1, "{log}");
    assert!(refused[0].contains("told to refuse it (--refuse-state)"), "{log}");
    // The old image took the same state, and the daemon's arguments.
    let took = lines_with(log, "took the upgrade state");
    assert_eq!(took.len(), 1, "{log}");
    assert!(took[0].contains(&format!("format=1 bytes={}", payload.len())), "{}", took[0]);
    // Not a daemon's state: the old image, the last resort, cannot take it either, and ends.
    assert!(!chain.success, "{log}");
    assert!(log.contains("no previous executable is left to go back to"), "{log}");
}

#[test]
fn a_state_in_a_format_the_new_image_does_not_read_goes_back_to_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let program = new_build(dir.path(), "");
    let state = passed_state(&envelope(999, b"from the future"));
    let exe = passed_executable(Path::new(DAEMON));
    let chain = run_chain(&program, &resume_args(&state, Some(&exe), &dir.path().join("runtime")));
    let log = &chain.stderr;
    let refused = lines_with(log, "this image cannot take the upgrade state");
    assert_eq!(refused.len(), 1, "{log}");
    assert!(refused[0].contains("its format 999 is not one this build reads"), "{log}");
    // The old image (the same build here) cannot read it either, and has nothing to go back to.
    assert!(!chain.success, "{log}");
    assert!(
        log.contains(
            "cannot resume after an upgrade, and no previous executable is left to go back to: its format 999 is not \
             one this build reads"
        ),
        "{log}"
    );
}

#[test]
fn resume_without_a_passed_state_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["resume", "--state-fd", "999", "--", "daemon", "--name", "upgrade-test", "--runtime-dir"];
    let out = Command::new(DAEMON).args(args).arg(dir.path()).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "error: cannot resume after an upgrade: the state's descriptor: descriptor 999 is not open: the upgrade \
             did not pass it"
        ),
        "{stderr}"
    );
}

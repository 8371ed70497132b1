//! The preflight against programs that pass, fail, hang, print something else or cannot take our state.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::*;

/// How many times a test retries a script the kernel calls busy: another test's fork may hold the file open
/// for writing until its child execs.
const BUSY_RETRIES: usize = 50;

/// A shell script with `body`, private and executable, checked as a program.
fn script(dir: &tempfile::TempDir, name: &str, body: &str) -> Program {
    let path: PathBuf = dir.path().join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
    Program::check(&path).unwrap()
}

/// [`preflight_within`], retrying while the script is busy (see [`BUSY_RETRIES`]).
fn check(program: &Program, timeout: Duration) -> Result<CheckReport, PreflightError> {
    for _ in 0..BUSY_RETRIES {
        match preflight_within(program, timeout) {
            Err(PreflightError::Run { source, .. }) if source.kind() == io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
    panic!("{} stayed busy", program.path().display());
}

#[test]
fn our_report_is_one_json_line_that_reads_back() {
    let report = check_report();
    assert_eq!(report.protocol, PROTOCOL_VERSION);
    assert!(report.state_formats.contains(&STATE_FORMAT));
    let line = serde_json::to_string(&report).unwrap();
    assert!(!line.contains('\n'));
    assert_eq!(serde_json::from_str::<CheckReport>(&line).unwrap(), report);
}

#[test]
fn a_program_that_takes_our_state_passes() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(
        &dir,
        "new",
        &format!(
            "echo 'a warning on stderr is fine' >&2\n\
             echo '{{\"version\":\"9.9.9\",\"protocol\":9,\"state_formats\":[{STATE_FORMAT},42],\"future\":true}}'"
        ),
    );
    let report = check(&program, PREFLIGHT_TIMEOUT).unwrap();
    assert_eq!(report.version, "9.9.9");
    assert_eq!(report.protocol, 9);
    assert_eq!(report.state_formats, vec![STATE_FORMAT, 42]);
    assert_eq!(report.libghostty_revision, None);
}

#[test]
fn a_program_that_fails_is_refused_with_its_words() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(&dir, "broken", "echo 'error while loading shared libraries: libghostty-vt.so' >&2\nexit 127");
    let error = check(&program, PREFLIGHT_TIMEOUT).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "`{} upgrade-check` failed (exit status: 127); it said: stderr: \"error while loading shared libraries: \
             libghostty-vt.so\"",
            program.path().display()
        )
    );
}

#[test]
fn a_program_that_prints_garbage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("words", "echo 'usage: tool [options]'", "not its JSON"),
        ("silent", "true", "nothing on stdout"),
        ("twice", "echo '{}'\necho '{}'", "more than one line on stdout"),
        ("partial", "echo '{\"version\":\"1\"}'", "not its JSON: missing field `protocol`"),
        ("binary", "printf '\\377\\376'", "stdout is not UTF-8"),
    ];
    for (name, body, detail) in cases {
        let program = script(&dir, name, body);
        let error = check(&program, PREFLIGHT_TIMEOUT).unwrap_err();
        assert!(matches!(error, PreflightError::Garbage { .. }), "{name}: {error}");
        let error = error.to_string();
        assert!(error.contains(detail), "{name}: {error}");
    }
}

#[test]
fn a_flood_on_stdout_is_refused_and_quoted_briefly() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(&dir, "flood", "yes 'the same line again' | head -c 1000000");
    let error = check(&program, PREFLIGHT_TIMEOUT).unwrap_err().to_string();
    assert!(error.contains(&format!("more than {MAX_CHECK_OUTPUT_BYTES} bytes on stdout")), "{error}");
    assert!(error.len() < MAX_QUOTED_BYTES + 512, "bounded: {} bytes", error.len());
    assert!(error.ends_with("…\""), "{error}");
}

#[test]
fn a_program_that_cannot_take_our_state_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(
        &dir,
        "future",
        "echo '{\"version\":\"2.0.0\",\"protocol\":12,\"state_formats\":[5,6],\"libghostty_revision\":\"abc\"}'",
    );
    let error = check(&program, PREFLIGHT_TIMEOUT).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "{} (version 2.0.0, protocol 12) cannot take this daemon's state: it reads state formats [5, 6], and this \
             daemon writes format {STATE_FORMAT}",
            program.path().display()
        )
    );
}

#[test]
fn a_program_that_hangs_is_killed_with_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    // A grandchild holding stdout open: the deadline must not wait for it either.
    let program = script(&dir, "hangs", "echo 'thinking' >&2\nsleep 30 &\nwait");
    let since = Instant::now();
    let error = check(&program, Duration::from_millis(300)).unwrap_err().to_string();
    assert!(since.elapsed() < Duration::from_secs(5), "killed at the deadline: {:?}", since.elapsed());
    assert_eq!(
        error,
        format!(
            "`{} upgrade-check` did not finish within 300 ms, so it was killed; it said: stderr: \"thinking\"",
            program.path().display()
        )
    );
}

#[test]
fn a_program_that_cannot_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-program");
    fs::write(&path, [0x7f, b'E', b'L', b'F', 0, 0, 0, 0]).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
    let program = Program::check(&path).unwrap();
    let error = check(&program, PREFLIGHT_TIMEOUT).unwrap_err();
    assert!(matches!(error, PreflightError::Run { .. }), "{error}");
    let error = error.to_string();
    assert!(error.starts_with(&format!("cannot run `{} upgrade-check`: ", path.display())), "{error}");
}

#[test]
fn a_program_that_closes_its_output_and_stays_is_killed_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(&dir, "lingers", "exec >/dev/null 2>&1\nsleep 30");
    let since = Instant::now();
    let error = check(&program, Duration::from_millis(300)).unwrap_err().to_string();
    assert!(since.elapsed() < Duration::from_secs(5), "killed at the deadline: {:?}", since.elapsed());
    assert_eq!(
        error,
        format!(
            "`{} upgrade-check` did not finish within 300 ms, so it was killed; it said: nothing",
            program.path().display()
        )
    );
}

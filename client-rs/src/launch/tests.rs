//! The launcher against fake daemons (shell scripts taking the daemon's command line): it finds the
//! registration naming the pid it started, however late its directory appears, and no stale one; it says so
//! when the daemon exits first or never registers, and kills it then; it passes arguments, environment, working
//! directory and a wrapper on; and a daemon is gone once its handle is dropped, SIGTERM ignored or not.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use opencode_pty_protocol::{PROTOCOL_VERSION, REGISTRATION_FILE};

use super::{Launch, LaunchError};

/// Far below the launcher's own deadline: a wait woken by an event ends long before it.
const PROMPTLY: Duration = Duration::from_secs(5);

/// Writes `root/NAME/service.json` (through a rename, as the daemon does) naming the script's own pid. The
/// script's arguments are the daemon's: `daemon --name NAME --runtime-dir ROOT ...`.
const REGISTER: &str = r#"dir="$5/$3"; mkdir -p "$dir"
register() {
  printf '{"instance_id":"%032d","pid":%s,"protocol":%s,"features":[],"socket":"/nonexistent","token":"%032d"}' \
    1 "$1" "$PROTOCOL" 2 > "$dir/service.tmp" && mv "$dir/service.tmp" "$dir/service.json"
}"#;

/// A fake daemon in `dir` running `body` after [`REGISTER`]'s definitions.
fn fake(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("fake-daemon");
    std::fs::write(&path, format!("#!/bin/sh\n{REGISTER}\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn launch(program: &Path, root: &Path) -> Launch {
    Launch::new(program, root, "fake").env("PROTOCOL", PROTOCOL_VERSION.to_string())
}

/// Whether `pid` names a process (a zombie counts).
fn exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn the_registration_naming_the_daemon_is_found_and_the_daemon_is_stopped_on_drop() {
    let (bin, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let program = fake(bin.path(), "register $$\nexec sleep 1000");
    let daemon = launch(&program, root.path()).start().unwrap();
    let pid = daemon.pid();
    assert_eq!(daemon.registration().pid, pid);
    assert_eq!(daemon.dir(), root.path().join("fake"));
    drop(daemon);
    assert!(!exists(pid), "the daemon was stopped and reaped");
}

#[test]
fn a_directory_made_late_is_seen_as_it_appears() {
    let (bin, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The directory and then the registration come after the launcher started watching.
    let program =
        fake(bin.path(), "rmdir \"$dir\"; sleep 0.3; mkdir \"$dir\"; sleep 0.3; register $$\nexec sleep 1000");
    let started = Instant::now();
    let daemon = launch(&program, root.path()).start().unwrap();
    assert_eq!(daemon.registration().pid, daemon.pid());
    assert!(started.elapsed() < PROMPTLY, "woken by the event, not by the deadline: {:?}", started.elapsed());
}

#[test]
fn a_stale_registration_is_passed_over_for_the_daemons_own() {
    let (bin, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let program = fake(bin.path(), "register 1; sleep 0.3; register $$\nexec sleep 1000");
    let started = Instant::now();
    let daemon = launch(&program, root.path()).start().unwrap();
    assert_eq!(daemon.registration().pid, daemon.pid());
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
    let file = std::fs::read_to_string(root.path().join("fake").join(REGISTRATION_FILE)).unwrap();
    assert!(file.contains(&format!("\"pid\":{}", daemon.pid())), "{file}");
}

#[test]
fn a_daemon_that_exits_first_is_reported_at_once() {
    let (bin, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let program = fake(bin.path(), "exit 3");
    let started = Instant::now();
    let error = launch(&program, root.path()).start().unwrap_err();
    assert!(matches!(&error, LaunchError::Exited { status } if status.code() == Some(3)), "{error}");
    assert_eq!(error.to_string(), "the daemon exited (exit status: 3) before writing its registration");
    assert!(started.elapsed() < PROMPTLY, "woken by the exit, not by the deadline: {:?}", started.elapsed());
}

#[test]
fn a_daemon_that_never_registers_is_reported_at_the_deadline_and_killed() {
    let (bin, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let program = fake(bin.path(), "echo $$ > \"$5/pid\"\nexec sleep 1000");
    let error = launch(&program, root.path()).deadline(Duration::from_millis(300)).start().unwrap_err();
    let LaunchError::NoRegistration { pid, file, within } = &error else { panic!("{error}") };
    assert_eq!(*within, Duration::from_millis(300));
    assert_eq!(*file, root.path().join("fake").join(REGISTRATION_FILE));
    assert!(error.to_string().starts_with(&format!("no registration naming the daemon's pid {pid} appeared at ")));
    assert!(!exists(*pid), "killed and reaped");
}

#[test]
fn a_program_that_cannot_run_is_named() {
    let root = tempfile::tempdir().unwrap();
    let error = launch(&root.path().join("missing"), root.path()).start().unwrap_err();
    assert!(matches!(error, LaunchError::Spawn { .. }), "{error}");
    assert!(error.to_string().starts_with(&format!("cannot start {}: ", root.path().join("missing").display())));
}

#[test]
fn arguments_environment_working_directory_and_wrapper_reach_the_daemon() {
    let (bin, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let program = fake(
        bin.path(),
        "echo \"$* [${KEPT-unset}] [${GONE-unset}] $(pwd)\" > \"$dir/seen\"\nregister $$\nexec sleep 1000",
    );
    let launch = Launch::new(&program, ".", "fake")
        .current_dir(root.path())
        .args(["--one", "two"])
        .arg("three")
        .env("PROTOCOL", PROTOCOL_VERSION.to_string())
        .env("KEPT", "yes")
        .env("GONE", "no")
        .env_remove("GONE")
        .exec_through("/bin/sh", ["-c", "exec \"$0\" \"$@\""]);
    assert!(launch.sets_env("KEPT") && !launch.sets_env("OTHER"));
    let daemon = launch.start().unwrap();
    assert_eq!(daemon.dir(), root.path().join("./fake"));
    let seen = std::fs::read_to_string(root.path().join("fake/seen")).unwrap();
    let here = root.path().canonicalize().unwrap();
    assert_eq!(
        seen.trim_end(),
        format!("daemon --name fake --runtime-dir . --one two three [yes] [unset] {}", here.display())
    );
}

#[test]
fn a_daemon_that_ignores_sigterm_is_killed_after_the_grace() {
    let (bin, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // An ignored SIGTERM stays ignored across the exec.
    let program = fake(bin.path(), "trap '' TERM\nregister $$\nexec sleep 1000");
    let mut daemon = launch(&program, root.path()).start().unwrap();
    let started = Instant::now();
    let status = daemon.stop(Duration::from_millis(200)).unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(Signal::SIGKILL as i32), "{status}");
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[test]
fn a_daemon_that_stops_on_sigterm_is_waited_for_by_its_exit() {
    let (bin, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let program = fake(bin.path(), "register $$\nexec sleep 1000");
    let mut daemon = launch(&program, root.path()).stop_grace(Duration::from_secs(60)).start().unwrap();
    assert_eq!(daemon.wait_exit(Duration::from_millis(50)).unwrap(), None, "it runs");
    let started = Instant::now();
    let status = daemon.stop(Duration::from_secs(60)).unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(Signal::SIGTERM as i32), "{status}");
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
    assert_eq!(daemon.try_wait().unwrap(), Some(status), "reaped, and the status kept");
}

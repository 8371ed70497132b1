//! Ways around the guardian (SPEC L2, L3, L7, X4, X6, Q3), against the real binary: a runtime directory removed
//! under a running daemon is recreated (so kill -9 still leaves nothing behind) and its live socket is never
//! taken by a second daemon; a child whose group cannot be recorded is refused and stopped; a restart right
//! after a kill waits (bounded) for the lock's passing holder while a live daemon's lock is refused at once; a
//! pipe's output file is never one of the daemon's own; a squatted socket directory or a planted lock symlink
//! is reported or avoided; and the periodic check does nothing to an idle daemon.

use crate::guardian::{Leftovers, kill_daemon, start_children, wait_all_gone};
use crate::support;

use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use opencode_pty::limits::{LOCK_WAIT, RUNTIME_CHECK_INTERVAL};
use opencode_pty_protocol::Registration;
use serde_json::{Value, json};
use support::{Daemon, WAIT, binary, create_sh, eventually, message, run_bounded};

/// The registration in `dir`, once it parses.
fn registration_in(dir: &Path) -> Option<Registration> {
    serde_json::from_slice(&fs::read(dir.join("service.json")).ok()?).ok()
}

/// Runs a daemon that is expected to fail at startup, and returns its exit code, stderr and how long it took.
fn failing_daemon(root: &Path, name: &str, extra: &[&str]) -> (Option<i32>, String, Duration) {
    let mut command = Command::new(binary());
    command.args(["daemon", "--name", name, "--runtime-dir"]).arg(root).args(extra).env("RUST_LOG", "warn");
    let since = Instant::now();
    let output = run_bounded(command, b"", WAIT);
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned(), since.elapsed())
}

/// Holds `dir`'s service lock from the test, as a guardian or a sweep would: as soon as whoever holds it now
/// (a killed daemon's guardian, removing its record) lets go.
fn hold_lock(dir: &Path) -> Flock<fs::File> {
    eventually("the service lock to be free", || {
        let file =
            fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(dir.join("service.lock"));
        Flock::lock(file.expect("open the lock file"), FlockArg::LockExclusiveNonblock).ok()
    })
}

/// Waits (bounded) until the log at `path` holds `needle` at least `count` times.
fn log_holds(path: &Path, needle: &str, count: usize) {
    eventually(&format!("{count} x {needle:?} in the daemon's log"), || {
        (fs::read_to_string(path).ok()?.matches(needle).count() >= count).then_some(())
    });
}

fn ping(daemon: &Daemon) -> Value {
    daemon.request(json!({"op": "ping"}))
}

#[test]
fn kill_9_after_removing_the_runtime_directory_leaves_no_child() {
    let out = tempfile::tempdir().unwrap();
    let mut leftovers = Leftovers::default();
    let mut daemon = Daemon::start();
    let _owner = daemon.own();
    start_children(&daemon, &out.path().join("out.log"), &mut leftovers);
    let dir = daemon.dir();
    fs::remove_dir_all(&dir).unwrap();
    // The watch recreates the directory, the registration and the record with the live groups.
    eventually("the registration and the record to be back", || {
        let back = registration_in(&dir)? == daemon.registration;
        let record = fs::read(dir.join("service.groups")).ok()?;
        let groups = serde_json::from_slice::<Value>(&record).ok()?["groups"].as_array()?.len();
        (back && groups == 2).then_some(())
    });
    kill_daemon(&mut daemon);
    wait_all_gone(&leftovers, "every child to be gone after kill -9 of a daemon whose directory was removed");
}

#[test]
fn a_second_daemon_never_takes_a_live_socket() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    fs::remove_dir_all(daemon.dir()).unwrap();
    let (code, stderr, _) = failing_daemon(daemon.root.path(), &daemon.name, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("another opencode-pty daemon already runs in {}", daemon.dir().display())),
        "{stderr}"
    );
    assert_eq!(ping(&daemon)["instance_id"], daemon.registration.instance_id.as_str(), "the first still serves");
    let dir = daemon.dir();
    eventually("the first daemon's registration to be back", || {
        (registration_in(&dir)? == daemon.registration).then_some(())
    });
    assert_eq!(ping(&daemon)["type"], "pong");
}

#[test]
fn a_daemon_whose_removed_directory_another_took_stops_in_order() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut daemon = Daemon::start_configured(tempfile::tempdir().unwrap(), "taken", &[], &[], log.path());
    let _owner = daemon.own();
    let pid = daemon.request(create_sh("sleep 1071"))["process"]["pid"].as_u64().unwrap() as u32;
    let dir = daemon.dir();
    // Another daemon's lock in the recreated directory, taken before the watch takes it (tried again if not).
    let _other = eventually("the directory removed and its new lock taken", || {
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).ok()?;
        let file =
            fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(dir.join("service.lock"));
        Flock::lock(file.ok()?, FlockArg::LockExclusiveNonblock).ok()
    });
    let status = daemon.wait_exit();
    assert!(status.success(), "an orderly stop: {status}");
    log_holds(log.path(), "another daemon took it; stopping", 1);
    support::wait_dead("its child to be ended by the stop", pid);
    assert!(dir.join("service.lock").exists(), "the other daemon's lock file is left alone");
}

#[test]
fn a_create_whose_group_cannot_be_recorded_is_refused_and_nothing_runs() {
    let out = tempfile::tempdir().unwrap();
    let daemon = Daemon::start();
    // A directory where the record's temp file goes: every write of the record fails, as on a full disk.
    let blocker = daemon.dir().join(format!("service.{}.groups.tmp", daemon.registration.instance_id));
    // The daemon may be writing its record through that temp file just now (its first write can come after
    // the registration): then the file is there for a moment and the directory is made once it is renamed.
    support::eventually("the record's temp name to be free", || match fs::create_dir(&blocker) {
        Ok(()) => Some(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && !blocker.is_dir() => None,
        Err(error) => panic!("cannot make {}: {error}", blocker.display()),
    });
    let pty = json!({"op": "create_pty", "program": "sleep", "args": ["1051"], "cwd": "/", "env": {},
                     "group_id": "g", "title": "t", "cols": 80, "rows": 24});
    let pipe = json!({"op": "create_pipe", "program": "sleep", "args": ["1052"], "cwd": "/",
                      "env": {"PATH": "/usr/bin:/bin"}, "group_id": "g",
                      "output_path": out.path().join("out.log").to_str().unwrap(), "metadata": {}});
    for request in [&pty, &pipe] {
        let answer = daemon.request(request.clone());
        let text = message(&answer);
        assert!(text.starts_with("process not started: the daemon cannot record its process group"), "{text}");
        assert!(text.contains(&blocker.display().to_string()), "{text}");
    }
    for mode in ["pty", "pipe"] {
        let listed = daemon.request(json!({"op": "list", "mode": mode}));
        assert_eq!(listed["processes"], json!([]), "{listed}");
    }
    for args in ["1051", "1052"] {
        assert!(!running_sleep(args), "a refused child still runs: sleep {args}");
    }
    fs::remove_dir(&blocker).unwrap();
    let created = daemon.request(pty);
    assert_eq!(created["type"], "created", "once the record can be written again: {created}");
}

/// Whether a process runs `sleep ARG` (not a zombie).
fn running_sleep(arg: &str) -> bool {
    let wanted = format!("sleep\0{arg}\0");
    fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        let cmdline = fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        cmdline == wanted.as_bytes() && !zombie
    })
}

#[test]
fn a_restart_right_after_kill_9_waits_for_the_locks_passing_holder() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut first = Daemon::start();
    kill_daemon(&mut first);
    let root = std::mem::replace(&mut first.root, tempfile::tempdir().unwrap());
    let name = first.name.clone();
    drop(first);
    let dir = root.path().join(&name);
    // The stale registration goes first, so the launcher waits for the new one.
    fs::remove_file(dir.join("service.json")).unwrap();
    // The dead daemon's guardian (or a sweep) holds the lock for a moment, as it removes the record.
    let held = hold_lock(&dir);
    let log_path = log.path().to_owned();
    let releaser = std::thread::spawn(move || {
        log_holds(&log_path, "waiting for its holder", 1);
        drop(held);
    });
    let next = Daemon::start_configured(root, &name, &[], &[], log.path());
    releaser.join().unwrap();
    assert_eq!(ping(&next)["pid"], next.pid());
    log_holds(log.path(), "took the service lock after waiting for it", 1);
}

#[test]
fn a_live_daemons_lock_is_refused_at_once_and_any_lock_held_past_the_bound() {
    let daemon = Daemon::start();
    let usual = format!("another opencode-pty daemon already runs in {}", daemon.dir().display());
    let (code, stderr, took) = failing_daemon(daemon.root.path(), &daemon.name, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(&usual), "{stderr}");
    assert!(took < LOCK_WAIT, "a live daemon's lock is refused without the wait: {took:?}");

    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("held");
    fs::create_dir(&dir).unwrap();
    let _held = hold_lock(&dir);
    let (code, stderr, took) = failing_daemon(root.path(), "held", &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(&format!("another opencode-pty daemon already runs in {}", dir.display())), "{stderr}");
    assert!(took >= LOCK_WAIT, "the wait is bounded, not skipped: {took:?}");
}

#[test]
fn output_paths_inside_the_runtime_directory_are_refused() {
    let daemon = Daemon::start();
    let dir = daemon.dir();
    let link = daemon.root.path().join("link");
    symlink(&dir, &link).unwrap();
    let before = fs::read(dir.join("service.json")).unwrap();
    let paths: [PathBuf; 4] = [
        dir.join("service.json"),
        dir.join("service.lock"),
        daemon.root.path().join("elsewhere").join("..").join(&daemon.name).join("service.groups"),
        link.join("service.json"),
    ];
    fs::create_dir(daemon.root.path().join("elsewhere")).unwrap();
    for path in paths {
        let request = json!({"op": "create_pipe", "program": "true", "args": [], "cwd": "/", "env": {},
                             "group_id": "g", "output_path": path.to_str().unwrap(), "metadata": {}});
        let answer = daemon.request(request);
        let expected = format!(
            "output_path {} is inside the daemon's runtime directory {}: refused",
            path.display(),
            dir.display()
        );
        assert_eq!(message(&answer), expected);
    }
    assert_eq!(fs::read(dir.join("service.json")).unwrap(), before, "the registration is untouched");
    assert!(fs::metadata(dir.join("service.lock")).unwrap().len() == 0 && dir.join("service.groups").exists());
}

#[test]
fn a_squatted_socket_directory_gives_a_private_one() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let euid = nix::unistd::geteuid().as_raw();
    for squat in ["foreign directory", "symlink", "fifo"] {
        let tmp = tempfile::tempdir().unwrap();
        let usual = tmp.path().join(format!("opencode-pty-{euid}"));
        match squat {
            "foreign directory" if euid == 0 => {
                fs::create_dir(&usual).unwrap();
                std::os::unix::fs::chown(&usual, Some(65534), Some(65534)).unwrap();
            }
            "foreign directory" => continue, // Only root can give a directory away.
            "symlink" => symlink(tmp.path(), &usual).unwrap(),
            _ => nix::unistd::mkfifo(&usual, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap(),
        }
        let extra = ["--socket-tmp", tmp.path().to_str().unwrap()];
        let daemon = Daemon::start_configured(
            tempfile::tempdir().unwrap(),
            "sq",
            &extra,
            &[("XDG_RUNTIME_DIR", None)],
            log.path(),
        );
        let socket = PathBuf::from(&daemon.registration.socket);
        let private = socket.parent().unwrap().to_owned();
        let name = private.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with(&format!("opencode-pty-{euid}-")) && private.parent() == Some(tmp.path()),
            "{squat}: {socket:?}"
        );
        assert_eq!(fs::metadata(&private).unwrap().mode() & 0o777, 0o700);
        assert_eq!(ping(&daemon)["type"], "pong", "{squat}");
        let logged = fs::read_to_string(log.path()).unwrap();
        assert!(logged.contains("the usual socket directory is not ours"), "{squat}: {logged}");
        if squat == "foreign directory" {
            assert!(logged.contains("owned by uid 65534"), "the owner is named: {logged}");
        }
        drop(daemon);
        assert!(!private.exists(), "{squat}: the private socket directory goes with the daemon");
    }
    // No private place can be made (its socket paths would be too long): refused, naming what squats the path.
    let tmp = tempfile::tempdir().unwrap();
    let long = tmp.path().join("x".repeat(80));
    fs::create_dir(&long).unwrap();
    let usual = long.join(format!("opencode-pty-{euid}"));
    symlink(tmp.path(), &usual).unwrap();
    let root = tempfile::tempdir().unwrap();
    let (code, stderr, _) = failing_daemon(root.path(), "sq", &["--socket-tmp", long.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    let expected =
        format!("refusing socket directory {}: it is a symbolic link to {}", usual.display(), tmp.path().display());
    assert!(stderr.contains(&expected) && stderr.contains("no private directory could be made"), "{stderr}");
}

#[test]
fn the_socket_is_in_xdg_runtime_dir_and_clients_find_it_through_the_registration() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    fs::set_permissions(xdg.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let env = [("XDG_RUNTIME_DIR", Some(xdg.path().to_str().unwrap()))];
    let daemon = Daemon::start_configured(tempfile::tempdir().unwrap(), "xdg", &[], &env, log.path());
    assert_eq!(Path::new(&daemon.registration.socket).parent().unwrap(), xdg.path().join("opencode-pty"));
    let mut status = Command::new(binary());
    status.args(["status", "--name", "xdg", "--runtime-dir"]).arg(daemon.root.path());
    let output = run_bounded(status, b"", WAIT);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains(&daemon.registration.socket));
}

#[test]
fn a_planted_lock_symlink_is_named_with_its_target() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("planted");
    fs::create_dir(&dir).unwrap();
    let target = root.path().join("target");
    fs::write(&target, "").unwrap();
    symlink(&target, dir.join("service.lock")).unwrap();
    let (code, stderr, _) = failing_daemon(root.path(), "planted", &[]);
    assert_eq!(code, Some(1), "{stderr}");
    let expected = format!(
        "refusing service lock {}: a symbolic link to {} was found there (never followed)",
        dir.join("service.lock").display(),
        target.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
}

#[test]
fn an_idle_daemon_keeps_its_terminal_socket_and_files_across_checks() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let env = [("RUST_LOG", Some("opencode_pty=debug"))];
    let daemon = Daemon::start_configured(tempfile::tempdir().unwrap(), "idle", &[], &env, log.path());
    let _owner = daemon.own();
    let created = daemon.request(create_sh("sleep 1061"));
    let id = created["process"]["id"].clone();
    let dir = daemon.dir();
    let inode = |name: &str| fs::metadata(dir.join(name)).unwrap().ino();
    let before = (inode("service.json"), inode("service.lock"), inode("service.groups"));
    // Two checks of the directory, so longer than RUNTIME_CHECK_INTERVAL, with nothing happening.
    log_holds(log.path(), "the runtime directory is intact", 2);
    eprintln!("two checks at most {RUNTIME_CHECK_INTERVAL:?} apart");
    let got = daemon.request(json!({"op": "get", "id": id}));
    assert_eq!(got["process"]["lifecycle"]["status"], "running", "{got}");
    assert_eq!(ping(&daemon)["type"], "pong");
    let after = (inode("service.json"), inode("service.lock"), inode("service.groups"));
    assert_eq!(before, after, "nothing was rewritten");
    assert!(!fs::read_to_string(log.path()).unwrap().contains("recreated"));
}

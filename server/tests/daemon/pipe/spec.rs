//! SPEC §8 (pipe processes) over the socket, one test per behaviour: validation before the file
//! system, the output file's mode, truncation and symlink refusal, spawn failures after the open, ordered
//! stdout/stderr, exactly `env`, a clean signal state, line counts that always match the tail, write errors,
//! the one-second linger, `exited_at`, zombies until terminate, terminate without waiting on escaped
//! descendants, and output files that the daemon never deletes. Every wait is bounded; no process is left.

use super::start_wait;
use crate::support;

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use opencode_pty::limits::{LINGER, MAX_TOTAL_METADATA_BYTES};
use opencode_pty_protocol::MAX_METADATA_BYTES;
use serde_json::{Value, json};
use support::{
    Daemon, KillOnDrop, WAIT, eventually, message, pid_from, proc_state, process_exists, recv, threads_named, wait_dead,
};

/// The `PATH` given to children that run more than shell builtins.
const PATH: &str = "/usr/bin:/bin";

/// A `create_pipe` request for `program args` writing to `output`, with `env` as the child's whole environment.
fn create_pipe(output: &Path, program: &str, args: &[&str], env: Value) -> Value {
    json!({"op": "create_pipe", "program": program, "args": args, "cwd": "/", "env": env, "group_id": "g",
           "output_path": output.to_str().unwrap(), "metadata": {"spec": true}})
}

/// A `create_pipe` request for `/bin/sh -c script` with `PATH` set, writing to `output`.
fn create_sh(output: &Path, script: &str) -> Value {
    create_pipe(output, "/bin/sh", &["-c", script], json!({"PATH": PATH}))
}

/// `(id, pid)` of a `created` response.
fn created(response: &Value) -> (u64, u32) {
    assert_eq!(response["type"], "created", "{response}");
    let process = &response["process"];
    (process["id"].as_u64().expect("id"), process["pid"].as_u64().expect("pid") as u32)
}

/// The `process` of a `get`.
fn get(daemon: &Daemon, id: u64) -> Value {
    let response = daemon.request(json!({"op": "get", "id": id}));
    assert_eq!(response["type"], "process", "{response}");
    response["process"].clone()
}

/// Waits (bounded by the connection's read timeout) for the `exited` answer to `wait {id}`.
fn wait_exited(daemon: &Daemon, id: u64) -> Value {
    let exited = recv(&mut start_wait(daemon, id)).expect("an answer to wait");
    assert_eq!(exited["type"], "exited", "{exited}");
    exited
}

/// The ids `list {mode: "pipe"}` answers.
fn listed_pipes(daemon: &Daemon) -> Vec<u64> {
    let listed = daemon.request(json!({"op": "list", "mode": "pipe"}));
    listed["processes"].as_array().expect("processes").iter().map(|p| p["id"].as_u64().unwrap()).collect()
}

fn read(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).expect("read the file")).into_owned()
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).expect("the file exists").len()
}

/// A line of `/proc/<pid>/status` (after its `Name:` prefix), trimmed.
fn status_field(pid: u32, name: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the status file");
    let prefix = format!("{name}:");
    status.lines().find_map(|l| l.strip_prefix(prefix.as_str())).expect("the field").trim().to_owned()
}

#[test]
fn a_rejected_create_pipe_neither_creates_nor_truncates_the_output_file() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let script = format!("echo started > {}", marker.display());
    let fresh = dir.path().join("fresh.log");
    let kept = dir.path().join("kept.log");
    std::fs::write(&kept, "keep").unwrap();
    for path in [&fresh, &kept] {
        // A relative output path that names the same file from any working directory, so a daemon that opened
        // it anyway would be caught by the checks below.
        let relative = format!("{}{}", "../".repeat(64), path.to_str().unwrap().trim_start_matches('/'));
        let base = || create_sh(path, &script);
        let mut relative_cwd = base();
        relative_cwd["cwd"] = json!("tmp");
        let mut relative_output = base();
        relative_output["output_path"] = json!(relative);
        let mut too_big = base();
        too_big["metadata"] = json!({"big": "x".repeat(MAX_METADATA_BYTES)});
        let mut no_program = base();
        no_program["program"] = json!("");
        let cases = [
            (relative_cwd, "cwd must be an absolute path (got tmp)".to_owned()),
            (relative_output, format!("output_path must be an absolute path (got {relative})")),
            (too_big, format!("metadata is over the {MAX_METADATA_BYTES}-byte limit")),
            (no_program, "program cannot be empty".to_owned()),
        ];
        for (request, expected) in cases {
            assert_eq!(message(&daemon.request(request)), expected);
        }
    }
    assert!(!fresh.exists(), "a rejected request creates no file");
    assert_eq!(read(&kept), "keep", "a rejected request truncates no file");
    assert_eq!(listed_pipes(&daemon), Vec::<u64>::new(), "nothing started");
    assert!(!marker.exists(), "nothing ran");
}

#[test]
fn the_output_file_is_created_0666_minus_the_daemons_umask_and_an_existing_one_is_truncated() {
    use std::os::unix::fs::PermissionsExt;
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    // The daemon inherited the test's umask; /proc shows it without changing it.
    let umask = u32::from_str_radix(&status_field(daemon.pid(), "Umask"), 8).expect("an octal umask");
    let output = dir.path().join("out.log");
    let (id, _) = created(&daemon.request(create_sh(&output, "exit 0")));
    let mode = std::fs::metadata(&output).expect("created before the answer").permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask, "umask {umask:o}");
    wait_exited(&daemon, id);
    std::fs::write(&output, "old contents").unwrap();
    let (id, _) = created(&daemon.request(create_sh(&output, "exit 0")));
    assert_eq!(wait_exited(&daemon, id)["final_offset"], 0);
    assert_eq!(read(&output), "", "an existing file is truncated");
}

#[test]
fn a_symlinked_or_unopenable_output_path_fails_and_starts_nothing() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let script = format!("echo started > {}", marker.display());
    let target = dir.path().join("target");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let refused = daemon.request(create_sh(&link, &script));
    let expected = format!("cannot open output file {}: its final component is a symbolic link", link.display());
    assert_eq!(message(&refused), expected);
    assert_eq!(read(&target), "keep", "the target is untouched");
    let missing = dir.path().join("missing").join("out.log");
    let refused = daemon.request(create_sh(&missing, &script));
    let error = message(&refused);
    let prefix = format!("cannot open output file {}: ", missing.display());
    assert!(error.starts_with(&prefix) && error.contains("No such file"), "{error}");
    assert!(!dir.path().join("missing").exists());
    assert_eq!(listed_pipes(&daemon), Vec::<u64>::new(), "nothing started");
    assert!(!marker.exists(), "nothing ran");
}

#[test]
fn a_missing_program_fails_after_the_output_file_was_opened() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.log");
    let refused = daemon.request(create_pipe(&output, "/nonexistent/program", &[], json!({"PATH": PATH})));
    let error = message(&refused);
    assert!(error.starts_with("cannot start /nonexistent/program"), "{error}");
    assert_eq!(read(&output), "", "the file was created before the spawn failed");
    assert_eq!(listed_pipes(&daemon), Vec::<u64>::new(), "nothing is listed");
}

#[test]
fn stdout_and_stderr_reach_the_file_in_order() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.log");
    let (id, _) = created(&daemon.request(create_sh(&output, "echo 1; echo 2 >&2; echo 3; echo 4 >&2")));
    let exited = wait_exited(&daemon, id);
    assert_eq!((exited["exit_code"].as_u64(), exited["output_lines"].as_u64()), (Some(0), Some(4)), "{exited}");
    assert_eq!(read(&output), "1\n2\n3\n4\n");
    assert_eq!(exited["final_offset"], 8);
}

#[test]
fn the_child_gets_exactly_env_and_nothing_of_the_daemons() {
    const LEAK: &str = "OPENCODE_PTY_SPEC_DAEMON_ONLY";
    let daemon = Daemon::start_with_env(&[(LEAK, "leaked")]);
    let _owner = daemon.own();
    let environ = std::fs::read(format!("/proc/{}/environ", daemon.pid())).expect("the daemon's environ");
    let marker = format!("{LEAK}=leaked");
    assert!(environ.split(|&b| b == 0).any(|var| var == marker.as_bytes()), "the daemon has {LEAK}");
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.log");
    let (id, _) = created(&daemon.request(create_pipe(&output, "/usr/bin/env", &[], json!({"A": "1"}))));
    assert_eq!(wait_exited(&daemon, id)["exit_code"], 0);
    assert_eq!(read(&output), "A=1\n", "exactly env: no {LEAK}, no PATH, no TERM");
}

#[test]
fn the_child_starts_with_an_empty_signal_mask() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    // The daemon blocks SIGTERM and SIGINT itself, so an empty mask in the child proves the reset.
    let daemon_mask = u64::from_str_radix(&status_field(daemon.pid(), "SigBlk"), 16).unwrap();
    assert_ne!(daemon_mask, 0, "the daemon blocks its termination signals");
    let dir = tempfile::tempdir().unwrap();
    // grep changes no signal state (a shell might clear its mask at startup and hide a leak).
    let status = dir.path().join("status.log");
    let (id, _) =
        created(&daemon.request(create_pipe(&status, "/bin/grep", &["^SigBlk", "/proc/self/status"], json!({}))));
    assert_eq!(wait_exited(&daemon, id)["exit_code"], 0);
    assert_eq!(read(&status), "SigBlk:\t0000000000000000\n");
    let killed = dir.path().join("kill.log");
    let (id, _) = created(&daemon.request(create_sh(&killed, "kill -TERM $$; sleep 5")));
    let exited = wait_exited(&daemon, id);
    assert_eq!((exited["exit_code"].clone(), exited["signal"].clone()), (Value::Null, json!("SIGTERM")), "{exited}");
}

#[test]
fn the_child_gets_default_dispositions_even_for_signals_the_daemon_inherited_ignored() {
    use nix::sys::signal::Signal::{self, SIGPIPE, SIGUSR1, SIGWINCH};
    // SPEC Q4: default signal dispositions. The daemon ignores SIGPIPE itself (Rust does), and whoever started it
    // may have left others ignored, which `exec` keeps: here SIGUSR1 and SIGWINCH.
    let daemon = Daemon::start_ignoring(&["USR1", "WINCH"]);
    let _owner = daemon.own();
    let ignored = u64::from_str_radix(&status_field(daemon.pid(), "SigIgn"), 16).unwrap();
    let bit = |signal: Signal| 1u64 << (signal as i32 - 1);
    let expected = bit(SIGUSR1) | bit(SIGWINCH) | bit(SIGPIPE);
    assert_eq!(ignored & expected, expected, "the daemon runs with them ignored: {ignored:016x}");
    let dir = tempfile::tempdir().unwrap();
    let status = dir.path().join("status.log");
    let (id, _) =
        created(&daemon.request(create_pipe(&status, "/bin/grep", &["^SigIgn", "/proc/self/status"], json!({}))));
    assert_eq!(wait_exited(&daemon, id)["exit_code"], 0);
    let line = read(&status);
    let child = line.strip_prefix("SigIgn:").map(str::trim).expect("the SigIgn line");
    let child = u64::from_str_radix(child, 16).unwrap();
    // glibc's posix_spawn (how std starts the daemon here) leaves its internal signals 32 and 33 ignored, and
    // glibc's sigaction refuses to touch them; they are outside this check.
    let glibc_internal = (1u64 << 31) | (1u64 << 32);
    assert_eq!(child & !glibc_internal, 0, "the child ignores {child:016x}; the daemon ignores {ignored:016x}");
}

#[test]
fn output_lines_always_match_the_tail_under_concurrent_get() {
    const LINES: u64 = 100_000;
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.log");
    // Builtins only: a shell loop writes line by line, slowly enough for many samples in between.
    let script = format!("i=0; while [ $i -lt {LINES} ]; do echo $i; i=$((i+1)); done");
    let (id, _) = created(&daemon.request(create_sh(&output, &script)));
    // Each sampler returns how many of its samples were taken while the child was still printing.
    let sample = || {
        let deadline = Instant::now() + WAIT;
        let mut midway = 0usize;
        loop {
            let process = get(&daemon, id);
            let tail = process["output_tail"].as_u64().unwrap();
            let lines = process["pipe"]["output_lines"].as_u64().unwrap();
            let mut prefix = Vec::new();
            std::fs::File::open(&output).unwrap().take(tail).read_to_end(&mut prefix).unwrap();
            assert_eq!(prefix.len() as u64, tail, "the file holds at least the tail");
            let counted = prefix.iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(lines, counted, "output_lines for output_tail {tail}");
            if process["lifecycle"]["status"] != "running" {
                return midway;
            }
            midway += usize::from(lines > 0 && lines < LINES);
            assert!(Instant::now() < deadline, "still running after {WAIT:?}");
        }
    };
    let midway: usize = std::thread::scope(|s| {
        let samplers: Vec<_> = (0..2).map(|_| s.spawn(sample)).collect();
        samplers.into_iter().map(|t| t.join().unwrap()).sum()
    });
    assert!(midway > 0, "no sample was taken while the child was printing");
    let exited = wait_exited(&daemon, id);
    assert_eq!(exited["output_lines"], LINES, "{exited}");
    assert_eq!(file_len(&output), exited["final_offset"].as_u64().unwrap());
    assert_eq!(get(&daemon, id)["pipe"]["output_lines"], LINES);
}

#[test]
fn a_write_error_is_reported_and_the_process_and_its_tail_go_on() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let script = format!("echo first; while [ ! -e {} ]; do sleep 0.02; done; echo second", go.display());
    let (id, _) = created(&daemon.request(create_sh(Path::new("/dev/full"), &script)));
    let process = eventually("the write error", || {
        Some(get(&daemon, id)).filter(|p| p["pipe"].get("output_error").is_some_and(|e| !e.is_null()))
    });
    let error = process["pipe"]["output_error"].as_str().expect("a message").to_owned();
    assert!(error.contains("No space left on device"), "{error}");
    assert_eq!(process["lifecycle"], json!({"status": "running"}), "the process keeps running");
    assert_eq!((process["output_tail"].as_u64(), process["pipe"]["output_lines"].as_u64()), (Some(6), Some(0)));
    std::fs::write(&go, "").unwrap();
    let exited = wait_exited(&daemon, id);
    assert_eq!(exited["exit_code"], 0, "{exited}");
    assert_eq!((exited["final_offset"].as_u64(), exited["output_lines"].as_u64()), (Some(13), Some(0)));
    assert_eq!(exited["output_error"], error.as_str());
    let process = get(&daemon, id);
    assert_eq!((process["output_tail"].as_u64(), process["pipe"]["output_lines"].as_u64()), (Some(13), Some(0)));
    assert_eq!(process["pipe"]["output_error"], error.as_str());
}

#[test]
fn a_leftover_writer_delays_exited_by_at_most_the_linger_and_then_gets_sigpipe() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.log");
    let pidfile = dir.path().join("writer.pid");
    let script = format!("(sleep 1; while :; do echo x; sleep 0.1; done) & echo $! > {}; echo hi", pidfile.display());
    let started = Instant::now();
    let (id, _) = created(&daemon.request(create_sh(&output, &script)));
    let exited = wait_exited(&daemon, id);
    let elapsed = started.elapsed();
    assert!(elapsed >= LINGER && elapsed < LINGER + Duration::from_secs(4), "exited after {elapsed:?}");
    assert_eq!(exited["exit_code"], 0, "{exited}");
    assert_eq!(file_len(&output), exited["final_offset"].as_u64().unwrap(), "the file was closed before exited");
    assert!(read(&output).starts_with("hi\n"));
    // The background writer's next echo after the linger hits the closed pipe. It was reparented, so whoever
    // adopted it reaps it; a zombie counts as dead.
    let writer = pid_from(&pidfile);
    let _cleanup = KillOnDrop(writer);
    eventually("the writer to die of SIGPIPE", || matches!(proc_state(writer), None | Some('Z')).then_some(()));
}

#[test]
fn exited_at_is_null_while_running_and_then_matches_the_exited_event() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let script = format!("while [ ! -e {} ]; do sleep 0.02; done; exit 3", go.display());
    let (id, _) = created(&daemon.request(create_sh(&dir.path().join("out.log"), &script)));
    let running = get(&daemon, id);
    assert_eq!(
        (running["exited_at"].clone(), running["lifecycle"].clone()),
        (Value::Null, json!({"status": "running"}))
    );
    let mut waiting = start_wait(&daemon, id);
    std::fs::write(&go, "").unwrap();
    let exited = recv(&mut waiting).expect("exited");
    assert_eq!(exited["type"], "exited", "{exited}");
    let exited_at = exited["exited_at"].as_u64().expect("exited_at");
    let after = get(&daemon, id);
    assert_eq!(after["exited_at"].as_u64(), Some(exited_at));
    assert!(exited_at >= after["started_at"].as_u64().unwrap(), "{after}");
    assert_eq!(after["lifecycle"], json!({"status": "exited", "exit_code": 3}));
}

#[test]
fn an_exited_process_stays_a_listed_zombie_until_terminate() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let (id, pid) = created(&daemon.request(create_sh(&dir.path().join("out.log"), "exit 0")));
    wait_exited(&daemon, id);
    assert_eq!(listed_pipes(&daemon), [id]);
    assert_eq!(proc_state(pid), Some('Z'), "the child is not reaped before terminate");
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    assert!(!process_exists(pid), "terminate reaps the child");
    assert_eq!(listed_pipes(&daemon), Vec::<u64>::new());
    assert_eq!(message(&daemon.request(json!({"op": "get", "id": id}))), format!("process {id} not found"));
}

#[test]
fn terminate_never_waits_on_a_descendant_that_left_the_group() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("escaped.pid");
    // The escaped process writes its own pid, so it is right whether or not setsid forks.
    let script = format!("setsid sh -c 'echo $$ > {}; exec sleep 60' & sleep 60", pidfile.display());
    let (id, pid) = created(&daemon.request(create_sh(&dir.path().join("out.log"), &script)));
    let escaped = pid_from(&pidfile);
    let cleanup = KillOnDrop(escaped);
    let started = Instant::now();
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "terminate took {took:?}");
    assert!(!process_exists(pid), "the child is killed and reaped");
    assert_eq!(threads_named(daemon.pid(), "opencode-pty-pipe"), 0, "both threads were joined");
    assert!(matches!(proc_state(escaped), Some(state) if state != 'Z'), "the escaped descendant still runs");
    drop(cleanup);
    eventually("the escaped descendant to die", || matches!(proc_state(escaped), None | Some('Z')).then_some(()));
}

#[test]
fn the_metadata_of_all_pipe_processes_is_bounded_so_list_always_fits_one_frame() {
    /// Attempts, each with metadata near the per-process limit: together far over one frame.
    const ATTEMPTS: usize = 9;
    /// Each one's metadata: four fit in the total, five do not.
    const EACH: usize = 950 * 1024;
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let blob = "x".repeat(EACH);
    let request = |i: usize| {
        let mut request = create_sh(&dir.path().join(format!("out-{i}.log")), "exec sleep 60");
        request["metadata"] = json!({"blob": blob});
        request
    };
    let size = serde_json::to_string(&json!({"blob": blob})).unwrap().len();
    let answers: Vec<Value> = (0..ATTEMPTS).map(|i| daemon.request(request(i))).collect();
    let ids: Vec<u64> = answers.iter().filter(|a| a["type"] == "created").map(|a| created(a).0).collect();
    assert_eq!(ids.len(), MAX_TOTAL_METADATA_BYTES / size, "as many as fit in the total");
    let expected = format!(
        "metadata would bring the daemon's pipe processes to {} bytes, over the {MAX_TOTAL_METADATA_BYTES}-byte total",
        (ids.len() + 1) * size
    );
    for refused in &answers[ids.len()..] {
        assert_eq!(message(refused), expected);
    }
    assert_eq!(listed_pipes(&daemon), ids, "list answers in one frame");
    // Terminating one releases its share.
    assert_eq!(daemon.request(json!({"op": "terminate", "id": ids[0]}))["type"], "ok");
    created(&daemon.request(request(ATTEMPTS)));
}

#[test]
fn the_daemon_never_deletes_output_files() {
    let mut daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.log");
    let (id, _) = created(&daemon.request(create_sh(&first, "echo first")));
    wait_exited(&daemon, id);
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    assert_eq!(read(&first), "first\n", "terminate keeps the file");
    let second = dir.path().join("second.log");
    let (id, _) = created(&daemon.request(create_sh(&second, "echo second; exec sleep 60")));
    eventually("the output", || (get(&daemon, id)["output_tail"] == 7).then_some(()));
    assert_eq!(daemon.request(json!({"op": "shutdown"}))["type"], "ok");
    assert!(daemon.wait_exit().success());
    assert_eq!(read(&first), "first\n", "shutdown keeps the files");
    assert_eq!(read(&second), "second\n");
}

#[test]
fn signal_reaches_the_whole_process_group() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("background.pid");
    let script = format!("sleep 60 & echo $! > {}; wait", pidfile.display());
    let (id, pid) = created(&daemon.request(create_sh(&dir.path().join("out.log"), &script)));
    let background = pid_from(&pidfile);
    let _cleanup = KillOnDrop(background);
    assert_eq!(daemon.request(json!({"op": "signal", "id": id, "signal": "SIGTERM"}))["type"], "ok");
    let exited = wait_exited(&daemon, id);
    assert_eq!((exited["exit_code"].clone(), exited["signal"].clone()), (Value::Null, json!("SIGTERM")), "{exited}");
    assert_eq!(proc_state(pid), Some('Z'), "the shell is dead and not yet reaped");
    // A daemon that only signalled the child's pid would leave the background sleep running for a minute.
    wait_dead("the background sleep to die of the group's SIGTERM", background);
    assert_eq!(get(&daemon, id)["lifecycle"], json!({"status": "exited", "exit_code": null, "signal": "SIGTERM"}));
}

#[test]
fn signal_after_the_exit_reaches_what_is_left_of_the_group() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("leftover.pid");
    // The leftover holds nothing of the output pipe, so `exited` comes without the linger.
    let script = format!("sleep 60 >/dev/null 2>&1 & echo $! > {}; exit 0", pidfile.display());
    let (id, _) = created(&daemon.request(create_sh(&dir.path().join("out.log"), &script)));
    let leftover = pid_from(&pidfile);
    let _cleanup = KillOnDrop(leftover);
    assert_eq!(wait_exited(&daemon, id)["exit_code"], 0);
    assert!(matches!(proc_state(leftover), Some(state) if state != 'Z'), "the leftover still runs after the exit");
    // The exited shell is an unreaped zombie, so its process group still exists and still holds the leftover. A
    // daemon that refused to signal an exited process, or signalled only the zombie's pid, would leave it running.
    assert_eq!(daemon.request(json!({"op": "signal", "id": id, "signal": "SIGKILL"}))["type"], "ok");
    wait_dead("the leftover to die of the group's SIGKILL", leftover);
    assert_eq!(get(&daemon, id)["lifecycle"], json!({"status": "exited", "exit_code": 0}), "the exit is kept");
}

#[test]
fn terminate_kills_the_other_members_of_the_group() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("background.pid");
    let script = format!("sleep 60 & echo $! > {}; sleep 60", pidfile.display());
    let (id, pid) = created(&daemon.request(create_sh(&dir.path().join("out.log"), &script)));
    let background = pid_from(&pidfile);
    let _cleanup = KillOnDrop(background);
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
    assert!(!process_exists(pid), "the child is killed and reaped");
    // A daemon that only killed the child's pid would leave the background sleep running for a minute.
    wait_dead("the background sleep to die with its group", background);
}

#[test]
fn the_childs_stdin_is_dev_null_even_when_the_daemons_is_not() {
    let daemon = Daemon::start_with_stdin_data(b"leaked\n");
    let _owner = daemon.own();
    let daemon_stdin = std::fs::read_link(format!("/proc/{}/fd/0", daemon.pid())).expect("the daemon's fd 0");
    assert!(daemon_stdin.to_string_lossy().starts_with("pipe:"), "the daemon reads a pipe: {daemon_stdin:?}");
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("cat.log");
    // With the daemon's stdin, cat would copy "leaked" and then block on the pipe that stays open, so `exited`
    // would not come within the connection's read timeout.
    let (id, _) = created(&daemon.request(create_pipe(&output, "/bin/cat", &[], json!({}))));
    let exited = wait_exited(&daemon, id);
    assert_eq!((exited["exit_code"].as_u64(), exited["final_offset"].as_u64()), (Some(0), Some(0)), "{exited}");
    assert_eq!(read(&output), "");
    let (id, pid) =
        created(&daemon.request(create_pipe(&dir.path().join("sleep.log"), "/bin/sleep", &["60"], json!({}))));
    let stdin = std::fs::read_link(format!("/proc/{pid}/fd/0")).expect("the child's fd 0");
    assert_eq!(stdin, Path::new("/dev/null"));
    assert_eq!(daemon.request(json!({"op": "terminate", "id": id}))["type"], "ok");
}

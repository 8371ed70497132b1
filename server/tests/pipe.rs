//! Pipe processes in-process: validation before the file system, the output file, the child's environment and
//! signals, line counting, write errors, the one-second linger, zombies, terminate, wait, signal, metadata,
//! replay and subscribe, and the service's registry of both kinds. Every wait is bounded; no process is left.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;
use opencode_pty::ServiceError;
use opencode_pty::pipe::{LINGER, PipeHandle};
use opencode_pty::terminal::Event;
use opencode_pty_protocol::{Lifecycle, MAX_METADATA_BYTES, Mode, Response, Signal};
use serde_json::{Map, Value, json};
use support::{WAIT, eventually, exited_pipe, pipe_sh, pipe_spec, process_exists, service, sh};

fn read(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).expect("read the file")).into_owned()
}

/// `(exit_code, signal, final_offset, output_lines, output_error, exited_at)` of an `exited`.
fn fields(response: &Response) -> (Option<u32>, Option<String>, u64, Option<u64>, Option<String>, u64) {
    match response.clone() {
        Response::Exited { exit_code, signal, final_offset, output_lines, output_error, exited_at } => {
            (exit_code, signal, final_offset, output_lines, output_error, exited_at)
        }
        other => panic!("expected exited, got {other:?}"),
    }
}

/// The state letter of `/proc/<pid>/stat` (`Z` for a zombie), or `None` once the process is gone.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// A pid a test script wrote to `path`, once it is there.
fn pid_from(path: &Path) -> u32 {
    eventually(|| std::fs::read_to_string(path).ok()?.trim().parse().ok())
}

#[test]
fn a_created_pipe_process_describes_itself() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let mut spec = pipe_sh(dir.path(), "exec sleep 30");
    spec.metadata = Map::from_iter([("tool".to_owned(), json!("bash"))]);
    let info = service.create_pipe(spec.clone()).expect("create");
    assert_eq!((info.mode, info.pty.is_none(), info.lifecycle.clone()), (Mode::Pipe, true, Lifecycle::Running));
    assert_eq!(info.command, ["sh", "-c", "exec sleep 30"]);
    assert_eq!((info.cwd.as_str(), info.group_id.as_str(), info.exited_at), ("/", "test", None));
    assert_eq!((info.output_head, info.output_tail), (0, 0));
    let pipe = info.pipe.clone().expect("a pipe object");
    assert_eq!(pipe.output_path, spec.output_path.display().to_string());
    assert_eq!((pipe.output_lines, pipe.output_error, pipe.metadata), (0, None, spec.metadata.clone()));
    let json = serde_json::to_value(&info).unwrap();
    assert!(json.get("pty").is_none() && json["pipe"].get("output_error").is_none(), "{json}");
    assert_eq!(service.get(info.id).unwrap(), info);
    service.terminate(info.id).expect("terminate");
}

#[test]
fn a_rejected_request_creates_and_truncates_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let fresh = dir.path().join("fresh");
    let kept = dir.path().join("kept");
    std::fs::write(&kept, "keep").unwrap();
    let oversized = Map::from_iter([("big".to_owned(), Value::String("x".repeat(MAX_METADATA_BYTES)))]);
    for path in [&fresh, &kept] {
        let base = || {
            let mut spec = pipe_sh(dir.path(), "echo started");
            spec.output_path = path.clone();
            spec
        };
        let (mut relative_cwd, mut relative_output, mut too_big, mut no_program) = (base(), base(), base(), base());
        relative_cwd.cwd = "tmp".into();
        relative_output.output_path = "out.log".into();
        too_big.metadata = oversized.clone();
        no_program.program = " ".into();
        let cases = [
            (relative_cwd, "cwd must be an absolute path (got tmp)".to_owned()),
            (relative_output, "output_path must be an absolute path (got out.log)".to_owned()),
            (too_big, format!("metadata is over the {MAX_METADATA_BYTES}-byte limit")),
            (no_program, "program cannot be empty".to_owned()),
        ];
        for (spec, message) in cases {
            assert_eq!(service.create_pipe(spec).unwrap_err().to_string(), message);
        }
    }
    assert!(!fresh.exists(), "a rejected request creates no file");
    assert_eq!(read(&kept), "keep", "a rejected request truncates no file");
    assert!(service.list(Mode::Pipe).is_empty());
}

#[test]
fn the_output_file_is_created_with_0666_minus_the_umask_and_truncated() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    // /proc shows the umask without changing it; umask(2) itself can only be read by setting it.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let umask = status.lines().find_map(|l| l.strip_prefix("Umask:")).map(|m| u32::from_str_radix(m.trim(), 8));
    let umask = umask.map_or_else(
        || {
            let old = nix::sys::stat::umask(nix::sys::stat::Mode::empty());
            nix::sys::stat::umask(old);
            old.bits()
        },
        |m| m.expect("an octal umask"),
    );
    let spec = pipe_sh(dir.path(), "exit 0");
    let info = service.create_pipe(spec.clone()).expect("create");
    let mode = std::fs::metadata(&spec.output_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask);
    exited_pipe(&service.get_pipe(info.id).unwrap());
    // An existing file is truncated.
    std::fs::write(&spec.output_path, "old contents").unwrap();
    let info = service.create_pipe(spec.clone()).expect("create");
    exited_pipe(&service.get_pipe(info.id).unwrap());
    assert_eq!(read(&spec.output_path), "");
}

#[test]
fn a_symlink_or_an_unopenable_path_fails_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let marker = dir.path().join("started");
    let script = format!("touch {}", marker.display());
    let target = dir.path().join("target");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut spec = pipe_sh(dir.path(), &script);
    spec.output_path = link.clone();
    let error = service.create_pipe(spec).unwrap_err().to_string();
    let expected = format!("cannot open output file {}: its final component is a symbolic link", link.display());
    assert_eq!(error, expected);
    assert_eq!(read(&target), "keep");
    let mut spec = pipe_sh(dir.path(), &script);
    spec.output_path = dir.path().join("missing").join("out.log");
    let error = service.create_pipe(spec).unwrap_err().to_string();
    assert!(error.starts_with("cannot open output file") && error.contains("No such file"), "{error}");
    assert!(service.list(Mode::Pipe).is_empty());
    assert!(!marker.exists(), "nothing ran");
}

#[test]
fn a_missing_program_or_cwd_fails_after_the_file_was_opened() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let mut spec = pipe_sh(dir.path(), "true");
    spec.program = "/nonexistent/program".into();
    let error = service.create_pipe(spec.clone()).unwrap_err();
    assert!(matches!(error, ServiceError::Spawn { .. }), "{error:?}");
    assert!(error.to_string().starts_with("cannot start /nonexistent/program: "), "{error}");
    assert_eq!(read(&spec.output_path), "", "the file was created before the spawn failed");
    let mut spec = pipe_sh(dir.path(), "true");
    spec.cwd = dir.path().join("no-such-dir");
    let error = service.create_pipe(spec).unwrap_err();
    assert!(matches!(error, ServiceError::Spawn { .. }) && error.to_string().contains("no-such-dir"), "{error}");
    assert!(service.list(Mode::Pipe).is_empty());
}

#[test]
fn stdout_and_stderr_share_one_ordered_pipe_and_the_file_matches_the_exit() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let spec = pipe_sh(dir.path(), "echo 1; echo 2 >&2; echo 3; echo 4 >&2");
    let info = service.create_pipe(spec.clone()).expect("create");
    let (exit_code, signal, final_offset, lines, error, _) = fields(&exited_pipe(&service.get_pipe(info.id).unwrap()));
    assert_eq!((exit_code, signal, final_offset, lines, error), (Some(0), None, 8, Some(4), None));
    assert_eq!(read(&spec.output_path), "1\n2\n3\n4\n");
    assert_eq!(std::fs::metadata(&spec.output_path).unwrap().len(), final_offset);
}

#[test]
fn the_child_gets_exactly_env() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let mut spec = pipe_spec(dir.path(), "/usr/bin/env", &[]);
    spec.env = [("A".to_owned(), "1".to_owned())].into();
    let info = service.create_pipe(spec.clone()).expect("create");
    exited_pipe(&service.get_pipe(info.id).unwrap());
    assert_eq!(read(&spec.output_path), "A=1\n");
}

#[test]
fn the_child_starts_with_an_empty_signal_mask() {
    use nix::sys::signal::{SigSet, Signal as Sig};
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    // Like the daemon: SIGTERM and SIGINT blocked in the spawning thread, whose mask a fork inherits.
    let blocked = SigSet::from_iter([Sig::SIGTERM, Sig::SIGINT]);
    blocked.thread_block().unwrap();
    // grep changes no signal state (some shells clear their mask at startup, which would hide a leak).
    let status = pipe_spec(dir.path(), "grep", &["^SigBlk", "/proc/self/status"]);
    let status = service.create_pipe(status);
    let mut spec = pipe_sh(dir.path(), "kill -TERM $$; sleep 5");
    spec.output_path = dir.path().join("kill.log");
    let killed = service.create_pipe(spec);
    blocked.thread_unblock().unwrap();
    exited_pipe(&service.get_pipe(status.expect("create").id).unwrap());
    assert_eq!(read(&dir.path().join("out.log")), "SigBlk:\t0000000000000000\n");
    let exited = exited_pipe(&service.get_pipe(killed.expect("create").id).unwrap());
    assert_eq!(fields(&exited).0, None);
    assert_eq!(fields(&exited).1.as_deref(), Some("SIGTERM"));
}

#[test]
fn output_lines_always_match_the_tail() {
    const LINES: u64 = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let script = format!("i=0; while [ $i -lt {LINES} ]; do echo line $i; i=$((i+1)); done");
    let spec = pipe_sh(dir.path(), &script);
    let handle = service.get_pipe(service.create_pipe(spec.clone()).expect("create").id).unwrap();
    let done = handle.wait();
    let sample = || {
        let mut samples = 0;
        while done.is_empty() {
            let info = handle.info();
            let (tail, lines) = (info.output_tail, info.pipe.unwrap().output_lines);
            let bytes = std::fs::read(&spec.output_path).unwrap();
            assert!(bytes.len() as u64 >= tail, "the file is written before the tail advances");
            let counted = bytes[..tail as usize].iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(lines, counted, "lines for tail {tail}");
            samples += 1;
        }
        samples
    };
    let samples: usize = std::thread::scope(|s| {
        let others: Vec<_> = (0..2).map(|_| s.spawn(sample)).collect();
        others.into_iter().map(|t| t.join().unwrap()).sum()
    });
    let exited = done.recv_timeout(WAIT).expect("exited in time").expect("not terminated");
    let (_, _, final_offset, lines, _, _) = fields(&exited);
    assert_eq!(lines, Some(LINES));
    assert_eq!(std::fs::metadata(&spec.output_path).unwrap().len(), final_offset);
    assert_eq!(handle.info().pipe.unwrap().output_lines, LINES);
    assert!(samples > 0);
}

#[test]
fn a_write_error_stops_the_file_but_not_the_process_or_the_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let go = dir.path().join("go");
    let script = format!("echo first; while [ ! -e {} ]; do sleep 0.02; done; echo second", go.display());
    let mut spec = pipe_sh(dir.path(), &script);
    spec.output_path = "/dev/full".into();
    let handle = service.get_pipe(service.create_pipe(spec).expect("create").id).unwrap();
    let info = eventually(|| Some(handle.info()).filter(|i| i.pipe.as_ref().unwrap().output_error.is_some()));
    let error = info.pipe.as_ref().unwrap().output_error.clone().unwrap();
    assert!(error.contains("No space left on device"), "{error}");
    assert_eq!((info.output_tail, info.pipe.unwrap().output_lines, info.lifecycle), (6, 0, Lifecycle::Running));
    std::fs::write(&go, "").unwrap();
    let (exit_code, _, final_offset, lines, output_error, _) = fields(&exited_pipe(&handle));
    assert_eq!((exit_code, final_offset, lines, output_error), (Some(0), 13, Some(0), Some(error)));
}

#[test]
fn leftover_writers_delay_the_exit_by_at_most_the_linger_and_then_get_sigpipe() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let pidfile = dir.path().join("writer.pid");
    let script = format!("(sleep 1; while :; do echo x; sleep 0.1; done) & echo $! > {}; echo hi", pidfile.display());
    let spec = pipe_sh(dir.path(), &script);
    let created = Instant::now();
    let handle = service.get_pipe(service.create_pipe(spec.clone()).expect("create").id).unwrap();
    let exited = exited_pipe(&handle);
    let elapsed = created.elapsed();
    assert!(elapsed >= LINGER && elapsed < LINGER + Duration::from_secs(3), "exited after {elapsed:?}");
    let (exit_code, _, final_offset, _, _, _) = fields(&exited);
    assert_eq!(exit_code, Some(0));
    assert_eq!(std::fs::metadata(&spec.output_path).unwrap().len(), final_offset, "the file was closed");
    assert!(read(&spec.output_path).starts_with("hi\n"));
    // The background writer's next `echo` hits the closed pipe.
    let writer = pid_from(&pidfile);
    eventually(|| matches!(proc_state(writer), None | Some('Z')).then_some(()));
}

#[test]
fn exited_at_is_null_until_the_exit_and_never_before_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let go = dir.path().join("go");
    let spec = pipe_sh(dir.path(), &format!("while [ ! -e {} ]; do sleep 0.02; done; exit 3", go.display()));
    let info = service.create_pipe(spec).expect("create");
    let handle = service.get_pipe(info.id).unwrap();
    assert_eq!((handle.info().exited_at, handle.info().lifecycle), (None, Lifecycle::Running));
    std::fs::write(&go, "").unwrap();
    let (_, _, _, _, _, exited_at) = fields(&exited_pipe(&handle));
    let after = handle.info();
    assert_eq!(after.exited_at, Some(exited_at));
    assert!(exited_at >= after.started_at);
    assert_eq!(after.lifecycle, Lifecycle::Exited { exit_code: Some(3), signal: None });
}

#[test]
fn an_exited_process_stays_listed_as_a_zombie_until_terminate() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let info = service.create_pipe(pipe_sh(dir.path(), "exit 0")).expect("create");
    let pid = info.pid.unwrap();
    exited_pipe(&service.get_pipe(info.id).unwrap());
    assert_eq!(service.list(Mode::Pipe).iter().map(|p| p.id).collect::<Vec<_>>(), [info.id]);
    assert_eq!(proc_state(pid), Some('Z'), "the child is not reaped before terminate");
    service.terminate(info.id).expect("terminate");
    assert!(!process_exists(pid), "terminate reaps the child");
    assert!(service.list(Mode::Pipe).is_empty());
    assert_eq!(service.terminate(info.id).unwrap_err(), ServiceError::NotFound(info.id));
}

#[test]
fn terminate_kills_the_group_and_never_waits_on_a_descendant_that_left_it() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let pidfile = dir.path().join("escaped.pid");
    let script = format!("setsid sh -c 'echo $$ > {}; exec sleep 60' & exec sleep 60", pidfile.display());
    let info = service.create_pipe(pipe_sh(dir.path(), &script)).expect("create");
    let escaped = pid_from(&pidfile);
    let started = Instant::now();
    service.terminate(info.id).expect("terminate");
    let took = started.elapsed();
    let still_running = process_exists(escaped);
    // Leave nothing behind before asserting.
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(escaped as i32), nix::sys::signal::Signal::SIGKILL);
    eventually(|| matches!(proc_state(escaped), None | Some('Z')).then_some(()));
    assert!(took < Duration::from_secs(2), "terminate took {took:?}");
    assert!(still_running, "the escaped descendant was outside the group and still held the pipe");
    assert!(!process_exists(info.pid.unwrap()));
}

#[test]
fn waiters_get_exited_and_a_late_wait_is_answered_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let go = dir.path().join("go");
    let spec = pipe_sh(dir.path(), &format!("while [ ! -e {} ]; do sleep 0.02; done; echo done", go.display()));
    let handle = service.get_pipe(service.create_pipe(spec).expect("create").id).unwrap();
    let waiters: Vec<_> = (0..3).map(|_| handle.wait()).collect();
    assert!(waiters.iter().all(|w| w.is_empty()));
    std::fs::write(&go, "").unwrap();
    let answers: Vec<_> = waiters.iter().map(|w| w.recv_timeout(WAIT).expect("answered").expect("exited")).collect();
    assert!(answers.iter().all(|a| a == &answers[0]));
    assert_eq!(fields(&answers[0]).2, 5);
    let late = handle.wait();
    assert_eq!(late.try_recv().expect("answered at once").expect("exited"), answers[0]);
    for waiter in waiters.iter().chain([&late]) {
        assert_eq!(waiter.recv_timeout(WAIT), Err(RecvTimeoutError::Disconnected), "one answer each");
    }
}

#[test]
fn terminate_answers_waiters_terminated_and_shutdown_just_disconnects_them() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let first = service.create_pipe(pipe_sh(dir.path(), "exec sleep 30")).expect("create");
    let waiter = service.get_pipe(first.id).unwrap().wait();
    service.terminate(first.id).expect("terminate");
    let answer = waiter.recv_timeout(WAIT).expect("answered");
    assert_eq!(answer.unwrap_err().to_string(), "terminated");
    let second = service.create_pipe(pipe_sh(dir.path(), "exec sleep 30")).expect("create");
    let waiter = service.get_pipe(second.id).unwrap().wait();
    service.shutdown();
    assert_eq!(waiter.recv_timeout(WAIT), Err(RecvTimeoutError::Disconnected));
    assert!(!process_exists(second.pid.unwrap()));
}

#[test]
fn signal_reaches_the_process_and_keeps_it_listed() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let info = service.create_pipe(pipe_sh(dir.path(), "sleep 30; echo never")).expect("create");
    let handle = service.get_pipe(info.id).unwrap();
    handle.signal(Signal::Sigterm).expect("signal");
    let (exit_code, signal, ..) = fields(&exited_pipe(&handle));
    assert_eq!((exit_code, signal.as_deref()), (None, Some("SIGTERM")));
    assert_eq!(service.list(Mode::Pipe).len(), 1, "still listed");
    handle.signal(Signal::Sigkill).expect("signalling an exited process is allowed");
    service.terminate(info.id).unwrap();
    assert_eq!(handle.signal(Signal::Sigint).unwrap_err(), ServiceError::NotFound(info.id));
}

#[test]
fn set_metadata_replaces_it_within_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let info = service.create_pipe(pipe_sh(dir.path(), "exec sleep 30")).expect("create");
    let handle = service.get_pipe(info.id).unwrap();
    let metadata = Map::from_iter([("b".to_owned(), json!([1, 2]))]);
    handle.set_metadata(metadata.clone()).expect("set");
    assert_eq!(service.get(info.id).unwrap().pipe.unwrap().metadata, metadata);
    let oversized = Map::from_iter([("big".to_owned(), Value::String("x".repeat(MAX_METADATA_BYTES)))]);
    let error = handle.set_metadata(oversized).unwrap_err();
    assert_eq!(error.to_string(), format!("metadata is over the {MAX_METADATA_BYTES}-byte limit"));
    assert_eq!(handle.info().pipe.unwrap().metadata, metadata, "unchanged");
}

#[test]
fn replay_and_subscribe_give_offsets_only_then_exited() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let go = dir.path().join("go");
    let spec = pipe_sh(dir.path(), &format!("echo hello; while [ ! -e {} ]; do sleep 0.02; done", go.display()));
    let handle = service.get_pipe(service.create_pipe(spec).expect("create").id).unwrap();
    eventually(|| (handle.info().output_tail == 6).then_some(()));
    let read = handle.replay(2).unwrap();
    assert_eq!((read.requested, read.available, read.end, read.truncated, read.bytes.len()), (2, 6, 6, true, 0));
    assert!(!handle.replay(6).unwrap().truncated);
    assert_eq!(handle.replay(7).unwrap_err().to_string(), "requested offset 7 is beyond tail 6");
    let live = handle.subscribe(0).unwrap();
    let attached = |event: Event| match event {
        Event::Message(m) => match m.as_ref() {
            Response::Attached { requested_offset, available_offset, end_offset, truncated, replay_base64, .. } => {
                (*requested_offset, *available_offset, *end_offset, *truncated, replay_base64.clone())
            }
            other => panic!("expected attached, got {other:?}"),
        },
        other => panic!("expected a message, got {other:?}"),
    };
    assert_eq!(attached(live.recv_timeout(WAIT).unwrap()), (0, 6, 6, true, String::new()));
    std::fs::write(&go, "").unwrap();
    let exited = exited_pipe(&handle);
    let is_exited = |event: Event| matches!(event, Event::Message(m) if *m == exited);
    assert!(is_exited(live.recv_timeout(WAIT).unwrap()));
    assert_eq!(live.recv_timeout(WAIT), Err(RecvTimeoutError::Disconnected));
    let late = handle.subscribe(6).unwrap();
    assert_eq!(attached(late.recv_timeout(WAIT).unwrap()), (6, 6, 6, false, String::new()));
    assert!(is_exited(late.recv_timeout(WAIT).unwrap()));
    assert_eq!(late.recv_timeout(WAIT), Err(RecvTimeoutError::Disconnected));
}

#[test]
fn the_registry_keeps_both_kinds_in_creation_order_and_refuses_the_wrong_kind() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let first = service.create_pipe(pipe_sh(dir.path(), "exec sleep 30")).expect("create");
    let pty = service.create_pty(sh("sleep 30")).expect("create");
    let mut spec = pipe_sh(dir.path(), "exec sleep 30");
    spec.output_path = dir.path().join("second.log");
    let second = service.create_pipe(spec).expect("create");
    let ids = |mode| service.list(mode).iter().map(|p| p.id).collect::<Vec<_>>();
    assert_eq!(ids(Mode::Pipe), [first.id, second.id]);
    assert_eq!(ids(Mode::Pty), [pty.id]);
    assert_eq!(service.get(pty.id).unwrap().mode, Mode::Pty);
    assert_eq!(service.get(second.id).unwrap().mode, Mode::Pipe);
    let error = service.get_handle(first.id).unwrap_err().to_string();
    assert_eq!(error, format!("process {} is a pipe process; this request is only for PTYs", first.id));
    let error = service.get_pipe(pty.id).unwrap_err().to_string();
    assert_eq!(error, format!("process {} is a PTY; this request is only for pipe processes", pty.id));
    assert_eq!(service.get_pipe(99).unwrap_err(), ServiceError::NotFound(99));
    let pids: Vec<u32> = [&first, &pty, &second].iter().map(|p| p.pid.unwrap()).collect();
    drop(service);
    assert!(pids.iter().all(|&pid| !process_exists(pid)), "dropping the service stops every process");
}

/// Type check: a handle is shareable across threads, as the daemon needs.
#[allow(dead_code)]
fn handles_are_send_and_sync(handle: PipeHandle) -> impl Send + Sync {
    handle
}

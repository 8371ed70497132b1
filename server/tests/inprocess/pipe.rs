//! Pipe processes in-process: validation before the file system, the output file, the child's environment and
//! signals, line counting, write errors, the one-second linger (also with an output FIFO that stalls), zombies,
//! terminate, wait, signal, metadata and its daemon-wide budget, replay and subscribe, waiters and subscribers
//! that leave, a lost child and a failing reader, and the service's registry of both kinds. Every wait is
//! bounded; no process is left.

use crate::support;

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, TryRecvError};
use opencode_pty::Event;
use opencode_pty::ServiceError;
use opencode_pty::limits::{LINGER, MAX_PIPE_WAITERS, MAX_TOTAL_METADATA_BYTES};
use opencode_pty::{PipeHandle, stalled_output_error};
use opencode_pty_protocol::{Lifecycle, MAX_FRAME_BYTES, MAX_METADATA_BYTES, Mode, Response, Signal};
use serde_json::{Map, Value, json};
use support::{
    KillOnDrop, WAIT, eventually, exited_pipe, pid_from, pipe_sh, pipe_spec, proc_state, process_exists, service, sh,
    wait_dead, wait_or_kill,
};

/// How much later than the linger allows an `exited` may arrive in these tests (scheduling, a loaded machine).
const LINGER_SLACK: Duration = Duration::from_secs(3);

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
    exited_pipe(&service.pipe(info.id).unwrap());
    // An existing file is truncated.
    std::fs::write(&spec.output_path, "old contents").unwrap();
    let info = service.create_pipe(spec.clone()).expect("create");
    exited_pipe(&service.pipe(info.id).unwrap());
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
    let (exit_code, signal, final_offset, lines, error, _) = fields(&exited_pipe(&service.pipe(info.id).unwrap()));
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
    exited_pipe(&service.pipe(info.id).unwrap());
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
    exited_pipe(&service.pipe(status.expect("create").id).unwrap());
    assert_eq!(read(&dir.path().join("out.log")), "SigBlk:\t0000000000000000\n");
    let exited = exited_pipe(&service.pipe(killed.expect("create").id).unwrap());
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
    let handle = service.pipe(service.create_pipe(spec.clone()).expect("create").id).unwrap();
    let done = handle.wait();
    let sample = || {
        let deadline = Instant::now() + WAIT;
        let mut samples = 0;
        while done.receiver().is_empty() {
            assert!(Instant::now() < deadline, "still running after {WAIT:?}");
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
    let exited = done.receiver().recv_timeout(WAIT).expect("exited in time").expect("not terminated");
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
    let handle = service.pipe(service.create_pipe(spec).expect("create").id).unwrap();
    let info = eventually("the write error", || {
        Some(handle.info()).filter(|i| i.pipe.as_ref().unwrap().output_error.is_some())
    });
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
    let handle = service.pipe(service.create_pipe(spec.clone()).expect("create").id).unwrap();
    let exited = exited_pipe(&handle);
    let elapsed = created.elapsed();
    assert!(elapsed >= LINGER && elapsed < LINGER + Duration::from_secs(3), "exited after {elapsed:?}");
    let (exit_code, _, final_offset, _, _, _) = fields(&exited);
    assert_eq!(exit_code, Some(0));
    assert_eq!(std::fs::metadata(&spec.output_path).unwrap().len(), final_offset, "the file was closed");
    assert!(read(&spec.output_path).starts_with("hi\n"));
    // The background writer's next `echo` hits the closed pipe.
    let writer = pid_from(&pidfile);
    wait_dead("the writer to die of SIGPIPE", writer);
}

#[test]
fn exited_at_is_null_until_the_exit_and_never_before_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let go = dir.path().join("go");
    let spec = pipe_sh(dir.path(), &format!("while [ ! -e {} ]; do sleep 0.02; done; exit 3", go.display()));
    let info = service.create_pipe(spec).expect("create");
    let handle = service.pipe(info.id).unwrap();
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
    exited_pipe(&service.pipe(info.id).unwrap());
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
    let escaped = KillOnDrop(pid_from(&pidfile));
    let started = Instant::now();
    service.terminate(info.id).expect("terminate");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "terminate took {took:?}");
    let still_running = matches!(proc_state(escaped.0), Some(state) if state != 'Z');
    assert!(still_running, "the escaped descendant was outside the group and still held the pipe");
    assert!(!process_exists(info.pid.unwrap()));
    let pid = escaped.0;
    drop(escaped);
    wait_dead("the escaped descendant to die", pid);
}

#[test]
fn waiters_get_exited_and_a_late_wait_is_answered_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let go = dir.path().join("go");
    let spec = pipe_sh(dir.path(), &format!("while [ ! -e {} ]; do sleep 0.02; done; echo done", go.display()));
    let handle = service.pipe(service.create_pipe(spec).expect("create").id).unwrap();
    let waiters: Vec<_> = (0..3).map(|_| handle.wait()).collect();
    assert!(waiters.iter().all(|w| w.receiver().is_empty()));
    std::fs::write(&go, "").unwrap();
    let answers: Vec<_> =
        waiters.iter().map(|w| w.receiver().recv_timeout(WAIT).expect("answered").expect("exited")).collect();
    assert!(answers.iter().all(|a| a == &answers[0]));
    assert_eq!(fields(&answers[0]).2, 5);
    let late = handle.wait();
    assert_eq!(late.receiver().try_recv().expect("answered at once").expect("exited"), answers[0]);
    for waiter in waiters.iter().chain([&late]) {
        assert_eq!(waiter.receiver().recv_timeout(WAIT), Err(RecvTimeoutError::Disconnected), "one answer each");
    }
}

#[test]
fn terminate_answers_waiters_terminated_and_shutdown_just_disconnects_them() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let first = service.create_pipe(pipe_sh(dir.path(), "exec sleep 30")).expect("create");
    let waiter = service.pipe(first.id).unwrap().wait();
    service.terminate(first.id).expect("terminate");
    let answer = waiter.receiver().recv_timeout(WAIT).expect("answered");
    assert_eq!(answer.unwrap_err().to_string(), "terminated");
    let second = service.create_pipe(pipe_sh(dir.path(), "exec sleep 30")).expect("create");
    let waiter = service.pipe(second.id).unwrap().wait();
    service.shutdown();
    assert_eq!(waiter.receiver().recv_timeout(WAIT), Err(RecvTimeoutError::Disconnected));
    assert!(!process_exists(second.pid.unwrap()));
}

#[test]
fn signal_reaches_the_process_and_keeps_it_listed() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let info = service.create_pipe(pipe_sh(dir.path(), "sleep 30; echo never")).expect("create");
    let handle = service.pipe(info.id).unwrap();
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
    let handle = service.pipe(info.id).unwrap();
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
    let handle = service.pipe(service.create_pipe(spec).expect("create").id).unwrap();
    eventually("the output", || (handle.info().output_tail == 6).then_some(()));
    let read = handle.replay(2).unwrap();
    assert_eq!((read.requested, read.available, read.end, read.truncated, read.bytes.len()), (2, 6, 6, true, 0));
    assert!(!handle.replay(6).unwrap().truncated);
    assert_eq!(handle.replay(7).unwrap_err().to_string(), "requested offset 7 is beyond tail 6");
    let subscription = handle.subscribe(0).unwrap();
    let live = subscription.receiver();
    let attached = |event: Event| match event {
        Event::Message(m) => match m.response() {
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
    let is_exited = |event: Event| matches!(event, Event::Message(m) if *m.response() == exited);
    assert!(is_exited(live.recv_timeout(WAIT).unwrap()));
    assert_eq!(live.recv_timeout(WAIT), Err(RecvTimeoutError::Disconnected));
    let late = handle.subscribe(6).unwrap();
    let late = late.receiver();
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
    let error = service.pty(first.id).unwrap_err().to_string();
    assert_eq!(error, format!("process {} is a pipe process; this request is only for PTYs", first.id));
    let error = service.pipe(pty.id).unwrap_err().to_string();
    assert_eq!(error, format!("process {} is a PTY; this request is only for pipe processes", pty.id));
    assert_eq!(service.pipe(99).unwrap_err(), ServiceError::NotFound(99));
    let pids: Vec<u32> = [&first, &pty, &second].iter().map(|p| p.pid.unwrap()).collect();
    drop(service);
    assert!(pids.iter().all(|&pid| !process_exists(pid)), "dropping the service stops every process");
}

/// A new FIFO at `path`.
fn fifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
}

/// Opens `path` for writing (when `write`) or reading, with `O_NONBLOCK`, which never blocks on a FIFO.
fn open_nonblocking(path: &Path, write: bool) -> File {
    let mut options = std::fs::OpenOptions::new();
    options.read(!write).write(write).custom_flags(libc::O_NONBLOCK);
    options.open(path).expect("open without blocking")
}

#[test]
fn an_output_fifo_nobody_reads_delays_exited_by_at_most_the_linger() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let output = dir.path().join("out.fifo");
    fifo(&output);
    // A reader that never reads: without one the non-blocking open fails.
    let _reader = open_nonblocking(&output, false);
    // Far more than the output pipe (1 MiB), the reader's chunk and the FIFO hold together, so the child is
    // still writing when it is killed (with less it could finish, and start the linger, before the signal).
    let mut spec = pipe_sh(dir.path(), "exec head -c 64000000 /dev/zero");
    spec.output_path = output.clone();
    let handle = service.pipe(service.create_pipe(spec).expect("create").id).unwrap();
    // The FIFO is full once even one more byte does not fit (this test's bytes only help fill it). Then the
    // reader holds a chunk it cannot write, and the child is blocked with more to come.
    let mut filler = open_nonblocking(&output, true);
    eventually("the FIFO to fill", || match filler.write(b"x") {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Some(()),
        _ => None,
    });
    // Taken first: the linger starts only once the exit is seen, after the signal.
    let killed = Instant::now();
    handle.signal(Signal::Sigkill).expect("signal");
    let answer = handle.wait().receiver().recv_timeout(LINGER + LINGER_SLACK);
    let exited = answer.expect("exited despite the stalled file").expect("not terminated");
    assert!(killed.elapsed() >= LINGER, "the linger was waited out: {:?}", killed.elapsed());
    let (exit_code, signal, final_offset, _, output_error, _) = fields(&exited);
    assert_eq!((exit_code, signal.as_deref()), (None, Some("SIGKILL")));
    assert_eq!(output_error, Some(stalled_output_error()));
    let info = handle.info();
    assert_eq!(info.lifecycle, Lifecycle::Exited { exit_code: None, signal: Some("SIGKILL".into()) });
    assert_eq!((info.output_tail, info.pipe.unwrap().output_error), (final_offset, Some(stalled_output_error())));
}

#[test]
fn a_busy_pipe_and_a_slow_output_fifo_still_end_within_the_linger() {
    /// What the paced reader takes at a time, and how long it rests after each read: about 6 MB/s, far slower
    /// than `cat /dev/zero`, so the pipe always has data and the reader often waits for the FIFO.
    const PACE_BYTES: usize = 64 * 1024;
    const PACE_REST: Duration = Duration::from_millis(10);
    /// How long the child runs before it exits, leaving its busy background writer.
    const CHILD_RUNS: Duration = Duration::from_secs(1);
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let output = dir.path().join("out.fifo");
    fifo(&output);
    let mut reader = open_nonblocking(&output, false);
    let script = format!("cat /dev/zero & sleep {}; exit 0", CHILD_RUNS.as_secs());
    let mut spec = pipe_sh(dir.path(), &script);
    spec.output_path = output;
    let created = Instant::now();
    let handle = service.pipe(service.create_pipe(spec).expect("create").id).unwrap();
    // Paces the reading (the rest is rate, not synchronisation); ends at EOF, once the daemon closed the FIFO
    // (it opened it before the create answered, so EOF cannot come earlier), or after WAIT.
    let paced = std::thread::spawn(move || {
        let deadline = Instant::now() + WAIT;
        let mut buffer = vec![0u8; PACE_BYTES];
        let mut total = 0usize;
        while Instant::now() < deadline {
            match reader.read(&mut buffer) {
                Ok(0) => return total,
                Ok(n) => total += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("reading the FIFO: {e}"),
            }
            std::thread::sleep(PACE_REST);
        }
        total
    });
    let answer = handle.wait().receiver().recv_timeout(CHILD_RUNS + LINGER + LINGER_SLACK);
    let exited = answer.expect("exited although the pipe never ran dry").expect("not terminated");
    let elapsed = created.elapsed();
    assert!(elapsed >= CHILD_RUNS, "exited after {elapsed:?}");
    let (exit_code, _, final_offset, _, output_error, _) = fields(&exited);
    assert_eq!(exit_code, Some(0));
    assert!(output_error.is_none() || output_error == Some(stalled_output_error()), "{output_error:?}");
    assert!(final_offset > 0);
    // The daemon closed the FIFO, so the paced reader saw EOF.
    let taken = paced.join().expect("the paced reader");
    assert!(taken as u64 <= final_offset, "read {taken} of {final_offset}");
    service.terminate(handle.id()).expect("terminate");
}

#[test]
fn waiters_and_subscribers_that_left_never_fill_the_caps() {
    const CYCLES: usize = MAX_PIPE_WAITERS + 76;
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let handle = service.pipe(service.create_pipe(pipe_sh(dir.path(), "exec sleep 30")).unwrap().id).unwrap();
    for _ in 0..CYCLES {
        drop(handle.wait());
    }
    let waiter = handle.wait();
    assert_eq!(waiter.receiver().try_recv(), Err(TryRecvError::Empty), "held, not refused");
    for _ in 0..CYCLES {
        drop(handle.subscribe(0).expect("a subscription"));
    }
    let subscription = handle.subscribe(0).expect("not refused");
    handle.signal(Signal::Sigterm).expect("signal");
    let exited = waiter.receiver().recv_timeout(WAIT).expect("answered").expect("exited");
    assert_eq!(fields(&exited).1.as_deref(), Some("SIGTERM"));
    let events: Vec<Event> = std::iter::from_fn(|| subscription.receiver().recv_timeout(WAIT).ok()).collect();
    assert!(
        matches!(&events[..], [Event::Message(a), Event::Message(e)]
        if matches!(a.response(), Response::Attached { .. }) && *e.response() == exited),
        "{events:?}"
    );
}

#[test]
fn the_metadata_of_all_pipe_processes_shares_one_budget() {
    /// Each process's metadata: under the per-process limit, and four of them fit in the total but five do not.
    const EACH: usize = 900 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let big = Map::from_iter([("blob".to_owned(), Value::String("x".repeat(EACH)))]);
    let size = serde_json::to_string(&big).unwrap().len();
    assert!(size <= MAX_METADATA_BYTES && 4 * size <= MAX_TOTAL_METADATA_BYTES && 5 * size > MAX_TOTAL_METADATA_BYTES);
    let spec = |i: usize, metadata: &Map<String, Value>| {
        let mut spec = pipe_sh(dir.path(), "exec sleep 30");
        spec.output_path = dir.path().join(format!("out-{i}.log"));
        spec.metadata = metadata.clone();
        spec
    };
    let small = Map::from_iter([("k".to_owned(), json!(1))]);
    let small_size = serde_json::to_string(&small).unwrap().len();
    let ids: Vec<u64> = (0..4).map(|i| service.create_pipe(spec(i, &big)).expect("fits").id).collect();
    let refused = service.create_pipe(spec(4, &big)).map(|info| info.id).unwrap_err();
    let expected = format!(
        "metadata would bring the daemon's pipe processes to {} bytes, over the {MAX_TOTAL_METADATA_BYTES}-byte total",
        5 * size
    );
    assert_eq!(refused.to_string(), expected);
    assert!(!dir.path().join("out-4.log").exists(), "a refused request opens no file");
    assert_eq!(service.metadata_bytes(), 4 * size);
    // Growing metadata is refused the same way, and changes nothing.
    let fifth = service.create_pipe(spec(5, &small)).expect("small metadata fits").id;
    let refused = service.pipe(fifth).unwrap().set_metadata(big.clone()).unwrap_err();
    assert!(matches!(refused, ServiceError::MetadataBudget { .. }), "{refused}");
    assert_eq!(service.get(fifth).unwrap().pipe.unwrap().metadata, small);
    assert_eq!(service.metadata_bytes(), 4 * size + small_size);
    // `list` still fits in one frame.
    let list = serde_json::to_vec(&Response::Processes { processes: service.list(Mode::Pipe), next: None }).unwrap();
    assert!(list.len() <= MAX_FRAME_BYTES, "list is {} bytes", list.len());
    // Terminating a process releases its share.
    service.terminate(ids[0]).expect("terminate");
    assert_eq!(service.metadata_bytes(), 3 * size + small_size);
    service.pipe(fifth).unwrap().set_metadata(big.clone()).expect("fits now");
    assert_eq!(service.metadata_bytes(), 4 * size);
    // Shrinking always fits.
    service.pipe(fifth).unwrap().set_metadata(Map::new()).expect("smaller");
    assert_eq!(service.metadata_bytes(), 3 * size + 2);
}

#[test]
fn a_symlink_loop_earlier_in_the_path_and_a_fifo_without_a_reader_are_named_right() {
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let looped = dir.path().join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let mut spec = pipe_sh(dir.path(), "true");
    spec.output_path = looped.join("out.log");
    let error = service.create_pipe(spec.clone()).unwrap_err().to_string();
    let expected = format!("cannot open output file {}: ", spec.output_path.display());
    let reason = error.strip_prefix(&expected).unwrap_or_else(|| panic!("{error}"));
    assert!(reason.contains("symbolic links") && !reason.contains("final component"), "{error}");
    let output = dir.path().join("out.fifo");
    fifo(&output);
    spec.output_path = output.clone();
    let error = service.create_pipe(spec).unwrap_err().to_string();
    assert_eq!(error, format!("cannot open output file {}: it is a FIFO with no reader", output.display()));
    assert!(service.list(Mode::Pipe).is_empty());
}

/// How long an isolated copy of this test binary may run: longer than any one wait inside it ([`WAIT`]), so its
/// own failure message is what shows.
const ISOLATED_RUN: Duration = Duration::from_secs(3 * WAIT.as_secs());

/// Names, in the environment of a copy of this test binary, the one `isolated_*` test it runs.
const ISOLATED: &str = "OPENCODE_PTY_ISOLATED_TEST";

/// Whether this process is the copy that runs `name` alone (see [`run_isolated`]).
fn isolated(name: &str) -> bool {
    std::env::var(ISOLATED).is_ok_and(|v| v == name)
}

/// Runs test `name` alone in a fresh copy of this test binary, where [`isolated`] is true for it (started through `wrapper` when given,
/// which must `exec` it), so it may change process-wide state (signal dispositions, resource limits) without
/// disturbing the tests beside this one. Fails with its output if it fails or outlives [`ISOLATED_RUN`].
fn run_isolated(name: &str, wrapper: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let out = File::create(&log).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut command = match wrapper.split_first() {
        Some((program, args)) => {
            let mut command = Command::new(program);
            command.args(args).arg(&exe);
            command
        }
        None => Command::new(&exe),
    };
    // The harness names a test by its path below the crate (`pipe::<name>` in this binary).
    let path = module_path!().split_once("::").map_or(name.to_owned(), |(_, module)| format!("{module}::{name}"));
    command.args([path.as_str(), "--exact", "--test-threads=1", "--nocapture"]).env(ISOLATED, name);
    command.stdin(Stdio::null()).stdout(out.try_clone().unwrap()).stderr(out);
    let mut child = command.spawn().unwrap_or_else(|e| panic!("cannot start {:?} for {name}: {e}", wrapper));
    let status = wait_or_kill(&mut child, ISOLATED_RUN);
    let output = read(&log);
    assert!(status.is_some_and(|s| s.success()), "{name} failed ({status:?}):\n{output}");
    assert!(output.contains("1 passed"), "{name} did not run:\n{output}");
}

/// Ignores SIGCHLD, then `exec`s its arguments: the disposition survives `exec` (Rust keeps it).
const IGNORE_SIGCHLD: &str =
    "import os, signal, sys\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\nos.execv(sys.argv[1], sys.argv[1:])";

#[test]
fn a_child_that_cannot_be_waited_for_gets_a_final_answer_and_is_never_signalled() {
    const NAME: &str = "a_child_that_cannot_be_waited_for_gets_a_final_answer_and_is_never_signalled";
    if !isolated(NAME) {
        if std::process::Command::new("python3").arg("--version").stdout(Stdio::null()).status().is_err() {
            panic!("this test needs python3 on PATH, to start a copy of itself with SIGCHLD ignored");
        }
        run_isolated(NAME, &["python3", "-c", IGNORE_SIGCHLD]);
        return;
    }
    // From here on this is the isolated copy, started with SIGCHLD ignored.
    // With SIGCHLD ignored the kernel reaps the child as it exits, so waiting for it fails with ECHILD: as if
    // someone else had reaped it. Its pid may then be reused, so it must never be signalled again.
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let spec = pipe_sh(dir.path(), "echo hi; exit 3");
    let info = service.create_pipe(spec.clone()).expect("create");
    let handle = service.pipe(info.id).unwrap();
    let answer = handle.wait().receiver().recv_timeout(WAIT).expect("a final answer");
    let reason = "waiting for the child failed: ECHILD: No child processes";
    assert_eq!(answer, Err(ServiceError::WaitFailed("ECHILD: No child processes".into())));
    assert_eq!(answer.unwrap_err().to_string(), reason);
    assert_eq!(read(&spec.output_path), "hi\n", "the output was read to its end");
    let after = handle.info();
    assert_eq!(after.lifecycle, Lifecycle::Failed { message: reason.into() });
    assert_eq!((after.exited_at, after.output_tail), (None, 3));
    // A late waiter and a late subscriber get the same answer at once.
    assert_eq!(handle.wait().receiver().try_recv().expect("at once").unwrap_err().to_string(), reason);
    let subscription = handle.subscribe(0).expect("subscribe");
    let events: Vec<Event> = subscription.receiver().try_iter().collect();
    let error = Response::Error { message: reason.into() };
    assert!(matches!(&events[..], [Event::Message(_), Event::Message(e)] if *e.response() == error), "{events:?}");
    let refused = handle.signal(Signal::Sigkill).unwrap_err();
    assert_eq!(refused.to_string(), format!("process {} can no longer be signalled: {reason}", info.id));
    service.terminate(info.id).expect("terminate just forgets it");
    assert!(service.list(Mode::Pipe).is_empty());
}

#[test]
fn a_reader_that_cannot_poll_ends_the_output_and_the_exit_is_still_published() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    const NAME: &str = "a_reader_that_cannot_poll_ends_the_output_and_the_exit_is_still_published";
    if !isolated(NAME) {
        run_isolated(NAME, &[]);
        return;
    }
    // From here on this is the isolated copy, free to lower its own descriptor limit.
    let dir = tempfile::tempdir().unwrap();
    let service = service();
    let go = dir.path().join("go");
    fifo(&go);
    // Read and write, so it neither blocks here nor lets the child's `read` see EOF; opened before the limit.
    let mut trigger = std::fs::OpenOptions::new().read(true).write(true).open(&go).unwrap();
    let spec = pipe_sh(dir.path(), &format!("echo before; read x < {}; echo after; exit 4", go.display()));
    let handle = service.pipe(service.create_pipe(spec).expect("create").id).unwrap();
    let waiter = handle.wait();
    eventually("the first line", || (handle.info().output_tail == 7).then_some(()));
    // The daemon's wait thread must already be in `poll` when the limit drops, or its own next poll fails the same
    // way and the exit is never seen (it was once still on its way there on a loaded machine).
    eventually("the wait thread to wait in poll", || wait_thread_in_poll().then_some(()));
    // poll(2) refuses more descriptors than RLIMIT_NOFILE (EINVAL): the reader's next poll fails.
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, 1, hard).unwrap();
    trigger.write_all(b"go\n").unwrap();
    let answer = waiter.receiver().recv_timeout(WAIT);
    setrlimit(Resource::RLIMIT_NOFILE, soft, hard).unwrap();
    let exited = answer.expect("exited although the reader failed").expect("not terminated");
    let (exit_code, signal, final_offset, _, output_error, _) = fields(&exited);
    let failure = "polling the output pipe failed: EINVAL: Invalid argument";
    assert_eq!(output_error.as_deref(), Some(failure));
    // The child's `echo after` may come before the failure or hit the closed pipe (SIGPIPE).
    assert!(matches!((exit_code, signal.as_deref()), (Some(4), None) | (None, Some("SIGPIPE"))), "{exited:?}");
    assert!(final_offset == 7 || final_offset == 13, "{exited:?}");
    let info = handle.info();
    assert_eq!(info.lifecycle, Lifecycle::Exited { exit_code, signal }, "get agrees with the published exited");
    assert_eq!(info.pipe.unwrap().output_error.as_deref(), Some(failure));
}

/// Whether this process's wait thread (`opencode-pty-wait`, its name cut to 15 bytes by the kernel) sleeps in
/// `poll` or `ppoll` (x86-64 system calls 7 and 271; /proc's `syscall` gives the number first).
fn wait_thread_in_poll() -> bool {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return false };
    tasks.flatten().any(|task| {
        let read = |file: &str| std::fs::read_to_string(task.path().join(file)).unwrap_or_default();
        let sleeping = read("stat").rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('S'));
        let call = read("syscall");
        let in_poll = matches!(call.split_whitespace().next(), Some("7" | "271"));
        read("comm").trim_end() == "opencode-pty-wa" && sleeping && in_poll
    })
}

/// Type check: a handle is shareable across threads, as the daemon needs.
#[allow(dead_code)]
fn handles_are_send_and_sync(handle: PipeHandle) -> impl Send + Sync {
    handle
}

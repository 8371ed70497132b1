//! Processes handed over within one daemon, as a successor would take them after `execve`: captured, written
//! as a state and read back, and rebuilt around the same descriptors and children. A terminal printing without
//! pause loses and repeats no byte and shows the same screen; children that exit while captured, or had
//! exited before, report exactly how they ended; a pipe process keeps its file, position and counts.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use opencode_pty_protocol::{Lifecycle, Response, Role};
use opencode_pty_vt::{Blanks, Terminal};
use serde_json::json;

use super::*;
use crate::process::{Event, ExistingController, ProcessSubscription};
use crate::procinfo::stat::proc_stat;
use crate::terminal::TerminalConfig;
use crate::terminal::tests::sh;
use crate::upgrade::{DaemonState, UpgradeState};

/// The longest any step waits.
const WAIT: Duration = Duration::from_secs(60);

/// Captures every process and reads its state back from bytes, as the successor would: the state and the
/// descriptors it names.
fn capture(service: &ProcessService) -> (UpgradeState, BTreeMap<i32, OwnedFd>) {
    let handover = service.hand_over(DaemonState::default());
    assert!(handover.failures.is_empty(), "{:?}", handover.failures);
    let bytes = handover.state.to_bytes().expect("written");
    (UpgradeState::read_from(&bytes[..]).expect("read back"), handover.descriptors)
}

/// A terminal's snapshot and ring bytes, from its screen file (of `fds`) or the state itself.
fn screen(terminal: &crate::upgrade::TerminalState, fds: &BTreeMap<i32, OwnedFd>) -> (Vec<u8>, Vec<u8>) {
    use std::os::unix::fs::FileExt as _;
    let Some(file) = terminal.screen_file else {
        return (terminal.vt_snapshot.0.clone(), terminal.replay.bytes.0.clone());
    };
    let reader = std::fs::File::from(fds[&file.fd].try_clone().expect("dup"));
    let mut bytes = vec![0; (file.snapshot_len + file.ring_len) as usize];
    reader.read_exact_at(&mut bytes, 0).expect("the screen file");
    let ring = bytes.split_off(file.snapshot_len as usize);
    (bytes, ring)
}

/// Rebuilds the processes of `state` with the descriptors `fds` (all of which the state names).
fn restore(service: &ProcessService, state: UpgradeState, mut fds: BTreeMap<i32, OwnedFd>) {
    let failures = service.take_over(state, |fd| fds.remove(&fd).ok_or_else(|| "unknown".into())).expect("restored");
    assert!(failures.is_empty(), "{failures:?}");
    assert!(fds.is_empty(), "every descriptor taken");
}

/// A subscriber's output, offsets checked: each chunk starts where the last ended.
#[derive(Default)]
struct Stream(Vec<u8>);

impl Stream {
    /// Takes one event: output is appended (at the right offset); `exited` is returned.
    fn take(&mut self, event: Event) -> Option<Response> {
        match event {
            Event::Output(output) => {
                assert_eq!(output.start(), self.0.len() as u64, "contiguous output");
                self.0.extend_from_slice(output.bytes());
                None
            }
            Event::Message(message) => match message.response() {
                Response::Attached { available_offset, replay_base64, .. } => {
                    assert_eq!(*available_offset, self.0.len() as u64, "the replay starts where the stream is");
                    self.0.extend(BASE64.decode(replay_base64).expect("base64"));
                    None
                }
                exited @ Response::Exited { .. } => Some(exited.clone()),
                _ => None,
            },
        }
    }

    /// Takes events until the output holds `text` at its end.
    fn until_ends_with(&mut self, subscription: &ProcessSubscription, text: &[u8]) {
        while !self.0.ends_with(text) {
            let event = subscription.recv_timeout(WAIT).expect("output");
            assert!(self.take(event).is_none(), "exited early");
        }
    }

    /// Takes events until `exited`.
    fn until_exited(&mut self, subscription: &ProcessSubscription) -> Response {
        loop {
            if let Some(exited) = self.take(subscription.recv_timeout(WAIT).expect("an event")) {
                return exited;
            }
        }
    }
}

/// Waits (bounded) until `pid` has ended (a zombie: nobody reaps it while it is captured).
fn wait_dead(pid: u32) {
    let deadline = Instant::now() + WAIT;
    while !proc_stat(pid).is_some_and(|stat| stat.is_dead()) {
        assert!(Instant::now() < deadline, "pid {pid} still runs");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn terminal_state(state: &UpgradeState) -> &crate::upgrade::TerminalState {
    match &state.processes[0] {
        ProcessState::Pty(terminal) => terminal,
        ProcessState::Pipe(_) => panic!("a terminal"),
    }
}

#[test]
fn a_printing_terminal_is_handed_over_without_losing_or_repeating_a_byte() {
    const LINES: usize = 60_000;
    // Room for the whole output in the ring and the whole history in the emulator, so that the screens compare
    // row for row (a history limit is enforced a page at a time, where the pages happen to fill).
    const HISTORY: usize = LINES + 1_000;
    let config = TerminalConfig { replay_bytes: 16 << 20, scrollback_lines: HISTORY, ..TerminalConfig::default() };
    let service = ProcessService::new(config);
    let info = service.create_pty(sh(&format!("read go; seq 1 {LINES}; echo end; read x; exit 7"))).expect("create");
    let (id, pid) = (info.id, info.pid.expect("pid"));
    let controller = || Some("ctl".to_owned());
    let handle = service.pty(id).expect("pty");
    let subscription = handle.subscribe(0, "ctl".into(), Role::Controller, ExistingController::Refuse).expect("sub");
    handle.write(controller(), b"\r".to_vec()).expect("go");
    drop(handle);
    let mut stream = Stream::default();
    while stream.0.len() < 150_000 {
        assert!(stream.take(subscription.recv_timeout(WAIT).expect("output")).is_none());
    }
    let (state, fds) = capture(&service);
    // The subscription ends after what it was sent before the capture.
    while let Ok(event) = subscription.recv_timeout(WAIT) {
        assert!(stream.take(event).is_none());
    }
    drop(subscription);
    let terminal = terminal_state(&state);
    assert_eq!(terminal.child.pid, pid);
    assert_eq!((terminal.controller.as_deref(), terminal.generation), (Some("ctl"), 1));
    assert_eq!(terminal.replay.head, 0, "the whole output is in the ring");
    assert!(terminal.screen_file.is_some(), "the screen travels in a file of its own");
    let (vt_snapshot, ring) = screen(terminal, &fds);
    assert!(stream.0.len() <= ring.len() && ring.starts_with(&stream.0), "the ring holds what was sent");
    // The emulator's snapshot, fed the ring from where it was taken, is the screen of exactly the ring's bytes.
    let at = terminal.snapshot_at.expect("where the snapshot was taken");
    assert!(at <= ring.len() as u64);
    let mut snapshot = Terminal::from_snapshot(&vt_snapshot, HISTORY).expect("snapshot");
    snapshot.write(&ring[at as usize..]);
    let mut fed = Terminal::new(80, 24, HISTORY).expect("terminal");
    fed.write(&ring);
    assert_eq!(snapshot.state_diff(&fed, Blanks::Exact).expect("diff"), None, "the screen at the capture");
    assert_eq!(snapshot.plain_text().unwrap(), fed.plain_text().unwrap());

    restore(&service, state, fds);
    assert_eq!(service.get(id).expect("get").pid, Some(pid), "the same child");
    let handle = service.pty(id).expect("restored");
    // The controller comes back as the controller, with the generation it had.
    let offset = stream.0.len() as u64;
    let subscription =
        handle.subscribe(offset, "ctl".into(), Role::Controller, ExistingController::Refuse).expect("sub");
    let attached = subscription.recv_timeout(WAIT).expect("attached");
    if let Event::Message(message) = &attached
        && let Response::Attached { role, generation, requested_offset, truncated, .. } = message.response()
    {
        assert_eq!((*role, *generation, *requested_offset, *truncated), (Role::Controller, 1, offset, false));
    } else {
        panic!("not attached: {attached:?}");
    }
    stream.take(attached);
    stream.until_ends_with(&subscription, b"end\r\n");
    handle.write(controller(), b"\r".to_vec()).expect("input to the restored terminal");
    let exited = stream.until_exited(&subscription);
    let Response::Exited { exit_code, final_offset, .. } = exited else { unreachable!() };
    assert_eq!((exit_code, final_offset), (Some(7), stream.0.len() as u64));
    let mut expected = b"\r\n".to_vec();
    for n in 1..=LINES {
        expected.extend_from_slice(format!("{n}\r\n").as_bytes());
    }
    expected.extend_from_slice(b"end\r\n\r\n");
    assert!(stream.0 == expected, "{} bytes of {}", stream.0.len(), expected.len());
    // The screen after: what a terminal fed the whole output shows.
    let mut reference = Terminal::new(80, 24, HISTORY).expect("terminal");
    reference.write(&expected);
    let Response::Snapshot { text, checkpoint_base64, .. } = handle.snapshot().expect("snapshot") else {
        unreachable!()
    };
    assert_eq!(text, reference.plain_text().unwrap());
    let mut replayed = Terminal::new(80, 24, HISTORY).expect("terminal");
    replayed.write(&BASE64.decode(checkpoint_base64).expect("base64"));
    let mut reference_replayed = Terminal::new(80, 24, HISTORY).expect("terminal");
    reference_replayed.write(&reference.vt_checkpoint().expect("checkpoint"));
    assert_eq!(replayed.state_diff(&reference_replayed, Blanks::Exact).expect("diff"), None);
}

#[test]
fn a_child_that_exits_while_captured_reports_its_exit_after_the_restore() {
    let service = ProcessService::new(TerminalConfig::default());
    let info = service.create_pty(sh("read go; echo bye; exit 7")).expect("create");
    let (id, pid) = (info.id, info.pid.expect("pid"));
    let handle = service.pty(id).expect("pty");
    // Once the shell waits for its line (its prompt-less `read` shows nothing), capture it.
    let deadline = Instant::now() + WAIT;
    while handle.info().pty.expect("pty").foreground_process.is_none() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(handle);
    let (state, fds) = capture(&service);
    let tail = terminal_state(&state).ring_tail() + terminal_state(&state).unprocessed.0.len() as u64;
    // Typed straight into the PTY while no thread serves it: the shell exits, and stays a zombie.
    nix::unistd::write(&fds[&terminal_state(&state).master_fd], b"\r").expect("typed");
    wait_dead(pid);
    restore(&service, state, fds);
    let handle = service.pty(id).expect("restored");
    let subscription = handle.subscribe(tail, "o".into(), Role::Observer, ExistingController::Refuse).expect("sub");
    let mut stream = Stream(vec![0; tail as usize]);
    let exited = stream.until_exited(&subscription);
    assert_eq!(&stream.0[tail as usize..], b"\r\nbye\r\n", "what the child wrote while captured");
    assert!(matches!(exited, Response::Exited { exit_code: Some(7), signal: None, .. }), "{exited:?}");
    assert_eq!(service.get(id).expect("get").lifecycle, Lifecycle::Exited { exit_code: Some(7), signal: None });
}

#[test]
fn an_exit_published_before_the_capture_is_the_same_exit_after_it() {
    let service = ProcessService::new(TerminalConfig::default());
    let id = service.create_pty(sh("echo done; exit 3")).expect("create").id;
    let handle = service.pty(id).expect("pty");
    let subscription = handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).expect("sub");
    let before = Stream::default().until_exited(&subscription);
    drop((subscription, handle));
    let (state, fds) = capture(&service);
    assert!(terminal_state(&state).life.exited_at.is_some());
    restore(&service, state, fds);
    let handle = service.pty(id).expect("restored");
    let subscription = handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).expect("sub");
    let mut stream = Stream::default();
    let after = stream.until_exited(&subscription);
    assert_eq!(after, before, "the same event: code, offset and time");
    assert_eq!(stream.0, b"done\r\n");
    assert!(subscription.recv_timeout(Duration::from_millis(200)).is_err(), "nothing after `exited`");
}

/// The spec of a pipe process writing `script`'s output to `output`.
fn pipe_spec(script: &str, output: &std::path::Path) -> PipeSpec {
    PipeSpec {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: "/".into(),
        env: [("PATH".to_owned(), "/usr/bin:/bin".to_owned())].into(),
        group_id: "pipes".into(),
        output_path: output.to_owned(),
        metadata: json!({"task": "count"}).as_object().cloned().unwrap_or_default(),
    }
}

fn pipe_state(state: &UpgradeState) -> &crate::upgrade::PipeProcessState {
    match &state.processes[0] {
        ProcessState::Pipe(pipe) => pipe,
        ProcessState::Pty(_) => panic!("a pipe process"),
    }
}

#[test]
fn a_writing_pipe_process_keeps_its_file_position_and_counts() {
    const LINES: usize = 400_000;
    let dir = tempfile::TempDir::new().expect("dir");
    let output = dir.path().join("out.log");
    let service = ProcessService::new(TerminalConfig::default());
    let info = service.create_pipe(pipe_spec(&format!("seq 1 {LINES}; exit 4"), &output)).expect("create");
    let (id, pid) = (info.id, info.pid.expect("pid"));
    let deadline = Instant::now() + WAIT;
    while service.get(id).expect("get").output_tail < 100_000 {
        assert!(Instant::now() < deadline, "no output");
        std::thread::sleep(Duration::from_millis(1));
    }
    let (state, fds) = capture(&service);
    let pipe = pipe_state(&state);
    assert_eq!(pipe.child.pid, pid);
    let in_file = std::fs::metadata(&output).expect("file").len();
    assert_eq!(pipe.output_position, Some(in_file), "the file's position is where its bytes end");
    assert_eq!(pipe.tail, in_file + pipe.unwritten.0.len() as u64);
    assert!(pipe.pipe_fd.is_some() && pipe.output_fd.is_some() && !pipe.output_ended);
    restore(&service, state, fds);
    let handle = service.pipe(id).expect("restored");
    let answer = handle.wait().receiver().recv_timeout(WAIT).expect("an answer").expect("exited");
    let expected: String = (1..=LINES).map(|n| format!("{n}\n")).collect();
    let Response::Exited { exit_code, final_offset, output_lines, output_error, .. } = answer else { unreachable!() };
    assert_eq!((exit_code, output_lines, output_error), (Some(4), Some(LINES as u64), None));
    assert_eq!(final_offset, expected.len() as u64);
    assert!(std::fs::read_to_string(&output).expect("file") == expected, "the file holds every line once");
    let info = service.get(id).expect("get");
    assert_eq!(info.pipe.expect("pipe").metadata, json!({"task": "count"}).as_object().cloned().unwrap_or_default());
    assert_eq!(service.metadata_bytes(), r#"{"task":"count"}"#.len(), "its metadata counted once");
}

#[test]
fn a_pipe_process_killed_while_captured_reports_the_signal() {
    let dir = tempfile::TempDir::new().expect("dir");
    let output = dir.path().join("out.log");
    let service = ProcessService::new(TerminalConfig::default());
    let info = service.create_pipe(pipe_spec("echo started; exec sleep 1000", &output)).expect("create");
    let (id, pid) = (info.id, info.pid.expect("pid"));
    let deadline = Instant::now() + WAIT;
    while service.get(id).expect("get").output_tail < 8 {
        assert!(Instant::now() < deadline, "no output");
        std::thread::sleep(Duration::from_millis(1));
    }
    let (state, fds) = capture(&service);
    let child = nix::unistd::Pid::from_raw(pid as i32);
    nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGTERM).expect("signalled");
    wait_dead(pid);
    restore(&service, state, fds);
    let answer = service.pipe(id).expect("restored").wait().receiver().recv_timeout(WAIT).expect("answer");
    let Response::Exited { exit_code, signal, output_lines, final_offset, .. } = answer.expect("exited") else {
        unreachable!()
    };
    assert_eq!((exit_code, signal.as_deref(), output_lines, final_offset), (None, Some("SIGTERM"), Some(1), 8));
}

/// Input the child had not read when the terminal was captured (in the writer's hands, its queue and the
/// actor's backlog) reaches it after the restore, once, in order.
#[test]
fn input_the_child_has_not_read_reaches_it_after_the_restore() {
    const INPUT: usize = 200_000;
    let dir = tempfile::TempDir::new().expect("dir");
    let (fifo, out) = (dir.path().join("go"), dir.path().join("input"));
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo");
    let script = format!(
        "stty -icanon -echo; echo ready; read x < {}; head -c {INPUT} > {}; echo done",
        fifo.display(),
        out.display()
    );
    let service = ProcessService::new(TerminalConfig::default());
    let id = service.create_pty(sh(&script)).expect("create").id;
    let handle = service.pty(id).expect("pty");
    let subscription = handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).expect("sub");
    let mut stream = Stream::default();
    stream.until_ends_with(&subscription, b"ready\r\n");
    // Far more than the PTY holds: most of it waits in the daemon.
    let input: Vec<u8> = (0..INPUT).map(|n| b'a' + (n % 26) as u8).collect();
    for chunk in input.chunks(10_000) {
        handle.write(None, chunk.to_vec()).expect("queued");
    }
    drop((subscription, handle));
    let (state, fds) = capture(&service);
    let pending = terminal_state(&state).pending_input.0.clone();
    assert!(pending.len() > INPUT / 2, "{} bytes waited in the daemon", pending.len());
    assert!(input.ends_with(&pending), "the input not written, in order");
    let tail = stream.0.len() as u64;
    restore(&service, state, fds);
    std::fs::write(&fifo, "go\n").expect("the child goes on");
    let handle = service.pty(id).expect("restored");
    let subscription = handle.subscribe(tail, "o".into(), Role::Observer, ExistingController::Refuse).expect("sub");
    stream.until_ends_with(&subscription, b"done\r\n");
    assert!(std::fs::read(&out).expect("what the child read") == input, "every byte once, in order");
}

/// Sixteen terminals printing without pause: how long capturing and restoring them all takes (the pause in
/// their output an upgrade adds, without the `execve`), printed.
#[test]
fn sixteen_busy_terminals_capture_and_restore_together() {
    const TERMINALS: usize = 16;
    let service = ProcessService::new(TerminalConfig::default());
    let ids: Vec<u64> = (0..TERMINALS)
        .map(|_| service.create_pty(sh("while :; do echo busy busy busy busy; done")).expect("create").id)
        .collect();
    for id in &ids {
        let deadline = Instant::now() + WAIT;
        while service.get(*id).expect("get").output_tail < 100_000 {
            assert!(Instant::now() < deadline, "terminal {id} prints nothing");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let started = Instant::now();
    let captured = service.capture_all();
    let captured_in = started.elapsed();
    assert!(captured.failures.is_empty());
    let daemon = DaemonState { next_id: captured.next_id, ..DaemonState::default() };
    let state = UpgradeState::new(daemon, captured.processes);
    let mut fds = captured.descriptors;
    let started = Instant::now();
    let bytes = state.to_bytes().expect("written");
    let state = UpgradeState::read_from(&bytes[..]).expect("read");
    let encoded_in = started.elapsed();
    let tails: Vec<u64> = state
        .processes
        .iter()
        .map(|process| match process {
            ProcessState::Pty(terminal) => terminal.ring_tail(),
            ProcessState::Pipe(_) => unreachable!(),
        })
        .collect();
    let started = Instant::now();
    let failures =
        service.restore_all(state.daemon.next_id, state.processes, |fd| fds.remove(&fd).ok_or_else(String::new));
    assert!(failures.expect("restored").is_empty());
    // Restored once every terminal reads again: its output grows past where it was captured.
    for (id, tail) in ids.iter().zip(&tails) {
        while service.get(*id).expect("get").output_tail <= *tail {
            assert!(started.elapsed() < WAIT, "terminal {id} does not read again");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    println!(
        "{TERMINALS} busy terminals: captured in {captured_in:?}, state of {} KiB written and read in \
         {encoded_in:?}, all reading again {:?} after the restore began",
        bytes.len() >> 10,
        started.elapsed()
    );
}

/// A terminal whose output is inside a control sequence longer than the emulator's snapshot carries (a long
/// title), `held` shows its output up to there; the sequence's rest comes after `release` is called.
fn long_sequence(service: &ProcessService, dir: &std::path::Path) -> (u64, std::path::PathBuf, Vec<u8>) {
    let fifo = dir.join("rest");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo");
    let long = opencode_pty_vt::MAX_CONTINUATION_BYTES + 4096;
    let script = format!(
        "printf 'before\\n\\033]2;'; head -c {long} /dev/zero | tr '\\0' x; read x < {}; printf 'yz\\007after\\n'; \
         exit 5",
        fifo.display()
    );
    let id = service.create_pty(sh(&script)).expect("create").id;
    let mut expected = b"before\r\n\x1b]2;".to_vec();
    expected.extend(std::iter::repeat_n(b'x', long));
    let deadline = Instant::now() + WAIT;
    while service.get(id).expect("get").output_tail < expected.len() as u64 {
        assert!(Instant::now() < deadline, "the sequence's start never came");
        std::thread::sleep(Duration::from_millis(2));
    }
    expected.extend_from_slice(b"yz\x07after\r\n");
    (id, fifo, expected)
}

/// The rest of the terminal's output after the restore, and the screen it ends with against `expected`.
fn finish_long_sequence(service: &ProcessService, id: u64, expected: &[u8]) {
    let handle = service.pty(id).expect("restored");
    let subscription = handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).expect("sub");
    let mut stream = Stream::default();
    let exited = stream.until_exited(&subscription);
    assert!(matches!(exited, Response::Exited { exit_code: Some(5), .. }), "{exited:?}");
    assert!(stream.0 == expected, "the whole output once: {} bytes of {}", stream.0.len(), expected.len());
    let mut reference = Terminal::new(80, 24, 100).expect("terminal");
    reference.write(expected);
    let Response::Snapshot { text, .. } = handle.snapshot().expect("snapshot") else { unreachable!() };
    assert_eq!(text, reference.plain_text().unwrap());
    let title = service.get(id).expect("get").pty.expect("pty").title;
    assert_eq!(title, reference.title().unwrap_or_else(|| "unit".into()), "the title as the sequence left it");
}

/// The sequence's rest is already on its way when the capture comes: the actor reads on to its end (or the
/// reader had it), and the snapshot is exact.
#[test]
fn a_sequence_longer_than_the_snapshot_carries_is_read_to_its_end() {
    let dir = tempfile::TempDir::new().expect("dir");
    let service = ProcessService::new(TerminalConfig::default());
    let (id, fifo, expected) = long_sequence(&service, dir.path());
    let release = std::thread::spawn(move || std::fs::write(fifo, "go\n").expect("released"));
    let (state, fds) = capture(&service);
    release.join().expect("released");
    let terminal = terminal_state(&state);
    if !terminal.has_snapshot() {
        // The rest did not come within `SEQUENCE_END_WAIT` on this (loaded) machine: the ring stands in.
        eprintln!("no snapshot: the screen was rebuilt from the ring");
    }
    let (_, ring) = screen(terminal, &fds);
    let taken = ring.len() + terminal.unprocessed.0.len();
    assert!(expected.starts_with(&[&ring[..], &terminal.unprocessed.0[..]].concat()), "{taken}");
    restore(&service, state, fds);
    finish_long_sequence(&service, id, &expected);
}

/// The sequence's rest does not come during the capture: the state carries no snapshot, and the successor
/// rebuilds the screen from the ring, inside the same sequence, so its rest still takes effect.
#[test]
fn a_sequence_that_does_not_end_during_the_capture_is_rebuilt_from_the_ring() {
    let dir = tempfile::TempDir::new().expect("dir");
    let service = ProcessService::new(TerminalConfig::default());
    let (id, fifo, expected) = long_sequence(&service, dir.path());
    let (state, fds) = capture(&service);
    let terminal = terminal_state(&state);
    assert!(!terminal.has_snapshot(), "no snapshot inside so long a sequence");
    assert!(terminal.unprocessed.0.is_empty());
    restore(&service, state, fds);
    std::fs::write(fifo, "go\n").expect("released");
    finish_long_sequence(&service, id, &expected);
}

/// A quiet terminal answers `snapshot` (text, checkpoint, cursor) and `get` (titles, size) the same before and
/// after the handover, on the alternate screen with a primary screen and history behind it.
#[test]
fn a_quiet_terminal_shows_the_same_screen_and_titles_after_the_handover() {
    let service = ProcessService::new(TerminalConfig::default());
    let script = "for n in $(seq 1 60); do printf '\\033[3%dmline %d\\033[0m\\n' $((n % 8)) $n; done; \
                  printf '\\033]2;from the program\\007\\033[?1049h\\033[2J\\033[5;3Hfull screen'; read x";
    let id = service.create_pty(sh(script)).expect("create").id;
    let handle = service.pty(id).expect("pty");
    let subscription = handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).expect("sub");
    Stream::default().until_ends_with(&subscription, b"full screen");
    handle.rename(Some("mine".into())).expect("rename");
    handle.resize(None, 100, 30).expect("resize");
    drop(subscription);
    let before = (handle.snapshot().expect("snapshot"), handle.info());
    drop(handle);
    let (state, fds) = capture(&service);
    restore(&service, state, fds);
    let handle = service.pty(id).expect("restored");
    let after = (handle.snapshot().expect("snapshot"), handle.info());
    let (Response::Snapshot { text, checkpoint_base64, cursor_x, cursor_y, .. }, info) = before else { unreachable!() };
    let (Response::Snapshot { text: text2, checkpoint_base64: checkpoint2, cursor_x: x2, cursor_y: y2, .. }, info2) =
        after
    else {
        unreachable!()
    };
    assert_eq!((text2, x2, y2), (text, cursor_x, cursor_y));
    assert!(checkpoint2 == checkpoint_base64, "the same checkpoint");
    assert_eq!(info2.pty, info.pty, "titles, size");
    assert_eq!((info2.output_head, info2.output_tail), (info.output_head, info.output_tail));
    let pty = info2.pty.expect("pty");
    assert_eq!((pty.title.as_str(), pty.user_title.as_deref(), pty.cols.get()), ("mine", Some("mine"), 100));
}

/// What the service told its hook, in order.
#[derive(Debug, Default)]
struct Told(std::sync::Mutex<Vec<(&'static str, u64)>>);

impl crate::service::ProcessHook for Told {
    fn started(&self, id: u64, _pid: u32) -> Result<(), ServiceError> {
        self.0.lock().unwrap().push(("started", id));
        Ok(())
    }

    fn reaped(&self, id: u64) {
        self.0.lock().unwrap().push(("reaped", id));
    }
}

/// The live (not zombie) members of process group `pgid`.
fn group_members(pgid: u32) -> Vec<u32> {
    let entries = std::fs::read_dir("/proc").expect("/proc");
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| proc_stat(*pid).is_some_and(|stat| !stat.is_dead()))
        .filter(|pid| {
            nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(*pid as i32))).ok()
                == Some(nix::unistd::Pid::from_raw(pgid as i32))
        })
        .collect()
}

#[test]
fn a_process_the_restore_leaves_out_has_its_group_ended_and_reaped_and_is_off_the_record() {
    use nix::sys::wait::{Id, WaitPidFlag, waitid};
    let dir = tempfile::TempDir::new().expect("dir");
    let told = Arc::new(Told::default());
    let service = ProcessService::with_hook(TerminalConfig::default(), told.clone());
    // A terminal whose group has a second member, and a pipe process.
    let pty = service.create_pty(sh("sleep 1000 & exec sleep 1000")).expect("create");
    let pipe = service.create_pipe(pipe_spec("exec sleep 1000", &dir.path().join("out.log"))).expect("create");
    let (pty_pid, pipe_pid) = (pty.pid.expect("pid"), pipe.pid.expect("pid"));
    let deadline = Instant::now() + WAIT;
    while group_members(pty_pid).len() < 2 {
        assert!(Instant::now() < deadline, "the terminal's background member did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    let (state, fds) = capture(&service);
    // Neither can be rebuilt (no descriptor is handed to them); the descriptors stay open meanwhile, so nothing
    // but the restore's failure ends the children.
    let failures = service.take_over(state, |fd| Err(format!("descriptor {fd} is not held"))).expect("taken over");
    assert_eq!(failures.len(), 2, "{failures:?}");
    for pid in [pty_pid, pipe_pid] {
        let pid = nix::unistd::Pid::from_raw(pid as i32);
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        assert_eq!(waitid(Id::Pid(pid), flags), Err(nix::errno::Errno::ECHILD), "{pid} is ended and reaped");
    }
    let deadline = Instant::now() + WAIT;
    while !group_members(pty_pid).is_empty() {
        assert!(Instant::now() < deadline, "the terminal's group outlives it: {:?}", group_members(pty_pid));
        std::thread::sleep(Duration::from_millis(5));
    }
    let told = told.0.lock().unwrap().clone();
    for id in [pty.id, pipe.id] {
        assert!(told.contains(&("reaped", id)), "process {id} is taken off the record: {told:?}");
    }
    drop(fds);
}

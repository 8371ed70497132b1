//! The states kept as fixtures (`server/tests/fixtures/upgrade/format-N.state`): one of each kind of process with
//! every member of the format set, so that reading a fixture checks every member of its format. Format 2 is
//! format 1 with three more members of a terminal (its screen file, where its snapshot was taken, its screen).

use std::collections::BTreeMap;

use opencode_pty_vt::Terminal;
use serde_json::json;

use super::state::Build;
use super::*;

/// Where the fixture of format 1 is kept.
pub(super) const FORMAT_1: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/upgrade/format-1.state");

/// Where the fixture of format 2 is kept.
pub(super) const FORMAT_2: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/upgrade/format-2.state");

/// What the fixture's terminal was fed (it ends in the middle of an SGR sequence).
pub(super) const SCREEN_BYTES: &[u8] = b"hello\r\nworld \x1b[1mbold\x1b[0m\x1b]2;fixture\x07\x1b[3";

/// The fixture's terminal's emulator, made now (its snapshot is only readable by the revision that made it).
pub(super) fn screen_snapshot() -> Vec<u8> {
    let mut vt = Terminal::new(20, 5, 100).expect("terminal");
    vt.write(SCREEN_BYTES);
    vt.snapshot().expect("snapshot")
}

/// The fixture's state, written by `build`, with the emulator's snapshot `vt_snapshot`.
pub(super) fn state(build: Build, vt_snapshot: Vec<u8>) -> UpgradeState {
    let terminal = TerminalState {
        id: 1,
        child: ChildState { pid: 4242, session: Some(4242), start: Some(123_456) },
        spec: TerminalSpec {
            program: "bash".into(),
            args: vec!["-l".into()],
            cwd: "/home/me".into(),
            env: BTreeMap::from([("LANG".into(), "C.UTF-8".into())]),
            group_id: "group".into(),
            title: "shell".into(),
            cols: 80,
            rows: 24,
            shell_integration: true,
        },
        started_at: 1_700_000_000_000,
        tty: Some("/dev/pts/7".into()),
        master_fd: 12,
        cols: 20,
        rows: 5,
        scrollback_lines: 100,
        vt_snapshot: Blob(vt_snapshot),
        replay: ReplayState { capacity: 1024, head: 3, bytes: Blob(SCREEN_BYTES.to_vec()) },
        unprocessed: Blob(b"1mred".to_vec()),
        pending_input: Blob(b"ls\r".to_vec()),
        titles: TitlesState { osc: Some("fixture".into()), user: Some("mine".into()) },
        controller: Some("attachment-1".into()),
        generation: 2,
        foreground: Some("vim".into()),
        failure: None,
        life: LifeState {
            child: Some(ExitState { exit_code: None, signal: Some("SIGTERM".into()) }),
            output_ended: false,
            exited_at: None,
        },
        shell: Some(ShellState {
            nonce: "0123456789abcdef0123456789abcdef".into(),
            script: Some("/run/opencode-pty/shell/terminal-1.bash".into()),
            sequence: 9,
            phase: ShellPhase::Running,
            cwd: Some("/home/me".into()),
            commands: vec![CommandState {
                command_id: 3,
                command: "make".into(),
                cwd: Some("/home/me".into()),
                output_start: 40,
                output_end: None,
                exit_code: None,
                started_at: 1_700_000_001_000,
                finished_at: None,
            }],
            running: true,
            next_id: 4,
            typed: false,
            typed_before_prompt: true,
            prompts: 3,
            awaiting_prompt: false,
            input_ready: false,
            scanner: ScannerState {
                phase: ScannerPhase::Prefix { matched: 3 },
                start: 60,
                payload: Blob(b"D;0;opty=".to_vec()),
            },
        }),
        run: Some(RunState {
            command_id: 4,
            command: "echo a\necho b".into(),
            gives_up_after: 3,
            held_left_ms: Some(1500),
        }),
        screen_file: None,
        snapshot_at: None,
        alternate_screen: None,
    };
    let pipe = PipeProcessState {
        id: 3,
        child: ChildState { pid: 4343, session: Some(100), start: Some(123_999) },
        command: vec!["make".into(), "-j4".into()],
        cwd: "/src".into(),
        group_id: "build".into(),
        output_path: "/tmp/build.log".into(),
        started_at: 1_700_000_002_000,
        pipe_fd: Some(13),
        output_fd: Some(14),
        output_position: Some(12),
        linger_left_ms: Some(250),
        unwritten: Blob(b"tail\n".to_vec()),
        tail: 17,
        lines: 2,
        output_error: Some("the disk is full".into()),
        metadata: json!({"task": "build", "n": 7}).as_object().cloned().unwrap_or_default(),
        child_end: Some(PipeChildEnd::Exited(ExitState { exit_code: Some(2), signal: None })),
        output_ended: false,
        exited_at: None,
    };
    UpgradeState {
        build,
        daemon: DaemonState {
            next_id: 4,
            owner: Some(OwnerState {
                generation: 2,
                phase: OwnerPhase::Owned {
                    handoff: Some(HandoffState {
                        ticket: "ticket-1".into(),
                        expires_at: 1_700_000_120_000,
                        left_ms: 90_000,
                    }),
                },
            }),
            descriptors: BTreeMap::from([("listener".into(), 3), ("lock".into(), 4), ("owner".into(), 5)]),
            ..DaemonState::default()
        },
        processes: vec![ProcessState::Pty(Box::new(terminal)), ProcessState::Pipe(Box::new(pipe))],
    }
}

/// The fixture's state of format 2, written by `build`: format 1's with where its terminal's snapshot was taken
/// and its screen, and a second terminal whose snapshot and ring are in a screen file.
pub(super) fn state_2(build: Build, vt_snapshot: Vec<u8>) -> UpgradeState {
    let mut state = state(build, vt_snapshot);
    let ProcessState::Pty(terminal) = &mut state.processes[0] else { unreachable!("a terminal first") };
    terminal.snapshot_at = Some(10);
    terminal.alternate_screen = Some(false);
    let mut filed = terminal.clone();
    filed.id = 2;
    filed.master_fd = 15;
    filed.vt_snapshot = Blob::default();
    filed.replay = ReplayState { capacity: 2048, head: 100, bytes: Blob::default() };
    filed.screen_file = Some(ScreenFile { fd: 16, snapshot_len: 3000, ring_len: 700 });
    filed.snapshot_at = Some(650);
    filed.alternate_screen = Some(true);
    filed.shell = None;
    filed.run = None;
    state.processes.insert(1, ProcessState::Pty(filed));
    state
}

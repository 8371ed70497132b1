//! The actor's side of an in-place upgrade (issue 30): its last step, which takes every byte the reader read,
//! makes the emulator's snapshot and hands over its state with a duplicate of the PTY master (`capture`), and
//! its first step in the successor, which starts from that state (`restore`, `restored_vt`).
//!
//! The reader is stopped by the actor itself, once the capture is its only business: it closes the stop pipe
//! the request brought, and takes the reader's chunks until the reader has gone, so the ring's tail is where
//! the successor's reader starts and no byte is read twice or lost. What the child writes meanwhile waits in
//! the PTY. An output that ended inside a control sequence is carried by the snapshot (up to
//! `MAX_CONTINUATION_BYTES`); inside a longer one, the actor reads on from the PTY to the sequence's end (for at
//! most [`SEQUENCE_END_WAIT`]), and what it read past that end goes into the state unprocessed.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, Sender};
use opencode_pty_protocol::{Lifecycle, ProcessInfo, Response};
use opencode_pty_vt::Terminal;

use super::{Actor, Exited, Inbox, Lag, nonzero};
use crate::error::ServiceError;
use crate::process::ending::Ending;
use crate::process::{ExitStatus, Message};
use crate::terminal::io::{READ_CHUNK_BYTES, ReaderOutput, read_within};
use crate::terminal::replay::Replay;
use crate::terminal::shell::Tracker;
use crate::terminal::spawn::PtySpec;
use crate::terminal::title::Titles;
use crate::upgrade::{Blob, ChildState, ExitState, LifeState, ReplayState, TerminalSpec, TerminalState, TitlesState};

use super::run::Runs;

/// How long a capture waits for the reader to stop and hand over what it read (it stops at its next wait, so
/// only a reader the machine does not schedule takes long).
pub(crate) const READER_STOP_WAIT: Duration = Duration::from_secs(10);

/// How long a capture reads on from the PTY, when the output is inside a control sequence longer than the
/// emulator's snapshot carries, for the sequence to end (the rest of an image or a long OSC is usually already
/// in the PTY). Past it the state carries no snapshot, and the successor rebuilds the screen from the ring.
pub(crate) const SEQUENCE_END_WAIT: Duration = Duration::from_millis(100);

/// A capture, as the handle asks for it.
#[derive(Debug)]
pub(crate) struct CaptureRequest {
    /// The write end of the reader's and writer's stop pipe: the actor closes it when it starts the capture.
    pub(crate) stop_pipe: OwnedFd,
    /// Where the state goes.
    pub(crate) reply: Sender<Result<Captured, ServiceError>>,
}

/// What the actor hands over: the state (the child's identity, the writer's leftovers and the shell's script are
/// the handle's to add) and a duplicate of the PTY master, which the state names.
#[derive(Debug)]
pub(crate) struct Captured {
    pub(crate) state: TerminalState,
    pub(crate) master: OwnedFd,
}

impl Actor {
    /// Carries out a capture and answers it; the actor stops after this.
    pub(super) fn capture(&mut self, request: CaptureRequest, inbox: &Inbox) {
        let result = self.capture_state(request.stop_pipe, inbox);
        let _ = request.reply.send(result);
    }

    fn capture_state(&mut self, stop_pipe: OwnedFd, inbox: &Inbox) -> Result<Captured, ServiceError> {
        drop(stop_pipe);
        self.take_everything_read(inbox)?;
        // The child's end, if the wait thread told it (the successor's watch tells it again all the same).
        if !self.exit_taken
            && let Ok(command) = inbox.exit.try_recv()
        {
            self.exit_taken = true;
            self.command(command);
        }
        let (vt_snapshot, unprocessed) = self.snapshot_for_successor();
        // What was read goes out to the subscribers still here (they then reconnect from where they are).
        self.flush();
        self.write_gathered();
        let pending_input = self.parts.input.take_held().concat();
        let master =
            self.parts.master.fd().try_clone().map_err(|e| ServiceError::system("cannot duplicate the PTY", e))?;
        let parts = &self.parts;
        let state = TerminalState {
            id: parts.id,
            child: ChildState { pid: parts.pid, session: None, start: None },
            spec: spec_state(&parts.spec),
            started_at: parts.started_at,
            tty: parts.tty.clone(),
            master_fd: master.as_raw_fd(),
            cols: self.cols,
            rows: self.rows,
            scrollback_lines: parts.scrollback_lines,
            vt_snapshot: Blob(vt_snapshot),
            replay: ReplayState {
                capacity: self.replay.capacity(),
                head: self.replay.head(),
                bytes: Blob(self.replay.kept()),
            },
            unprocessed: Blob(unprocessed),
            pending_input: Blob(pending_input),
            titles: TitlesState {
                osc: self.titles.osc().map(str::to_owned),
                user: self.titles.user().map(str::to_owned),
            },
            controller: self.controller.clone(),
            generation: self.generation,
            foreground: self.foreground.clone(),
            failure: self.failure.clone(),
            life: LifeState {
                child: self.life.child().map(exit_state),
                output_ended: self.life.is_output_ended(),
                exited_at: self.life.published().map(|exited| exited.at),
            },
            shell: self.shell.as_ref().map(Tracker::to_state),
            run: self.runs.to_state(Instant::now()),
        };
        Ok(Captured { state, master })
    }

    /// Takes the chunk waiting for a turn and every chunk the reader queued, until the reader (stopping at its
    /// next wait) has gone or reported the end of the output.
    fn take_everything_read(&mut self, inbox: &Inbox) -> Result<(), ServiceError> {
        if let Some(held) = self.held.take() {
            self.output(&held.bytes, held.read_at);
        }
        let deadline = Instant::now() + READER_STOP_WAIT;
        while !self.life.is_output_ended() {
            match inbox.output.recv_deadline(deadline) {
                Ok(ReaderOutput::Chunk(bytes, read_at)) => self.output(&bytes, read_at),
                Ok(end) => self.reader_output(Ok(end), Lag::CaughtUp),
                // Gone at its stop: every chunk it read has been taken.
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ServiceError::system("cannot capture the terminal", "its reader did not stop"));
                }
            }
        }
        Ok(())
    }

    /// The emulator's snapshot and the bytes read past it: inside a control sequence longer than the snapshot
    /// carries, read on from the PTY (the reader has stopped) to the sequence's end. No snapshot (an empty one)
    /// when that did not come: the successor rebuilds the screen from the ring.
    fn snapshot_for_successor(&mut self) -> (Vec<u8>, Vec<u8>) {
        if let Ok(snapshot) = self.vt.snapshot() {
            return (snapshot, Vec::new());
        }
        let mut unprocessed = Vec::new();
        let deadline = Instant::now() + SEQUENCE_END_WAIT;
        let mut buffer = vec![0u8; READ_CHUNK_BYTES];
        while !self.life.is_output_ended() && !self.vt.in_ground() {
            let Some(read) = read_within(self.parts.master.fd(), &mut buffer, deadline) else { break };
            let taken = self.vt.write_until_ground(&buffer[..read]);
            self.parsed(&buffer[..taken], Instant::now());
            if taken < read {
                unprocessed = buffer[taken..read].to_vec();
                break;
            }
        }
        match self.vt.snapshot() {
            Ok(snapshot) => (snapshot, unprocessed),
            Err(error) => {
                tracing::warn!(%error, "the terminal's screen is handed over as its replay buffer alone");
                (Vec::new(), unprocessed)
            }
        }
    }

    /// Takes on the state an upgrade's predecessor captured (the emulator was made from it already): the ring
    /// with its offsets, the titles, the size, the controller, the lifecycle and the shell, then the input it had
    /// not written and the output it had not processed, in that order.
    pub(super) fn restore(&mut self, state: &TerminalState) {
        self.replay = Replay::restored(state.replay.capacity, state.replay.head, &state.replay.bytes.0);
        self.titles =
            Titles::restored(self.parts.spec.title.clone(), state.titles.osc.clone(), state.titles.user.clone());
        (self.cols, self.rows) = (state.cols, state.rows);
        (self.controller, self.generation) = (state.controller.clone(), state.generation);
        self.foreground = state.foreground.clone();
        self.failure = state.failure.clone();
        self.life = life(&state.life, self.replay.tail());
        self.shell = state.shell.as_ref().map(Tracker::from_state);
        self.runs = Runs::restored(state.run.as_ref(), Instant::now());
        self.enqueue(state.pending_input.0.clone());
        if !state.unprocessed.0.is_empty() {
            self.output(&state.unprocessed.0, Instant::now());
        }
    }
}

/// The emulator an upgrade's state holds: decoded from its snapshot, or, without one (or when it cannot be
/// read), a fresh one of the terminal's size fed the replay ring (what it answered then is dropped).
pub(super) fn restored_vt(state: &TerminalState, scrollback_lines: usize) -> Option<Terminal> {
    if !state.vt_snapshot.0.is_empty() {
        match Terminal::from_snapshot(&state.vt_snapshot.0, scrollback_lines) {
            Ok(vt) => return Some(vt),
            Err(error) => {
                tracing::error!(%error, "the terminal's screen cannot be read from the upgrade's state: rebuilt from its replay buffer")
            }
        }
    }
    let mut vt = Terminal::new(state.cols, state.rows, scrollback_lines).ok()?;
    vt.write(&state.replay.bytes.0);
    vt.take_replies();
    vt.take_title_changed();
    Some(vt)
}

/// The info a terminal rebuilt from `state` publishes before its actor runs.
pub(crate) fn restored_info(state: &TerminalState, spec: &PtySpec) -> ProcessInfo {
    let mut info = super::initial_info(state.id, state.child.pid, state.started_at, spec);
    let titles = Titles::restored(spec.title.clone(), state.titles.osc.clone(), state.titles.user.clone());
    info.lifecycle = match (&state.failure, &state.life) {
        (Some(message), _) => Lifecycle::Failed { message: message.clone() },
        (None, LifeState { child: Some(exit), exited_at: Some(_), .. }) => {
            Lifecycle::Exited { exit_code: exit.exit_code, signal: exit.signal.clone() }
        }
        _ => Lifecycle::Running,
    };
    info.output_head = state.replay.head;
    info.output_tail = state.replay.head + state.replay.bytes.0.len() as u64;
    info.exited_at = state.life.exited_at;
    if let Some(pty) = &mut info.pty {
        pty.title = titles.effective().to_owned();
        pty.user_title = titles.user().map(str::to_owned);
        pty.foreground_process = state.foreground.clone();
        (pty.cols, pty.rows) = (nonzero(state.cols), nonzero(state.rows));
        pty.shell = state.shell.as_ref().map(|shell| Tracker::from_state(shell).state());
    }
    info
}

/// The spec as the state carries it.
pub(crate) fn spec_state(spec: &PtySpec) -> TerminalSpec {
    TerminalSpec {
        program: spec.program.clone(),
        args: spec.args.clone(),
        cwd: spec.cwd.clone(),
        env: spec.env.iter().map(|(key, value)| (key.clone(), value.clone())).collect(),
        group_id: spec.group_id.clone(),
        title: spec.title.clone(),
        cols: spec.cols,
        rows: spec.rows,
        shell_integration: spec.shell_integration,
    }
}

/// The spec a state carries.
pub(crate) fn spec_from_state(spec: &TerminalSpec) -> PtySpec {
    PtySpec {
        program: spec.program.clone(),
        args: spec.args.clone(),
        cwd: spec.cwd.clone(),
        env: spec.env.iter().map(|(key, value)| (key.clone(), value.clone())).collect(),
        group_id: spec.group_id.clone(),
        title: spec.title.clone(),
        cols: spec.cols,
        rows: spec.rows,
        shell_integration: spec.shell_integration,
    }
}

/// How a child ended, as the state carries it.
pub(crate) fn exit_state(exit: &ExitStatus) -> ExitState {
    ExitState { exit_code: exit.exit_code, signal: exit.signal.clone() }
}

/// How a child ended, from the state.
pub(crate) fn exit_status(exit: &ExitState) -> ExitStatus {
    ExitStatus { exit_code: exit.exit_code, signal: exit.signal.clone() }
}

/// The lifecycle a state carries: `exited`, once published, is the same event again (same time, same offset).
fn life(life: &LifeState, final_offset: u64) -> Ending<ExitStatus, Exited> {
    match (&life.child, life.exited_at) {
        (Some(exit), Some(at)) => {
            let event = Arc::new(Message::new(Response::Exited {
                exit_code: exit.exit_code,
                signal: exit.signal.clone(),
                final_offset,
                output_lines: None,
                output_error: None,
                exited_at: at,
            }));
            Ending::Ended { child: exit_status(exit), published: Exited { event, at } }
        }
        (child, _) => Ending::Running { child: child.as_ref().map(exit_status), output_ended: life.output_ended },
    }
}

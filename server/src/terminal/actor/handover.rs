//! The actor's side of an in-place upgrade (issue 30): its last step, which takes every byte the reader read and
//! hands over its state with the emulator's snapshot, its ring and a duplicate of the PTY master (`capture`),
//! and its first step in the successor, which starts from that state (`restore`).
//!
//! The reader is stopped by the actor itself, once the capture is its only business: it closes the stop pipe
//! the request brought, and takes the reader's chunks until the reader has gone, so the ring's tail plus what
//! was read and not processed is where the successor's reader starts, and no byte is read twice or lost. What
//! the child writes meanwhile waits in the PTY. The snapshot is the one prepared while the terminal ran on
//! (`screen_file.rs`), when the ring still holds every byte since; else it is made now, at the ring's tail,
//! after everything read was processed. An output that ended inside a control sequence is carried by the
//! snapshot (up to `MAX_CONTINUATION_BYTES`); inside a longer one, the actor reads on from the PTY to the
//! sequence's end (for at most [`SEQUENCE_END_WAIT`]), and what it read past that end goes into the state
//! unprocessed.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, Sender};
use opencode_pty_protocol::{Lifecycle, ProcessInfo, Response};
use opencode_pty_vt::Screen;

use super::{Actor, Exited, Inbox, Lag, Restored, nonzero};
use crate::error::ServiceError;
use crate::process::ending::Ending;
use crate::process::{ExitStatus, Message};
use crate::terminal::io::{READ_CHUNK_BYTES, ReaderOutput, read_within};
use crate::terminal::replay::Replay;
use crate::terminal::shell::Tracker;
use crate::terminal::spawn::PtySpec;
use crate::terminal::title::Titles;
use crate::upgrade::{
    Blob, ChildState, ExitState, LifeState, ReplayState, ScreenFile, TerminalSpec, TerminalState, TitlesState,
};

use super::run::Runs;

/// How long a capture waits for the reader to stop and hand over what it read (it stops at its next wait, so
/// only a reader the machine does not schedule takes long).
pub(crate) const READER_STOP_WAIT: Duration = Duration::from_secs(10);

/// How long a capture reads on from the PTY, when the output is inside a control sequence longer than the
/// emulator's snapshot carries, for the sequence to end (the rest of an image or a long OSC is usually already
/// in the PTY). Past it the state carries no snapshot, and the successor rebuilds the screen from the ring.
pub(crate) const SEQUENCE_END_WAIT: Duration = Duration::from_millis(100);

/// What the handle asks of the actor for an upgrade: to prepare its screen (it runs on), then its capture.
#[derive(Debug)]
pub(crate) enum HandoverRequest {
    /// Make the emulator's snapshot now, while the terminal runs on (`screen_file.rs`); answered when done,
    /// with the bytes written.
    Prepare(Sender<u64>),
    /// The capture: the actor's last step.
    Capture(CaptureRequest),
}

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
    /// The screen file the state names, when one could be made.
    pub(crate) screen: Option<OwnedFd>,
}

impl Actor {
    /// Carries out a capture and answers it; the actor stops after this.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn capture(&mut self, request: CaptureRequest, inbox: &Inbox) {
        let result = self.capture_state(request.stop_pipe, inbox);
        let _ = request.reply.send(result);
    }

    fn capture_state(&mut self, stop_pipe: OwnedFd, inbox: &Inbox) -> Result<Captured, ServiceError> {
        drop(stop_pipe);
        // Requests held back while the controller was stalled are answered now, in order: the capture ends the
        // subscriptions anyway, and none is dropped unanswered.
        while let Some(command) = self.deferred.pop_front() {
            self.command(command);
        }
        let read = self.take_everything_read(inbox)?;
        // The child's end, if the wait thread told it (the successor's watch tells it again all the same).
        if !self.exit_taken
            && let Ok(command) = inbox.exit.try_recv()
        {
            self.exit_taken = true;
            self.command(command);
        }
        // A restored terminal whose emulator was still on its way takes it now.
        self.emulator();
        let screen = self.screen_for_successor(read);
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
            vt_snapshot: Blob(screen.inline_snapshot),
            replay: ReplayState {
                capacity: self.replay.capacity(),
                head: screen.ring_head,
                bytes: Blob(screen.inline_ring),
            },
            unprocessed: Blob(screen.unprocessed),
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
            screen_file: screen.file.as_ref().map(|(fd, file)| ScreenFile { fd: fd.as_raw_fd(), ..*file }),
            snapshot_at: Some(screen.snapshot_at),
            alternate_screen: Some(self.vt.active_screen() == Screen::Alternate),
        };
        Ok(Captured { state, master, screen: screen.file.map(|(fd, _)| fd) })
    }

    /// Takes the chunk waiting for a turn and every chunk the reader queued, until the reader (stopping at its
    /// next wait) has gone or reported the end of the output, without processing them.
    fn take_everything_read(&mut self, inbox: &Inbox) -> Result<Vec<ReaderOutput>, ServiceError> {
        let mut read = Vec::new();
        if let Some(held) = self.held.take() {
            read.push(ReaderOutput::Chunk(held.bytes, held.read_at));
        }
        let deadline = Instant::now() + READER_STOP_WAIT;
        while !self.life.is_output_ended() {
            match inbox.output.recv_deadline(deadline) {
                Ok(ReaderOutput::Chunk(bytes, read_at)) => read.push(ReaderOutput::Chunk(bytes, read_at)),
                // Its last message.
                Ok(end) => {
                    read.push(end);
                    break;
                }
                // Gone at its stop: every chunk it read has been taken.
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ServiceError::system("cannot capture the terminal", "its reader did not stop"));
                }
            }
        }
        Ok(read)
    }

    /// The emulator's state for the successor, with the ring: the snapshot prepared while the terminal ran on
    /// (see `screen_file.rs`), to which the ring's bytes since are added, with what was read and not processed
    /// handed on as it is; or, without one that the ring still covers (or when the output ended), everything
    /// read is processed now and the snapshot made at the ring's tail.
    fn screen_for_successor(&mut self, read: Vec<ReaderOutput>) -> SuccessorScreen {
        let ended = read.iter().any(|message| !matches!(message, ReaderOutput::Chunk(..)));
        let prepared = self.prepared.take().filter(|prepared| prepared.at >= self.replay.head());
        if let Some(prepared) = prepared.filter(|_| !ended) {
            let unprocessed: Vec<u8> = read
                .into_iter()
                .flat_map(|message| match message {
                    ReaderOutput::Chunk(bytes, _) => bytes,
                    _ => Vec::new(),
                })
                .collect();
            let at = prepared.at;
            match prepared.finish(&self.replay) {
                Ok(file) => return SuccessorScreen::filed(file, at, unprocessed),
                Err(error) => {
                    tracing::warn!(id = self.parts.id, %error, "the prepared screen cannot be handed on: made again");
                    self.output(&unprocessed, Instant::now());
                }
            }
        } else {
            for message in read {
                match message {
                    ReaderOutput::Chunk(bytes, read_at) => self.output(&bytes, read_at),
                    end => self.reader_output(Ok(end), Lag::CaughtUp),
                }
            }
        }
        let (snapshot, unprocessed) = self.snapshot_for_successor();
        let at = self.replay.tail();
        match super::screen_file::write(&snapshot, &self.replay) {
            Ok(file) => SuccessorScreen::filed(file, at, unprocessed),
            Err(error) => {
                tracing::warn!(id = self.parts.id, %error, "the screen is handed on within the state");
                SuccessorScreen {
                    ring_head: self.replay.head(),
                    file: None,
                    inline_snapshot: snapshot,
                    inline_ring: self.replay.kept(),
                    snapshot_at: at,
                    unprocessed,
                }
            }
        }
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

    /// Takes on the state an upgrade's predecessor captured: the ring with its offsets (read from where the
    /// screen's bytes are), the titles, the size, the controller, the lifecycle and the shell, then the input it
    /// had not written and the output it had not processed, in that order. The emulator comes from the
    /// rebuilder (`catch_up.rs`).
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn restore(&mut self, restored: Restored) {
        let Restored { state, screen, pending } = restored;
        let capacity = state.replay.capacity.max(1);
        let ring_len = state.ring_len();
        let kept = ring_len.min(capacity as u64);
        let head = state.replay.head + (ring_len - kept);
        self.replay = match screen.ring(ring_len - kept, kept) {
            Ok(bytes) => Replay::restored(capacity, head, &bytes),
            Err(error) => {
                tracing::error!(id = state.id, %error, "the terminal's replay buffer cannot be read: it starts empty");
                Replay::restored(capacity, state.ring_tail(), &[])
            }
        };
        drop(screen);
        self.rebuilding = Some(pending);
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

/// Where the emulator and the ring go for the successor.
struct SuccessorScreen {
    /// The screen file and what it holds, when one could be made.
    file: Option<(OwnedFd, ScreenFile)>,
    /// Without a file: the snapshot, in the state.
    inline_snapshot: Vec<u8>,
    /// Without a file: the ring's bytes, in the state.
    inline_ring: Vec<u8>,
    /// The offset of the ring's first byte handed on.
    ring_head: u64,
    /// Where the snapshot was taken.
    snapshot_at: u64,
    /// Read and not processed: the successor processes it first.
    unprocessed: Vec<u8>,
}

impl SuccessorScreen {
    /// In the screen file `written`, with the snapshot taken at `at`.
    fn filed((fd, written): (OwnedFd, super::screen_file::Written), at: u64, unprocessed: Vec<u8>) -> Self {
        SuccessorScreen {
            file: Some((fd, written.file)),
            inline_snapshot: Vec::new(),
            inline_ring: Vec::new(),
            ring_head: written.ring_head,
            snapshot_at: at,
            unprocessed,
        }
    }
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
    info.output_tail = state.ring_tail();
    info.output_head = info.output_tail - state.ring_len().min(state.replay.capacity.max(1) as u64);
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
        // The bounds in force travel as the state's `scrollback_lines` and ring capacity.
        scrollback_lines: None,
        replay_bytes: None,
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

#[cfg(test)]
mod tests;

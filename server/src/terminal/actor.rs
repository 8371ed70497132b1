//! The actor thread of one terminal: it creates, uses and drops the `vt::Terminal` and owns every piece of
//! terminal state. Output flows reader → here (replay, emulator, replies → writer) → fan-out, and every
//! request that must be ordered with output is one [`Command`] handled here, one at a time.
//!
//! The loop is one wait for whatever can happen next (see [`Actor::wait`]), always including the stop
//! channel; each ready operation is then one small named step. The terminal's lifecycle is an explicit
//! [`Ending`] (the model pipe processes share) plus the failure, if any. The output path is in
//! `actor/output.rs`, subscriptions and the controller in `actor/control.rs`, the screen and `info` in
//! `actor/screen.rs`, shell integration in `actor/shell.rs`, what the terminal waits for in `actor/input.rs`, the
//! wait itself in `actor/waits.rs`, the requests in `actor/requests.rs`, and an in-place upgrade's steps in
//! `actor/handover.rs`, `actor/screen_file.rs` and `actor/catch_up.rs`. A chunk of output is processed only during one of the daemon's turns
//! (`turns.rs`), or within the small allowance of a terminal that had caught up with its reader.

mod catch_up;
mod compact;
mod control;
pub(crate) mod handover;
mod input;
mod output;
mod requests;
mod run;
mod screen;
mod screen_file;
mod shell;
mod waits;

#[cfg(test)]
pub(crate) use compact::CompactionCounts;
pub use compact::{COMPACT_AFTER, MAX_COMPACT_STEPS};
pub(crate) use input::for_opt_ins;
pub use input::{INPUT_CHECK_DELAYS, INPUT_CHECK_MAX_DELAY};
pub(crate) use screen::initial_info;
pub use waits::PRECISE_WAKE_MARGIN;
use waits::{Deadline, Waits, Wake};

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvError, SelectedOperation, Sender, TryRecvError};
use opencode_pty_protocol::{ProcessInfo, Response};
use opencode_pty_vt::Terminal;

use control::Pace;

use super::coalesce::Coalescer;
use super::command::Command;
use super::fanout::{Fanout, Pending};
use super::io::{PtyMaster, ReaderHolds, ReaderOutput};
use super::rebuild::{Rebuilding, ScreenBytes};
use super::replay::Replay;
use super::shell::{Change, Tracker};
use super::spawn::PtySpec;
use super::title::Titles;
use super::turns::{Allowance, Turn, Turns};
use super::writer::WriterStart;
use crate::process::delivery::Delivery;
use crate::process::ending::Ending;
use crate::process::{Event, ExitStatus, Message, OptIns};

/// The most input and replies a terminal keeps waiting for its writer (4 MiB). Beyond it client input is
/// refused and replies are dropped, so a child that never reads cannot make the daemon buffer without end.
pub const MAX_PENDING_INPUT_BYTES: usize = 4 * 1024 * 1024;

/// Requests a terminal holds back while its controller is stalled; when this many wait, it takes no more
/// commands (their senders wait, bounded by their own timeouts).
pub(super) const MAX_DEFERRED_COMMANDS: usize = 128;

/// Input and replies are handed to the writer in chunks of at most this many bytes, so the writer's queue
/// (`WRITER_QUEUE_CHUNKS` chunks) holds at most 64 KiB beyond [`MAX_PENDING_INPUT_BYTES`].
pub(super) const WRITE_CHUNK_BYTES: usize = 8 * 1024;

use crate::time::now_ms;

/// The actor thread's timer slack: how late the kernel may wake it after the output batch's deadline (1 µs;
/// the default is 50 µs, which every echo would pay on top of the coalescing window).
pub const COALESCE_TIMER_SLACK_NS: u64 = 1_000;

/// What the actor starts from.
pub(crate) struct ActorParts {
    pub(crate) id: u64,
    pub(crate) spec: PtySpec,
    pub(crate) pid: u32,
    pub(crate) started_at: u64,
    /// The PTY master, for resizes and `tcgetpgrp` and the input the actor writes itself (the reader and
    /// writer have their own duplicates).
    pub(crate) master: Arc<PtyMaster>,
    pub(crate) tty: Option<PathBuf>,
    pub(crate) replay_bytes: usize,
    pub(crate) scrollback_lines: usize,
    /// How long the terminal must stay quiet before its memory is compressed (`actor/compact.rs`); `None`:
    /// never.
    pub(crate) compact_after: Option<Duration>,
    /// To hand to subscriptions (their drop detaches them).
    pub(crate) commands: Sender<Command>,
    /// The delivery of input and the emulator's replies to the PTY: written by the actor itself while the
    /// writer thread holds nothing, else through the writer (see `io::writer`).
    pub(crate) input: Delivery<Vec<u8>>,
    pub(crate) stop: Receiver<()>,
    /// Where the actor publishes its info for requests it is too busy to answer (see `PtyHandle::last_info`).
    pub(crate) last_info: Arc<Mutex<ProcessInfo>>,
    /// The daemon's turns at output processing: a chunk of output is processed only during a turn.
    pub(crate) turns: Turns,
    /// The nonce of the terminal's shell integration marks, for a terminal started with it.
    pub(crate) shell_nonce: Option<String>,
    /// Whether the reader holds a chunk it has not queued yet (see `Actor::caught_up_with_child`).
    pub(crate) reader_holds: ReaderHolds,
    /// Where an upgrade's capture is asked for (`handover.rs`): always waited on, whatever else waits.
    pub(crate) capture: Receiver<handover::HandoverRequest>,
    /// The state an upgrade's predecessor captured, for a terminal rebuilt from it.
    pub(crate) restored: Option<Restored>,
    /// The writer thread, until the actor starts it: the first time the PTY does not take input at once
    /// (`writer.rs`). `None` once started, or when no writer is to run (tests that take the input themselves).
    pub(crate) writer: Option<WriterStart>,
}

/// What a terminal restored by an upgrade starts from: its state, where its screen's bytes are, and its
/// emulator on its way (`terminal/rebuild.rs`).
#[derive(Debug)]
pub(crate) struct Restored {
    pub(crate) state: Box<crate::upgrade::TerminalState>,
    pub(crate) screen: Arc<ScreenBytes>,
    pub(crate) pending: Rebuilding,
}

/// The `exited` event, once published, and when.
struct Exited {
    event: Arc<Message>,
    at: u64,
}

struct Actor {
    parts: ActorParts,
    vt: Terminal,
    replay: Replay,
    titles: Titles,
    cols: u16,
    rows: u16,
    fanout: Fanout,
    batch: Coalescer,
    /// The attachment id of the controller, if any.
    controller: Option<String>,
    /// Grows each time the controller changes.
    generation: u64,
    /// The child's end and the end of the output as they become known, then `exited`.
    life: Ending<ExitStatus, Exited>,
    /// Why the terminal broke, when that happened before the child's end was known; `info` reports it over
    /// everything else.
    failure: Option<String>,
    foreground: Option<String>,
    /// What the terminal waits for, and when to look again (`actor/input.rs`).
    input: input::InputWatch,
    /// Requests held back while the controller is stalled, in arrival order.
    deferred: VecDeque<Command>,
    /// Whether the wait thread's report was taken (or its channel closed): it is waited for no more.
    exit_taken: bool,
    /// The turn at output processing this actor holds, if any (see `turns.rs`).
    turn: Option<Turn>,
    /// A chunk taken from the reader without a turn: it waits for one, and no more output is taken meanwhile.
    held: Option<HeldChunk>,
    /// What may be processed without a turn once caught up with the reader.
    allowance: Allowance,
    /// The shell, for a terminal with shell integration (`shell/`).
    shell: Option<Tracker>,
    /// The changes the shell's last marks made (kept to reuse its allocation).
    shell_changes: Vec<Change>,
    /// `run` and `wait_command`: the waiters and the text of the command they wait for.
    runs: run::Runs,
    /// The reader's queue, only to see whether it is empty (the loop's `Inbox` receives from it).
    reader_queue: Receiver<ReaderOutput>,
    /// A restored terminal's emulator while it is rebuilt elsewhere (`vt` is a blank one meanwhile).
    rebuilding: Option<Rebuilding>,
    /// The screen prepared for an upgrade's capture (`screen_file.rs`).
    prepared: Option<screen_file::Prepared>,
    /// Compressing the terminal's memory once it is quiet (`compact.rs`).
    compaction: compact::Compaction,
}

/// A chunk of output waiting for a turn.
struct HeldChunk {
    bytes: Vec<u8>,
    read_at: Instant,
    /// Where the actor stood against the reader when it took the chunk.
    lag: Lag,
}

/// Where the actor stood against its reader when it took a chunk: it decides where the chunk's coalescing
/// window starts, and whether the chunk may go without a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lag {
    /// Nothing more was queued: the actor keeps up (a quiet terminal, an echo).
    CaughtUp,
    /// More chunks were queued behind it.
    Behind,
}

impl Lag {
    /// Where the actor stands against a reader whose queue is `output`.
    fn of<T>(output: &Receiver<T>) -> Lag {
        if output.is_empty() { Lag::CaughtUp } else { Lag::Behind }
    }
}

/// What the actor waits on.
struct Inbox {
    commands: Receiver<Command>,
    /// The wait thread's one report of how the child ended (`ChildExited` or `WaitFailed`): a channel of its
    /// own with room for it, so that reporting never blocks the daemon's one wait thread.
    exit: Receiver<Command>,
    output: Receiver<ReaderOutput>,
    stop: Receiver<()>,
    /// The daemon's turns at output processing.
    turns: Turns,
    /// An upgrade's capture.
    capture: Receiver<handover::HandoverRequest>,
}

/// Whether the loop goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

/// Runs the actor until it is told to stop (the stop channel closes) or every command sender is gone.
/// `output` carries the reader's chunks and then the end of the output, `commands` everything else.
pub(crate) fn run(
    parts: Box<ActorParts>,
    commands: Receiver<Command>,
    output: Receiver<ReaderOutput>,
    exit: Receiver<Command>,
) {
    #[cfg(test)]
    gate::pass(parts.id);
    // The coalescing window is the one timed wait on the output path: wake at its end, not up to the kernel's
    // default 50 µs slack later. Failure only leaves the default.
    let _ = nix::sys::prctl::set_timerslack(COALESCE_TIMER_SLACK_NS);
    let Some(mut actor) = Actor::start(parts, &output) else { return };
    let inbox = Inbox {
        commands,
        exit,
        output,
        stop: actor.parts.stop.clone(),
        turns: actor.parts.turns.clone(),
        capture: actor.parts.capture.clone(),
    };
    actor.run(&inbox);
}

impl Actor {
    /// The actor, on the heap, with its emulator (a restored terminal's blank one until the rebuilt one comes,
    /// `catch_up.rs`) and its first info published. In a frame of its own, which has returned before the actor
    /// first waits (see [`Actor::run`]).
    #[inline(never)]
    fn start(mut parts: Box<ActorParts>, output: &Receiver<ReaderOutput>) -> Option<Box<Actor>> {
        let restored = parts.restored.take();
        let vt = match &restored {
            Some(restored) => Terminal::new(restored.state.cols, restored.state.rows, 0).ok(),
            // Refused sizes are caught at validation; nothing sensible is left to do without one.
            None => Terminal::new(parts.spec.cols, parts.spec.rows, parts.scrollback_lines).ok(),
        }?;
        let mut actor = Box::new(Actor::new(*parts, vt, output.clone()));
        if let Some(restored) = restored {
            actor.restore(restored);
        }
        // The foreground process as the terminal starts (its child has exec'd by now), learnt before any
        // subscriber can exist, so that the first `get` or `list` does not announce it as a change.
        actor.refresh(OptIns::NONE);
        actor.publish_info();
        Some(actor)
    }

    fn new(mut parts: ActorParts, vt: Terminal, reader_queue: Receiver<ReaderOutput>) -> Actor {
        let shell = parts.shell_nonce.take().map(Tracker::new);
        let now = Instant::now();
        Actor {
            compaction: compact::Compaction::new(parts.compact_after, now),
            replay: Replay::new(parts.replay_bytes.max(1)),
            titles: Titles::new(parts.spec.title.clone()),
            cols: parts.spec.cols,
            rows: parts.spec.rows,
            parts,
            vt,
            fanout: Fanout::default(),
            batch: Coalescer::default(),
            controller: None,
            generation: 0,
            life: Ending::default(),
            failure: None,
            foreground: None,
            input: input::InputWatch::default(),
            deferred: VecDeque::new(),
            exit_taken: false,
            turn: None,
            held: None,
            allowance: Allowance::new(now),
            shell,
            shell_changes: Vec::new(),
            runs: run::Runs::default(),
            reader_queue,
            rebuilding: None,
            prepared: None,
        }
    }

    /// The loop. Its stack: while the terminal is quiet the thread sits in [`Self::wait`], and every page of
    /// stack above that wait stays resident for the terminal's life, so the frames down to it are kept small
    /// (the actor and its parts on the heap, made in a frame that has returned) and each step the wait takes
    /// runs in a frame of its own below it (`#[inline(never)]`), whose pages are given back right before the
    /// wait that follows a compression pass (`compact.rs`): an idle terminal's actor keeps the pages its wait
    /// touches, not the deepest its output ever took it (issue 31).
    fn run(&mut self, inbox: &Inbox) {
        loop {
            // A batch whose time is up goes out before anything else (a busy Select could otherwise hold it).
            if self.batch.deadline().is_some_and(|deadline| Instant::now() >= deadline) {
                self.flush();
            }
            // So is a look at what the terminal waits for (scheduled only while a subscriber asked for it).
            if self.input.next().is_some() {
                self.look_at_input_if_due(Instant::now());
            }
            // And a `run` or `wait_command` whose time is up.
            if self.runs.next_deadline().is_some() {
                self.runs_due(Instant::now());
            }
            // Requests held back while the controller was stalled go first, in order, once it is not.
            if self.controller_pace() != Pace::Stalled
                && let Some(command) = self.deferred.pop_front()
            {
                self.command(command);
                continue;
            }
            if self.wait(inbox) == Flow::Stop {
                return;
            }
        }
    }

    /// One wait for everything the actor can do next, then that one step. Input waiting for the writer and
    /// events held for subscribers are offered alongside, so the actor never blocks on one slow party; the
    /// stop channel is always part of it. A batch whose deadline passes first is flushed.
    fn wait(&mut self, inbox: &Inbox) -> Flow {
        // Gathered output is written before any wait, unless more output is already queued to join it.
        if self.fanout.has_gathered() {
            let output_next =
                !self.life.is_output_ended() && !inbox.output.is_empty() && self.controller_pace() == Pace::Keeping;
            if !output_next {
                self.write_gathered();
            }
        }
        // After that write: what the socket did not take may have put the controller behind.
        let pace = self.controller_pace();
        // The turn goes back once this terminal has caught up with its reader, has used its share, or must not
        // take output now, so that other busy terminals get theirs.
        if self.turn.as_ref().is_some_and(|turn| turn.used_up() || inbox.output.is_empty() || pace != Pace::Keeping) {
            self.turn = None;
        }
        let deliveries = self.fanout.pending();
        let writer = self.parts.input.waiting();
        let rebuilt = self.rebuilding.as_ref().map(|pending| pending.ready.clone());
        let mut waits = Waits::new();
        waits.recv(&inbox.stop, Wake::Stop);
        waits.recv(&inbox.capture, Wake::Capture);
        if let Some(rebuilt) = &rebuilt {
            waits.recv(rebuilt, Wake::Rebuilt);
        }
        // Output waits while the controller is behind: that is its backpressure on the reader and child. A chunk
        // taken without a turn waits for one, and the reader's queue (then the PTY, then the child) meanwhile.
        if pace == Pace::Keeping && !self.life.is_output_ended() {
            if self.held.is_some() {
                waits.recv(inbox.turns.waiting(), Wake::Turn);
            } else {
                waits.recv(&inbox.output, Wake::Output);
            }
        }
        if self.deferred.len() < MAX_DEFERRED_COMMANDS {
            waits.recv(&inbox.commands, Wake::Command);
            if !self.exit_taken {
                waits.recv(&inbox.exit, Wake::Exit);
            }
        }
        if let Some(writer) = &writer {
            waits.send(writer, Wake::Writer);
        }
        for (n, delivery) in deliveries.iter().enumerate() {
            waits.send(&delivery.sender, Wake::Delivery(n));
        }
        // The batch's deadline, or the next look at what the terminal waits for, the next waiter's answer or the
        // next step of compressing a quiet terminal when that comes first.
        let next = self
            .input
            .next()
            .into_iter()
            .chain(self.runs.next_deadline())
            .chain(self.compaction.deadline(Instant::now()))
            .min();
        let deadline = match (self.batch.deadline(), next) {
            (None, None) => Deadline::Never,
            (Some(at), look) if self.batch.wants_precise_flush() && look.is_none_or(|look| at <= look) => {
                Deadline::Exact(at)
            }
            (batch, look) => Deadline::At(batch.into_iter().chain(look).min().expect("one of them is set")),
        };
        // Last before the wait, once a compression pass has ended: the stack below goes back (`compact.rs`).
        self.release_stack();
        let Some((ready, operation)) = waits.select(deadline) else {
            let now = Instant::now();
            if self.batch.deadline().is_some_and(|deadline| now >= deadline) {
                self.flush();
            }
            self.look_at_input_if_due(now);
            self.runs_due(now);
            // Last, and only when nothing else was ready: one step of compressing a quiet terminal's memory.
            self.compact_if_due(now);
            return Flow::Continue;
        };
        match ready {
            Wake::Stop => {
                let _ = operation.recv(&inbox.stop);
                return Flow::Stop;
            }
            // The last step: the state goes to the handle, and the actor stops (leaving the PTY and the child
            // as they are). The handle holds the other end while the terminal runs.
            Wake::Capture => match operation.recv(&inbox.capture) {
                Ok(handover::HandoverRequest::Prepare(done)) => {
                    let _ = done.send(self.prepare());
                }
                Ok(handover::HandoverRequest::Capture(request)) => {
                    self.capture(request, inbox);
                    return Flow::Stop;
                }
                Err(_) => return Flow::Stop,
            },
            Wake::Rebuilt => {
                let handed = operation.recv(rebuilt.as_ref().expect("listed with its receiver")).ok().flatten();
                self.rebuilt_elsewhere(handed);
            }
            Wake::Writer => self.hand_to_writer(operation, writer.as_ref().expect("listed with its sender")),
            Wake::Delivery(n) => self.deliver(operation, &deliveries[n]),
            Wake::Output => {
                let message = operation.recv(&inbox.output);
                let lag = Lag::of(&inbox.output);
                match message {
                    // Without a turn, a chunk is processed only by a terminal that had caught up with its reader
                    // (it was quiet, or it keeps up) and within its allowance; otherwise it waits for a turn.
                    Ok(ReaderOutput::Chunk(bytes, read_at))
                        if self.turn.is_none()
                            && !(lag == Lag::CaughtUp && self.allowance.take(bytes.len(), Instant::now())) =>
                    {
                        self.held = Some(HeldChunk { bytes, read_at, lag });
                    }
                    message => self.reader_output(message, lag),
                }
            }
            Wake::Turn => {
                // The token is the turn: `Turn`'s drop gives it back.
                if operation.recv(inbox.turns.waiting()).is_ok() {
                    self.turn = Some(inbox.turns.taken());
                }
                if let Some(held) = self.held.take() {
                    self.reader_output(Ok(ReaderOutput::Chunk(held.bytes, held.read_at)), held.lag);
                }
            }
            // The command channel never closes while this actor holds a sender for subscriptions.
            Wake::Command => match operation.recv(&inbox.commands) {
                Ok(command) => self.take(command, pace),
                Err(_) => return Flow::Stop,
            },
            Wake::Exit => {
                self.exit_taken = true;
                // Closed without a report: the watch was cancelled, which only a stop does.
                if let Ok(command) = operation.recv(&inbox.exit) {
                    self.take(command, pace);
                }
            }
        }
        Flow::Continue
    }

    /// The oldest pending chunk of input and replies, into the writer's queue.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    fn hand_to_writer(&mut self, operation: SelectedOperation<'_>, writer: &Sender<Vec<u8>>) {
        // Gone: the writer stopped (it failed, and said so), and the delivery dropped what it held, which can
        // never be written.
        let _ = self.parts.input.send_held(operation, writer);
    }

    /// The oldest event held for a subscriber, into its channel; a subscriber that is gone is detached.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    fn deliver(&mut self, operation: SelectedOperation<'_>, target: &Pending) {
        // The deliveries were listed from the fan-out just before this wait, and nothing has changed it since.
        if let Some(gone) = self.fanout.send_held(operation, target) {
            self.detached(vec![gone]);
        }
    }

    /// What the reader sent: a chunk goes down the output path; the end of the output (or the reader's failure,
    /// or its channel closing without either) is one ordered step.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    fn reader_output(&mut self, message: Result<ReaderOutput, RecvError>, lag: Lag) {
        let failure = match message {
            // Caught up with the reader: the chunk's window counts from its read. Behind it, from now, so chunks
            // that queued while the actor was busy (or waiting for its turn) still merge into full batches.
            Ok(ReaderOutput::Chunk(bytes, read_at)) => {
                if let Some(turn) = &mut self.turn {
                    turn.bytes += bytes.len();
                }
                let window_from = match lag {
                    Lag::CaughtUp => read_at,
                    Lag::Behind => Instant::now(),
                };
                return self.output(&bytes, window_from);
            }
            Ok(ReaderOutput::End) => None,
            Ok(ReaderOutput::Failed(message)) => Some(message),
            // The reader stopped without saying why; the output has ended all the same.
            Err(_) => Some("the PTY reader stopped unexpectedly".to_owned()),
        };
        self.in_order(|actor| {
            if let Some(message) = failure {
                actor.fail(message);
            }
            actor.shell_output_ended();
            actor.life.output_ended();
            actor.maybe_exited();
        });
    }

    /// Records the first failure, unless the child's end is known: once the child has exited, a broken PTY is
    /// expected and does not make the exit a failure.
    fn fail(&mut self, message: String) {
        if self.life.child().is_none() && self.failure.is_none() {
            self.failure = Some(message);
        }
    }

    /// Publishes `exited` once both the exit and the end of the output are known.
    fn maybe_exited(&mut self) {
        // Being terminated: the end seen now may be the kill's own, which is never published (SPEC: `terminate`
        // stops the threads before it kills; the stop can still be waiting beside the child's end in one wait).
        if !matches!(self.parts.stop.try_recv(), Err(TryRecvError::Empty)) {
            return;
        }
        let Some(exit) = self.life.ready().cloned() else { return };
        self.flush();
        let at = now_ms().max(self.parts.started_at);
        let event = Arc::new(Message::new(Response::Exited {
            exit_code: exit.exit_code,
            signal: exit.signal,
            final_offset: self.replay.tail(),
            output_lines: None,
            output_error: None,
            exited_at: at,
        }));
        self.life.settle(|_| Exited { event: event.clone(), at });
        self.publish(&Event::Message(event));
    }
}

#[cfg(test)]
pub(crate) mod gate;

fn nonzero(value: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(value).unwrap_or(std::num::NonZeroU16::MIN)
}

#[cfg(test)]
mod tests;

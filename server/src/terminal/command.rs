//! The closed set of commands a terminal's actor handles, and the values they carry. Everything the spec calls
//! "one ordered actor command" is one variant, so its ordering guarantee is the order of this queue. (The
//! reader's output has its own channel and type, `io::ReaderOutput`; stopping is the stop channel's.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use opencode_pty_protocol::{ProcessInfo, Response, Role};

use crate::error::ServiceError;
use crate::process::{ExistingController, ExitStatus, OptIns, ProcessSubscription, ReplayRead};

/// A one-shot reply channel, and when its requester stops waiting for it.
#[derive(Debug)]
pub(crate) struct Reply<T> {
    sender: Sender<Result<T, ServiceError>>,
    deadline: Instant,
}

impl<T> Reply<T> {
    /// A reply its requester waits for until `deadline`.
    pub(crate) fn new(sender: Sender<Result<T, ServiceError>>, deadline: Instant) -> Reply<T> {
        Reply { sender, deadline }
    }

    /// Answers (nobody may be listening any more).
    pub(crate) fn send(self, result: Result<T, ServiceError>) {
        let _ = self.sender.send(result);
    }

    /// Whether the requester has given up: the command must not be carried out, since its caller was told it
    /// failed (a retried `write` would otherwise type twice).
    pub(crate) fn expired(&self, now: Instant) -> bool {
        now >= self.deadline
    }
}

/// The actor's end of a `run` or `wait_command`: one answer, the command's end or, once `deadline` passes,
/// `command_running`.
#[derive(Debug)]
pub(crate) struct CommandWaiter {
    pub(crate) sender: Sender<Result<Response, ServiceError>>,
    pub(crate) deadline: Instant,
    /// Shared with the requester's [`CommandWait`]: held here alone once the requester has gone.
    alive: Arc<()>,
}

impl CommandWaiter {
    /// Whether the requester has gone (its connection closed): nobody reads the answer any more.
    pub(crate) fn gone(&self) -> bool {
        Arc::strong_count(&self.alive) == 1
    }

    /// Answers (the requester may have gone meanwhile).
    pub(crate) fn answer(self, result: Result<Response, ServiceError>) {
        let _ = self.sender.try_send(result);
    }
}

/// The requester's end of a `run` or `wait_command`: where the one answer arrives. It disconnects without one
/// when the terminal stops (terminated, or the daemon stopping).
#[derive(Debug)]
pub(crate) struct CommandWait {
    receiver: Receiver<Result<Response, ServiceError>>,
    _alive: Arc<()>,
}

impl CommandWait {
    /// Where the answer arrives.
    pub(crate) fn receiver(&self) -> &Receiver<Result<Response, ServiceError>> {
        &self.receiver
    }
}

/// A waiter whose answer is due by `timeout` from now, and its requester's end.
pub(crate) fn command_wait(timeout: Duration) -> (CommandWaiter, CommandWait) {
    let (sender, receiver) = bounded(1);
    let alive = Arc::new(());
    let deadline = Instant::now() + timeout;
    (CommandWaiter { sender, deadline, alive: alive.clone() }, CommandWait { receiver, _alive: alive })
}

/// Everything a terminal's actor does, in the order it arrives.
#[derive(Debug)]
pub(crate) enum Command {
    /// Writing to the PTY failed (writer thread).
    WriterFailed(String),
    /// The child exited (wait thread).
    ChildExited(ExitStatus),
    /// Waiting for the child failed (wait thread).
    WaitFailed(String),
    /// Raw input from the controller (or anyone while there is none).
    Write { attachment: Option<String>, data: Vec<u8>, reply: Reply<()> },
    /// A resize by the controller (or anyone while there is none).
    Resize { attachment: Option<String>, cols: u16, rows: u16, reply: Reply<()> },
    /// Promote `attachment`, then resize if its size differs.
    Control { attachment: String, cols: u16, rows: u16, reply: Reply<()> },
    /// `Control`, then queue `data`: one step, so a size report reaches the child before the bytes.
    Input { attachment: String, cols: u16, rows: u16, data: Vec<u8>, reply: Reply<()> },
    /// Set or clear the user title.
    Rename { title: Option<String>, reply: Reply<()> },
    /// Screen text, checkpoint and cursor (and the features' members `opt_ins` names in its `process`).
    Snapshot { opt_ins: OptIns, reply: Reply<Response> },
    /// The last rows of the active screen (and the features' members `opt_ins` names in its `process`).
    ReadRows { rows: Option<u16>, opt_ins: OptIns, reply: Reply<Response> },
    /// The shell's last commands (shell integration only).
    Commands { limit: Option<usize>, reply: Reply<Response> },
    /// Type `command` at the shell's prompt; `waiter` gets its end (shell integration only).
    Run { command: String, waiter: CommandWaiter, reply: Reply<()> },
    /// `wait_command`: `waiter` gets the end of command `command_id` (shell integration only).
    EndOf { command_id: u64, waiter: CommandWaiter, reply: Reply<()> },
    /// Kept output from an offset.
    Replay { offset: u64, reply: Reply<ReplayRead> },
    /// Attach a subscriber: its replay and every later event cross this one step.
    Subscribe {
        offset: u64,
        attachment: String,
        role: Role,
        existing_controller: ExistingController,
        /// The features whose events (and `attached` members) the subscriber asked for.
        events: OptIns,
        reply: Reply<ProcessSubscription>,
    },
    /// A subscription ended.
    Detach { key: u64 },
    /// Refresh the foreground process (and what the terminal waits for, when `opt_ins` asks for it), then
    /// describe the process with the members `opt_ins` names.
    Info { opt_ins: OptIns, reply: Reply<ProcessInfo> },
    /// What compressing the terminal's memory has done so far (tests).
    #[cfg(test)]
    Compaction { reply: Reply<super::actor::CompactionCounts> },
}

impl Command {
    /// Whether this is a request whose requester has given up waiting (see [`Reply::expired`]).
    pub(crate) fn expired(&self, now: Instant) -> bool {
        match self {
            Command::Write { reply, .. }
            | Command::Resize { reply, .. }
            | Command::Control { reply, .. }
            | Command::Input { reply, .. }
            | Command::Rename { reply, .. } => reply.expired(now),
            Command::Snapshot { reply, .. } | Command::ReadRows { reply, .. } | Command::Commands { reply, .. } => {
                reply.expired(now)
            }
            Command::Run { reply, .. } | Command::EndOf { reply, .. } => reply.expired(now),
            Command::Replay { reply, .. } => reply.expired(now),
            Command::Subscribe { reply, .. } => reply.expired(now),
            Command::Info { reply, .. } => reply.expired(now),
            #[cfg(test)]
            Command::Compaction { reply } => reply.expired(now),
            Command::WriterFailed(_) | Command::ChildExited(_) | Command::WaitFailed(_) | Command::Detach { .. } => {
                false
            }
        }
    }

    /// Whether a stalled controller must not hold this command back: a takeover (the way to replace that
    /// controller), a detach, and `list`/`get` (which fall back to published info anyway).
    pub(crate) fn bypasses_stalled_controller(&self) -> bool {
        #[cfg(test)]
        if matches!(self, Command::Compaction { .. }) {
            return true;
        }
        matches!(
            self,
            Command::Subscribe { role: Role::Controller, existing_controller: ExistingController::Replace, .. }
                | Command::Detach { .. }
                | Command::Info { .. }
        )
    }
}

//! The state one pipe process shares between its handle, its reader and its wait thread, behind one lock: the
//! output offsets and line count, the exit, the metadata, and who is waiting for `exited`.
//!
//! Output is counted in one step (offset and lines together), so every `info` shows a matching pair.
//! `exited` is published once, when both the exit status and the end of the output are known; from then on
//! the lifecycle and `exited_at` say so, and waiters and subscribers get the same response.

use std::sync::{Arc, Mutex, MutexGuard};

use crossbeam_channel::{Receiver, Sender, bounded};
use opencode_pty_protocol::{Lifecycle, Response};
use serde_json::{Map, Value};

use crate::error::ServiceError;
use crate::terminal::Event;

/// Events in one pipe subscription's channel: `attached` and `exited` are all it ever carries, so a send
/// never finds it full.
pub const PIPE_SUBSCRIPTION_EVENTS: usize = 2;

/// Waiters (and, separately, subscribers) one pipe process keeps before it refuses more. A waiter whose
/// receiver was dropped stays counted until the exit, so this bounds what a client that keeps waiting and
/// disconnecting can make the daemon hold. It matches the daemon's connection limit.
pub const MAX_PIPE_WAITERS: usize = 1024;

/// How the child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExitStatus {
    /// The exit status, when it exited normally.
    pub(crate) exit_code: Option<u32>,
    /// The signal's name (`SIGTERM`), when a signal killed it.
    pub(crate) signal: Option<String>,
}

/// What a waiter receives: `exited`, or why there will be none.
pub type WaitResult = Result<Response, ServiceError>;

/// Everything that changes after the start.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Bytes read from the pipe so far.
    pub(crate) tail: u64,
    /// Newlines written to the file so far.
    pub(crate) lines: u64,
    /// Why writing the file stopped.
    pub(crate) output_error: Option<String>,
    pub(crate) metadata: Map<String, Value>,
    /// Reading the pipe or waiting for the child failed before the exit was published.
    pub(crate) failure: Option<String>,
    exit: Option<ExitStatus>,
    output_ended: bool,
    /// The published `exited`, once both halves are known.
    pub(crate) exited: Option<Arc<Response>>,
    pub(crate) exited_at: Option<u64>,
    /// Terminated: nothing more is published.
    pub(crate) terminated: bool,
    waiters: Vec<Sender<WaitResult>>,
    subscribers: Vec<Sender<Event>>,
}

impl State {
    /// The lifecycle as `info` reports it.
    pub(crate) fn lifecycle(&self) -> Lifecycle {
        match (&self.failure, &self.exited, &self.exit) {
            (Some(message), _, _) => Lifecycle::Failed { message: message.clone() },
            (None, Some(_), Some(exit)) => Lifecycle::Exited { exit_code: exit.exit_code, signal: exit.signal.clone() },
            _ => Lifecycle::Running,
        }
    }

    /// A new waiter: answered at once when the outcome is already known.
    pub(crate) fn add_waiter(&mut self, id: u64) -> Receiver<WaitResult> {
        let (sender, receiver) = bounded(1);
        if self.terminated {
            let _ = sender.try_send(Err(ServiceError::Terminated));
        } else if let Some(exited) = &self.exited {
            let _ = sender.try_send(Ok(exited.as_ref().clone()));
        } else if self.waiters.len() >= MAX_PIPE_WAITERS {
            let _ = sender.try_send(Err(too_many(id, "waiters")));
        } else {
            self.waiters.push(sender);
        }
        receiver
    }

    /// A new subscriber whose first event is `attached`; it also gets `exited` at once when that is known.
    pub(crate) fn add_subscriber(&mut self, id: u64, attached: Response) -> Result<Receiver<Event>, ServiceError> {
        if self.terminated {
            return Err(ServiceError::NotFound(id));
        }
        if self.exited.is_none() && self.subscribers.len() >= MAX_PIPE_WAITERS {
            return Err(too_many(id, "subscribers"));
        }
        let (sender, receiver) = bounded(PIPE_SUBSCRIPTION_EVENTS);
        let _ = sender.try_send(Event::Message(Arc::new(attached)));
        match &self.exited {
            Some(exited) => {
                let _ = sender.try_send(Event::Message(exited.clone()));
            }
            None => self.subscribers.push(sender),
        }
        Ok(receiver)
    }
}

fn too_many(id: u64, what: &str) -> ServiceError {
    ServiceError::invalid(format!("process {id} has too many {what} (at most {MAX_PIPE_WAITERS})"))
}

/// The state and what every thread needs to publish.
#[derive(Debug)]
pub(crate) struct Shared {
    started_at: u64,
    state: Mutex<State>,
}

impl Shared {
    pub(crate) fn new(started_at: u64, metadata: Map<String, Value>) -> Shared {
        Shared { started_at, state: Mutex::new(State { metadata, ..State::default() }) }
    }

    /// The state, locked (a panic elsewhere never poisons it for good).
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a chunk read from the pipe: its length, the newlines that reached the file, and (the first
    /// time) why writing the file stopped. One step, so offsets and lines always match.
    pub(crate) fn output(&self, bytes: usize, newlines: u64, write_error: Option<String>) {
        let mut state = self.lock();
        state.tail += bytes as u64;
        state.lines += newlines;
        if state.output_error.is_none() {
            state.output_error = write_error;
        }
    }

    /// The reader is done (the file is closed): EOF, the linger after the exit ran out, or a read failed.
    pub(crate) fn output_ended(&self, failure: Option<String>) {
        let mut state = self.lock();
        state.output_ended = true;
        if state.failure.is_none() && state.exited.is_none() {
            state.failure = failure;
        }
        self.maybe_publish(&mut state);
    }

    /// The child exited (it stays a zombie until terminate).
    pub(crate) fn child_exited(&self, exit: ExitStatus) {
        let mut state = self.lock();
        state.exit = Some(exit);
        self.maybe_publish(&mut state);
    }

    /// Waiting for the child failed: the exit will never be known.
    pub(crate) fn wait_failed(&self, message: String) {
        let mut state = self.lock();
        if state.failure.is_none() && state.exited.is_none() {
            state.failure = Some(message);
        }
    }

    /// Publishes `exited` once both the exit status and the end of the output are known.
    fn maybe_publish(&self, state: &mut State) {
        let (Some(exit), true, None, false) = (&state.exit, state.output_ended, &state.exited, state.terminated) else {
            return;
        };
        let exited_at = crate::now_ms().max(self.started_at);
        let response = Arc::new(Response::Exited {
            exit_code: exit.exit_code,
            signal: exit.signal.clone(),
            final_offset: state.tail,
            output_lines: Some(state.lines),
            output_error: state.output_error.clone(),
            exited_at,
        });
        state.exited_at = Some(exited_at);
        state.exited = Some(response.clone());
        for waiter in state.waiters.drain(..) {
            let _ = waiter.try_send(Ok(response.as_ref().clone()));
        }
        // Each channel holds at most `attached` so far, so `exited` fits; dropping the sender then ends it.
        for subscriber in state.subscribers.drain(..) {
            let _ = subscriber.try_send(Event::Message(response.clone()));
        }
    }

    /// Marks the process terminated: nothing more is published, subscriptions end, and waiters are answered
    /// with [`ServiceError::Terminated`] when `answer_waiters`, or else just disconnected.
    pub(crate) fn terminate(&self, answer_waiters: bool) {
        let mut state = self.lock();
        state.terminated = true;
        for waiter in state.waiters.drain(..) {
            if answer_waiters {
                let _ = waiter.try_send(Err(ServiceError::Terminated));
            }
        }
        state.subscribers.clear();
    }
}

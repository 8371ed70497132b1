//! The state one pipe process shares between its handle, its reader and its wait thread, behind one lock: the
//! output offsets and line count, the exit, the metadata, and who is waiting for `exited`.
//!
//! Output is counted in one step (offset and lines together), so every `info` shows a matching pair. The final
//! answer is published once, when both the child's end (its exit status, or the failure to learn it) and the
//! end of the output are known: `exited`, or an error when waiting for the child failed. From then on the
//! lifecycle and `exited_at` say so, and waiters and subscribers get the same answer.
//!
//! Waiters and subscribers are keyed entries, and each is removed when its guard ([`PipeWait`], the
//! subscription) is dropped, so clients that left never count against the caps. A subscriber's entry is the
//! actor side of its delivery (`process::delivery`), as a terminal's subscriber's is.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crossbeam_channel::{Receiver, Sender, bounded};
use opencode_pty_protocol::{Lifecycle, Response};
use serde_json::{Map, Value};

use crate::error::ServiceError;
use crate::process::delivery::{self, Delivery, Recipient};
use crate::process::ending::Ending;
use crate::process::{Event, ExitStatus, Message, ProcessSubscription, StopReason};
use crate::upgrade::{ExitState, PipeChildEnd, PipeProcessState};

/// Events in one pipe subscription's channel: `attached` and the final answer (`exited`, or `error` when
/// waiting for the child failed) are all it ever carries, so a send never finds it full (and nothing is held).
pub(super) const PIPE_SUBSCRIPTION_EVENTS: usize = 2;

/// Nothing a pipe subscription carries is written by anyone but its connection (no output), so nothing is
/// gathered.
const NO_GATHERING: usize = 0;

/// Waiters (and, separately, subscribers) one pipe process keeps before it refuses more. Dropping a
/// [`PipeWait`] or a subscription removes its entry at once, so this bounds only the clients that are
/// still waiting. It matches the daemon's connection limit.
pub const MAX_PIPE_WAITERS: usize = 1024;

/// What the wait thread learned about the child.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ChildEnd {
    /// It exited (it stays a zombie until terminate).
    Exited(ExitStatus),
    /// Waiting for it failed (it may have been reaped by someone else): its exit will never be known, and its
    /// pid must never be signalled or waited for again.
    Lost(String),
}

/// What a waiter receives: `exited`, or why there will be none.
pub(super) type WaitResult = Result<Response, ServiceError>;

/// The final answer, once published.
#[derive(Debug, Clone)]
enum Published {
    /// `exited`, for waiters and subscribers alike.
    Exited(Arc<Message>),
    /// Waiting for the child failed: waiters get [`ServiceError::WaitFailed`], subscribers an `error` event.
    Failed { reason: String, event: Arc<Message> },
}

impl Published {
    fn wait_result(&self) -> WaitResult {
        match self {
            Published::Exited(message) => Ok(message.response().clone()),
            Published::Failed { reason, .. } => Err(ServiceError::WaitFailed(reason.clone())),
        }
    }

    fn event(&self) -> Event {
        match self {
            Published::Exited(response) | Published::Failed { event: response, .. } => Event::Message(response.clone()),
        }
    }
}

/// Everything that changes after the start.
#[derive(Debug, Default)]
pub(crate) struct PipeProgress {
    /// Bytes read from the pipe so far.
    pub(crate) tail: u64,
    /// Newlines written to the file so far.
    pub(crate) lines: u64,
    /// Why writing the file (or reading the pipe) stopped.
    pub(crate) output_error: Option<String>,
    pub(crate) metadata: Map<String, Value>,
    /// The serialized size of `metadata`, as counted against the daemon's total.
    pub(crate) metadata_bytes: usize,
    /// The child's end and the output's, then the final answer (the model a terminal's actor shares).
    ending: Ending<ChildEnd, Published>,
    pub(crate) exited_at: Option<u64>,
    /// Terminated: nothing more is published.
    pub(crate) terminated: bool,
    next_key: u64,
    waiters: BTreeMap<u64, Sender<WaitResult>>,
    subscribers: BTreeMap<u64, Delivery<Event>>,
}

impl PipeProgress {
    /// The lifecycle as `info` reports it: it changes when the final answer is published, never before.
    pub(crate) fn lifecycle(&self) -> Lifecycle {
        match self.ending.published() {
            Some(Published::Exited(message)) => match message.response() {
                Response::Exited { exit_code, signal, .. } => {
                    Lifecycle::Exited { exit_code: *exit_code, signal: signal.clone() }
                }
                _ => Lifecycle::Running,
            },
            Some(Published::Failed { reason, .. }) => {
                Lifecycle::Failed { message: ServiceError::WaitFailed(reason.clone()).to_string() }
            }
            None => Lifecycle::Running,
        }
    }

    /// Why the child's pid must not be signalled (waiting for it failed), if it must not.
    pub(crate) fn lost(&self) -> Option<&str> {
        match self.ending.child() {
            Some(ChildEnd::Lost(reason)) => Some(reason),
            _ => None,
        }
    }

    fn key(&mut self) -> u64 {
        self.next_key += 1;
        self.next_key
    }

    /// A new waiter: answered at once when the outcome is already known (then it holds no entry).
    fn add_waiter(&mut self, id: u64) -> (Receiver<WaitResult>, Option<u64>) {
        let (sender, receiver) = bounded(1);
        if self.terminated {
            let _ = sender.try_send(Err(ServiceError::Terminated));
        } else if let Some(published) = self.ending.published() {
            let _ = sender.try_send(published.wait_result());
        } else if self.waiters.len() >= MAX_PIPE_WAITERS {
            let _ = sender.try_send(Err(too_many(id, "waiters")));
        } else {
            let key = self.key();
            self.waiters.insert(key, sender);
            return (receiver, Some(key));
        }
        (receiver, None)
    }

    /// A new subscriber whose first event is `attached`; it also gets the final answer at once when that is
    /// known (then it holds no entry).
    fn add_subscriber(&mut self, id: u64, attached: Response) -> Result<(Recipient<Event>, Option<u64>), ServiceError> {
        if self.terminated {
            return Err(ServiceError::NotFound(id));
        }
        if self.ending.published().is_none() && self.subscribers.len() >= MAX_PIPE_WAITERS {
            return Err(too_many(id, "subscribers"));
        }
        let (mut delivery, recipient) = delivery::channel(PIPE_SUBSCRIPTION_EVENTS, NO_GATHERING);
        delivery.push(Event::message(attached));
        match self.ending.published() {
            Some(published) => {
                delivery.push(published.event());
                delivery.close();
                Ok((recipient, None))
            }
            None => {
                let key = self.key();
                self.subscribers.insert(key, delivery);
                Ok((recipient, Some(key)))
            }
        }
    }
}

/// The final answer for a child that ended so, with the output's counts: `exited` (at `at`), or the failure.
fn published(child: &ChildEnd, tail: u64, lines: u64, output_error: &Option<String>, at: u64) -> Published {
    match child {
        ChildEnd::Exited(exit) => Published::Exited(Arc::new(Message::new(Response::Exited {
            exit_code: exit.exit_code,
            signal: exit.signal.clone(),
            final_offset: tail,
            output_lines: Some(lines),
            output_error: output_error.clone(),
            exited_at: at,
        }))),
        ChildEnd::Lost(reason) => {
            let message = ServiceError::WaitFailed(reason.clone()).to_string();
            Published::Failed { reason: reason.clone(), event: Arc::new(Message::new(Response::Error { message })) }
        }
    }
}

fn too_many(id: u64, what: &'static str) -> ServiceError {
    ServiceError::TooMany { id, what, limit: MAX_PIPE_WAITERS }
}

/// A pipe process's progress behind its lock, shared by the handle, the reader and the wait thread.
#[derive(Debug)]
pub(crate) struct PipeState {
    started_at: u64,
    progress: Mutex<PipeProgress>,
}

impl PipeState {
    pub(crate) fn new(started_at: u64, metadata: Map<String, Value>, metadata_bytes: usize) -> PipeState {
        PipeState {
            started_at,
            progress: Mutex::new(PipeProgress { metadata, metadata_bytes, ..PipeProgress::default() }),
        }
    }

    /// Progress as an upgrade's state left it: the counts, the metadata (of `metadata_bytes`), and the final
    /// answer, published already (the same answer, at the same time) when both ends were known.
    pub(crate) fn restored(started_at: u64, state: &PipeProcessState, metadata_bytes: usize) -> PipeState {
        let child = state.child_end.as_ref().map(|end| match end {
            PipeChildEnd::Exited(exit) => {
                ChildEnd::Exited(ExitStatus { exit_code: exit.exit_code, signal: exit.signal.clone() })
            }
            PipeChildEnd::Lost(reason) => ChildEnd::Lost(reason.clone()),
        });
        let ending = match child {
            Some(child) if state.output_ended => {
                let at = state.exited_at.unwrap_or_else(|| crate::time::now_ms().max(started_at));
                let published = published(&child, state.tail, state.lines, &state.output_error, at);
                Ending::Ended { child, published }
            }
            child => Ending::Running { child, output_ended: state.output_ended },
        };
        let progress = PipeProgress {
            tail: state.tail,
            lines: state.lines,
            output_error: state.output_error.clone(),
            metadata: state.metadata.clone(),
            metadata_bytes,
            ending,
            exited_at: state.exited_at,
            ..PipeProgress::default()
        };
        PipeState { started_at, progress: Mutex::new(progress) }
    }

    /// Writes the progress into an upgrade's state: the counts, the metadata and the lifecycle.
    pub(crate) fn fill(&self, state: &mut PipeProcessState) {
        let progress = self.lock();
        (state.tail, state.lines) = (progress.tail, progress.lines);
        state.output_error = progress.output_error.clone();
        state.metadata = progress.metadata.clone();
        state.child_end = progress.ending.child().map(|end| match end {
            ChildEnd::Exited(exit) => {
                PipeChildEnd::Exited(ExitState { exit_code: exit.exit_code, signal: exit.signal.clone() })
            }
            ChildEnd::Lost(reason) => PipeChildEnd::Lost(reason.clone()),
        });
        state.output_ended = progress.ending.is_output_ended();
        state.exited_at = progress.exited_at;
    }

    /// The state, locked (a panic elsewhere never poisons it for good).
    pub(crate) fn lock(&self) -> MutexGuard<'_, PipeProgress> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
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

    /// The reader is done (the file is closed): EOF, the linger after the exit ran out, or reading the pipe
    /// failed (`failure`, kept as the output error unless one is already set).
    pub(crate) fn output_ended(&self, failure: Option<String>) {
        let mut state = self.lock();
        state.ending.output_ended();
        if state.output_error.is_none() {
            state.output_error = failure;
        }
        self.maybe_publish(&mut state);
    }

    /// The child exited (it stays a zombie until terminate).
    pub(crate) fn child_exited(&self, exit: ExitStatus) {
        let mut state = self.lock();
        state.ending.child_ended(ChildEnd::Exited(exit));
        self.maybe_publish(&mut state);
    }

    /// Waiting for the child failed: its exit will never be known, and its pid is never touched again. The
    /// failure is published (as the final answer) once the output has ended too.
    pub(crate) fn wait_failed(&self, reason: String) {
        let mut state = self.lock();
        state.ending.child_ended(ChildEnd::Lost(reason));
        self.maybe_publish(&mut state);
    }

    /// Publishes the final answer once both the child's end and the end of the output are known.
    fn maybe_publish(&self, state: &mut PipeProgress) {
        if state.terminated {
            return;
        }
        let PipeProgress { ending, tail, lines, output_error, exited_at, waiters, subscribers, .. } = state;
        let published = ending.settle(|child| {
            let at = crate::time::now_ms().max(self.started_at);
            if let ChildEnd::Exited(_) = child {
                *exited_at = Some(at);
            }
            published(child, *tail, *lines, output_error, at)
        });
        let Some(published) = published else { return };
        for (_, waiter) in std::mem::take(waiters) {
            let _ = waiter.try_send(published.wait_result());
        }
        // Each channel holds at most `attached` so far, so the answer fits; closing the delivery then ends it
        // after the answer.
        for (_, mut subscriber) in std::mem::take(subscribers) {
            subscriber.push(published.event());
            subscriber.close();
        }
    }

    /// Marks the process terminated: nothing more is published, subscriptions end, and waiters are answered
    /// with [`ServiceError::Terminated`] on a client's `terminate`, or just disconnected on shutdown. Returns
    /// the metadata bytes it held, now released.
    pub(crate) fn terminate(&self, reason: StopReason) -> usize {
        let mut state = self.lock();
        state.terminated = true;
        for (_, waiter) in std::mem::take(&mut state.waiters) {
            if reason == StopReason::Terminate {
                let _ = waiter.try_send(Err(ServiceError::Terminated));
            }
        }
        // Their channels end after what they hold; closed rather than let go, as the few bytes of a pipe's
        // events are still written to a client slow to read them.
        for (_, subscriber) in std::mem::take(&mut state.subscribers) {
            subscriber.close();
        }
        std::mem::take(&mut state.metadata_bytes)
    }
}

/// A pending `wait`: [`Self::receiver`] gets `exited` (or why there is none). Dropping it removes the waiter
/// at once, so a client that left never counts against [`MAX_PIPE_WAITERS`].
#[derive(Debug)]
pub struct PipeWait {
    receiver: Receiver<WaitResult>,
    entry: Option<(Arc<PipeState>, u64)>,
}

impl PipeWait {
    pub(crate) fn new(shared: &Arc<PipeState>, id: u64) -> PipeWait {
        let (receiver, key) = shared.lock().add_waiter(id);
        PipeWait { receiver, entry: key.map(|key| (shared.clone(), key)) }
    }

    /// Where the one answer arrives; it disconnects without one when the daemon stops.
    pub fn receiver(&self) -> &Receiver<WaitResult> {
        &self.receiver
    }
}

impl Drop for PipeWait {
    fn drop(&mut self) {
        if let Some((shared, key)) = self.entry.take() {
            shared.lock().waiters.remove(&key);
        }
    }
}

/// Subscribes to pipe process `id` with the `attached` that `attached` builds from the state, under the same
/// lock, so nothing can be published in between: the subscription gets `attached`, then the final answer.
/// Dropping it removes the subscriber at once, so a client that left never counts against
/// [`MAX_PIPE_WAITERS`].
pub(super) fn subscribe(
    shared: &Arc<PipeState>,
    id: u64,
    attached: impl FnOnce(&PipeProgress) -> Result<Response, ServiceError>,
) -> Result<ProcessSubscription, ServiceError> {
    let mut state = shared.lock();
    let attached = attached(&state)?;
    let (recipient, key) = state.add_subscriber(id, attached)?;
    drop(state);
    let entry = key.map(|key| (shared.clone(), key));
    Ok(ProcessSubscription::new(recipient, move || {
        if let Some((shared, key)) = entry {
            shared.lock().subscribers.remove(&key);
        }
    }))
}

//! The actor thread of one terminal: it creates, uses and drops the `vt::Terminal` and owns every piece of
//! terminal state. Output flows reader → here (replay, emulator, replies → writer) → fan-out, and every
//! request that must be ordered with output is one [`Command`] handled here, one at a time.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::collections::VecDeque;

use crossbeam_channel::{Receiver, Select, Sender, TrySendError};
use opencode_pty_protocol::{Lifecycle, MAX_FRAME_BYTES, MAX_ROWS_BYTES, Mode, ProcessInfo, PtyInfo, Response, Role};
use opencode_pty_vt::{MAX_CHECKPOINT_BYTES, Terminal};

use super::coalesce::{Batch, Coalescer};
use super::command::{Command, ExitInfo};
use super::fanout::{Event, Fanout, Subscriber, Subscription};
use super::replay::{Replay, ReplayRead};
use super::spawn::PtySpec;
use super::title::Titles;
use crate::error::ServiceError;

/// The most input and replies a terminal keeps waiting for its writer (4 MiB). Beyond it client input is
/// refused and replies are dropped, so a child that never reads cannot make the daemon buffer without end.
pub const MAX_PENDING_INPUT_BYTES: usize = 4 * 1024 * 1024;

/// Requests a terminal holds back while its controller is stalled; when this many wait, it takes no more
/// commands (their senders wait, bounded by their own timeouts).
pub const MAX_DEFERRED_COMMANDS: usize = 128;

/// Input and replies are handed to the writer in chunks of at most this many bytes, so the writer's queue
/// (`WRITER_QUEUE_CHUNKS` chunks) holds at most 1 MiB beyond [`MAX_PENDING_INPUT_BYTES`].
pub const WRITE_CHUNK_BYTES: usize = 8 * 1024;

pub(crate) use crate::now_ms;

/// What the actor starts from.
pub(crate) struct ActorParts {
    pub(crate) id: u64,
    pub(crate) spec: PtySpec,
    pub(crate) pid: u32,
    pub(crate) started_at: u64,
    /// The PTY master, for resizes and `tcgetpgrp` (the reader and writer have their own duplicates).
    pub(crate) master_fd: OwnedFd,
    pub(crate) tty: Option<PathBuf>,
    pub(crate) replay_bytes: usize,
    pub(crate) scrollback_lines: usize,
    /// To hand to subscriptions (their drop detaches them).
    pub(crate) commands: Sender<Command>,
    pub(crate) writer: Sender<Vec<u8>>,
    pub(crate) stop: Receiver<()>,
    /// Where the actor publishes its info for requests it is too busy to answer.
    pub(crate) last_info: Arc<Mutex<Option<ProcessInfo>>>,
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
    /// Input and replies not yet taken by the writer, in order, and their size.
    pending: VecDeque<Vec<u8>>,
    pending_bytes: usize,
    /// The attachment id of the controller, if any.
    controller: Option<String>,
    /// Grows each time the controller changes.
    generation: u64,
    exit: Option<ExitInfo>,
    eof: bool,
    failure: Option<String>,
    /// The `exited` event, once sent.
    exited: Option<Arc<Response>>,
    exited_at: Option<u64>,
    foreground: Option<String>,
    /// The reader has ended and dropped its channel.
    output_closed: bool,
    /// Requests held back while the controller is stalled, in arrival order.
    deferred: VecDeque<Command>,
}

/// Runs the actor until it is told to stop or every command sender is gone.
/// `output` carries the reader's commands (output, then its end), `commands` everything else.
pub(crate) fn run(parts: ActorParts, commands: Receiver<Command>, output: Receiver<Command>) {
    let vt = match Terminal::new(parts.spec.cols, parts.spec.rows, parts.scrollback_lines) {
        Ok(vt) => vt,
        // Refused sizes are caught at validation; nothing sensible is left to do here.
        Err(_) => return,
    };
    let mut actor = Actor {
        replay: Replay::new(parts.replay_bytes.max(1)),
        titles: Titles::new(parts.spec.title.clone()),
        cols: parts.spec.cols,
        rows: parts.spec.rows,
        parts,
        vt,
        fanout: Fanout::default(),
        batch: Coalescer::default(),
        pending: VecDeque::new(),
        pending_bytes: 0,
        controller: None,
        generation: 0,
        exit: None,
        eof: false,
        failure: None,
        exited: None,
        exited_at: None,
        foreground: None,
        output_closed: false,
        deferred: VecDeque::new(),
    };
    actor.publish_info();
    actor.run(&commands, &output);
}

impl Actor {
    fn run(&mut self, commands: &Receiver<Command>, output: &Receiver<Command>) {
        let stop = self.parts.stop.clone();
        let writer = self.parts.writer.clone();
        loop {
            // A batch whose time is up goes out before anything else (a busy Select could otherwise hold it).
            if self.batch.deadline().is_some_and(|deadline| Instant::now() >= deadline) {
                self.flush();
            }
            let controller = self.controller.as_deref().and_then(|c| self.fanout.get(c));
            let (behind, stalled) = controller.map_or((false, false), |c| (c.is_behind(), c.is_stalled()));
            // Requests held back while the controller was stalled go first, in order, once it is not.
            if !stalled && let Some(command) = self.deferred.pop_front() {
                self.command(command);
                continue;
            }
            // One wait for everything the actor can do next. Input waiting for the writer and events held for
            // subscribers are offered alongside, so the actor never blocks on one slow party.
            let pending = self.fanout.pending();
            let mut select = Select::new();
            let stop_index = select.recv(&stop);
            // Output waits while the controller is behind: that is its backpressure on the reader and child.
            let output_index = (!behind && !self.output_closed).then(|| select.recv(output));
            let command_index = (self.deferred.len() < MAX_DEFERRED_COMMANDS).then(|| select.recv(commands));
            let write_index = (!self.pending.is_empty()).then(|| select.send(&writer));
            let first_delivery = pending.first().map(|p| select.send(&p.sender));
            for p in pending.iter().skip(1) {
                select.send(&p.sender);
            }
            let operation = match self.batch.deadline() {
                Some(deadline) => match select.select_deadline(deadline) {
                    Ok(operation) => operation,
                    Err(_) => {
                        self.flush();
                        continue;
                    }
                },
                None => select.select(),
            };
            let index = operation.index();
            if index == stop_index {
                let _ = operation.recv(&stop);
                return;
            } else if Some(index) == write_index {
                let bytes = self.pending.pop_front().unwrap_or_default();
                self.pending_bytes -= bytes.len();
                if operation.send(&writer, bytes).is_err() {
                    // The writer stopped (it failed, and said so): nothing queued can be written.
                    self.pending.clear();
                    self.pending_bytes = 0;
                }
            } else if let Some(first) = first_delivery
                && index >= first
            {
                let target = &pending[index - first];
                let event = self.fanout.take_pending(target.key).expect("a held event");
                if operation.send(&target.sender, event).is_err()
                    && let Some(gone) = self.fanout.remove(target.key)
                {
                    self.detached(vec![gone]);
                }
            } else if Some(index) == output_index {
                match operation.recv(output) {
                    Ok(Command::Output(bytes)) => self.output(&bytes),
                    Ok(other) => self.command(other),
                    Err(_) => {
                        // The reader's channel closed: after its end (EOF or a failure), or because the reader
                        // stopped without saying why; then the output has ended all the same.
                        self.output_closed = true;
                        if !self.eof {
                            self.command(Command::ReaderFailed("the PTY reader stopped unexpectedly".into()));
                        }
                    }
                }
            } else {
                debug_assert_eq!(Some(index), command_index);
                // The command channel never closes while this actor holds a sender for subscriptions.
                let Ok(command) = operation.recv(commands) else { return };
                if matches!(command, Command::Shutdown) {
                    return;
                }
                if stalled && !command.bypasses_stalled_controller() {
                    // Held back, in order, until the controller reads again or goes (bounded; when full, no
                    // more commands are taken).
                    self.deferred.push_back(command);
                } else {
                    self.command(command);
                }
            }
        }
    }

    /// Carries out one command that is not output, after letting the pending output out (in order). A request
    /// whose requester gave up waiting is dropped unanswered.
    fn command(&mut self, command: Command) {
        if command.expired(Instant::now()) {
            return;
        }
        if matches!(command, Command::Shutdown) {
            return;
        }
        self.flush();
        self.prune_dropped();
        self.handle(command);
        self.publish_info();
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::Output(_) | Command::Shutdown => unreachable!("handled by the loop"),
            Command::ReaderEof => {
                self.eof = true;
                self.maybe_exited();
            }
            Command::ReaderFailed(message) => {
                self.fail(message);
                self.eof = true;
                self.maybe_exited();
            }
            Command::WriterFailed(message) => self.fail(message),
            Command::WaitFailed(message) => {
                self.fail(message);
                self.exit = Some(ExitInfo { exit_code: None, signal: None });
                self.maybe_exited();
            }
            Command::ChildExited(exit) => {
                self.exit = Some(exit);
                self.maybe_exited();
            }
            Command::Write { attachment, data, reply } => {
                let result = self.authorize(attachment.as_deref()).and_then(|()| self.queue_input(data));
                reply.send(result);
            }
            Command::Resize { attachment, cols, rows, reply } => {
                let result = self.authorize(attachment.as_deref()).and_then(|()| self.resize(cols, rows));
                reply.send(result);
            }
            Command::Control { attachment, cols, rows, reply } => {
                reply.send(self.control(&attachment, cols, rows));
            }
            Command::Input { attachment, cols, rows, data, reply } => {
                let result = self.control(&attachment, cols, rows).and_then(|()| self.queue_input(data));
                reply.send(result);
            }
            Command::Rename { title, reply } => {
                if let Some(title) = self.titles.set_user(title) {
                    self.emit(Response::TitleChanged { title });
                }
                reply.send(Ok(()));
            }
            Command::Snapshot { reply } => {
                reply.send(self.snapshot());
            }
            Command::ReadRows { rows, reply } => {
                reply.send(self.read_rows(rows));
            }
            Command::Replay { offset, reply } => {
                reply.send(self.replay.read_from(offset).map_err(|e| ServiceError::invalid(e.to_string())));
            }
            Command::Subscribe { offset, attachment, role, takeover, reply } => {
                reply.send(self.subscribe(offset, attachment, role, takeover));
            }
            Command::Detach { key } => {
                if let Some(subscriber) = self.fanout.remove(key) {
                    self.detached(vec![subscriber]);
                }
            }
            Command::Info { reply } => {
                self.refresh_foreground();
                reply.send(Ok(self.info()));
            }
        }
    }

    /// Output path: replay, then the emulator, then its replies to the writer, then (batched) fan-out.
    fn output(&mut self, bytes: &[u8]) {
        let (start, _end) = self.replay.append(bytes);
        self.vt.write(bytes);
        let replies = self.vt.take_replies();
        self.queue_replies(replies);
        let batches = self.batch.push(start, bytes, Instant::now());
        self.publish_batches(batches);
        if self.vt.take_title_changed()
            && let Some(title) = self.titles.set_osc(self.vt.title())
        {
            self.flush();
            self.emit(Response::TitleChanged { title });
        }
    }

    /// Fans out the pending output batch.
    fn flush(&mut self) {
        let batch = self.batch.take();
        self.publish_batches(batch);
    }

    fn publish_batches(&mut self, batches: impl IntoIterator<Item = Batch>) {
        let mut any = false;
        for (start, bytes) in batches {
            if !any {
                self.publish_info();
                any = true;
            }
            self.publish(&Event::Output { start, bytes });
        }
    }

    /// Stores the current info where requests can read it while the actor is busy.
    fn publish_info(&self) {
        let info = self.info();
        *self.parts.last_info.lock().unwrap_or_else(|e| e.into_inner()) = Some(info);
    }

    /// Publishes a JSON event, after any output read before it (D6).
    fn emit(&mut self, response: Response) {
        self.flush();
        self.publish(&Event::Message(Arc::new(response)));
    }

    fn publish(&mut self, event: &Event) {
        let removed = self.fanout.publish(event, self.controller.as_deref());
        if !removed.is_empty() {
            self.detached(removed);
        }
    }

    /// Queues client input for the PTY, after everything queued before it. Fails, queuing nothing, when more
    /// than [`MAX_PENDING_INPUT_BYTES`] would be waiting (the child is not reading its input).
    fn queue_input(&mut self, bytes: Vec<u8>) -> Result<(), ServiceError> {
        if self.pending_bytes + bytes.len() > MAX_PENDING_INPUT_BYTES {
            return Err(ServiceError::invalid(format!(
                "terminal input queue is full ({} bytes waiting): the program is not reading its input",
                self.pending_bytes
            )));
        }
        self.enqueue(bytes);
        Ok(())
    }

    /// Queues the emulator's replies; past [`MAX_PENDING_INPUT_BYTES`] they are dropped, since a program
    /// that floods queries without reading the answers cannot be answered anyway.
    fn queue_replies(&mut self, bytes: Vec<u8>) {
        if self.pending_bytes + bytes.len() <= MAX_PENDING_INPUT_BYTES {
            self.enqueue(bytes);
        }
    }

    /// Hands bytes to the writer, in chunks of at most [`WRITE_CHUNK_BYTES`]: now if its queue has room (and
    /// nothing is waiting before them), else kept (and counted) for the main loop.
    fn enqueue(&mut self, bytes: Vec<u8>) {
        for chunk in bytes.chunks(WRITE_CHUNK_BYTES) {
            if self.pending.is_empty() {
                match self.parts.writer.try_send(chunk.to_vec()) {
                    Ok(()) | Err(TrySendError::Disconnected(_)) => continue,
                    Err(TrySendError::Full(_)) => {}
                }
            }
            self.pending_bytes += chunk.len();
            self.pending.push_back(chunk.to_vec());
        }
    }

    fn fail(&mut self, message: String) {
        // Once the child has exited, a broken PTY is expected and does not make the exit a failure.
        if self.exit.is_none() && self.exited.is_none() && self.failure.is_none() {
            self.failure = Some(message);
        }
    }

    /// Publishes `exited` once both the exit and the end of the output are known.
    fn maybe_exited(&mut self) {
        let (Some(exit), true, None) = (self.exit.clone(), self.eof, self.exited.as_ref()) else { return };
        self.flush();
        let exited_at = now_ms().max(self.parts.started_at);
        self.exited_at = Some(exited_at);
        let response = Arc::new(Response::Exited {
            exit_code: exit.exit_code,
            signal: exit.signal,
            final_offset: self.replay.tail(),
            output_lines: None,
            output_error: None,
            exited_at,
        });
        self.exited = Some(response.clone());
        self.publish(&Event::Message(response));
    }

    /// `write` and `resize` need the controller's attachment; without a controller, a null one is allowed.
    fn authorize(&self, attachment: Option<&str>) -> Result<(), ServiceError> {
        match (&self.controller, attachment) {
            (None, None) => Ok(()),
            (Some(controller), Some(attachment)) if controller == attachment => Ok(()),
            (Some(_), None) => Err(ServiceError::invalid("terminal input requires the active controller attachment")),
            (_, Some(attachment)) => {
                Err(ServiceError::invalid(format!("attachment {attachment} is not the terminal controller")))
            }
        }
    }

    /// Resizes the PTY and the emulator in one step and publishes `resized` with a fresh checkpoint.
    fn resize(&mut self, cols: u16, rows: u16) -> Result<(), ServiceError> {
        // The handle checked the size already; this keeps an unchecked one from reaching the PTY or emulator.
        crate::bounds::check_size(cols, rows)?;
        super::spawn::resize(&self.parts.master_fd, cols, rows)
            .map_err(|e| ServiceError::invalid(format!("resizing the PTY failed: {e}")))?;
        self.vt.resize(cols, rows).map_err(|e| ServiceError::invalid(e.to_string()))?;
        (self.cols, self.rows) = (cols, rows);
        // An in-band size report (mode 2048) is one of these replies: it reaches the child before later input.
        let replies = self.vt.take_replies();
        self.queue_replies(replies);
        // The size has changed by now; say so when its checkpoint cannot be made (SPEC C4, D8).
        let checkpoint = self.vt.vt_checkpoint().map_err(|e| {
            ServiceError::invalid(format!(
                "the terminal was resized to {cols}x{rows}, but its resized event cannot be sent: {e}"
            ))
        })?;
        self.emit(Response::Resized {
            cols: nonzero(cols),
            rows: nonzero(rows),
            generation: self.generation,
            checkpoint_base64: BASE64.encode(checkpoint),
        });
        Ok(())
    }

    /// Makes `attachment` the controller (if it is not) and resizes to its size (if that differs).
    fn control(&mut self, attachment: &str, cols: u16, rows: u16) -> Result<(), ServiceError> {
        if self.fanout.get_mut(attachment).is_none() {
            return Err(ServiceError::invalid(format!("attachment {attachment} is not subscribed")));
        }
        if self.controller.as_deref() != Some(attachment) {
            self.promote(Some(attachment.to_owned()));
        }
        if (cols, rows) != (self.cols, self.rows) {
            self.resize(cols, rows)?;
        }
        Ok(())
    }

    /// Changes the controller (demoting the previous one, which stays subscribed) and tells everyone.
    fn promote(&mut self, attachment: Option<String>) {
        self.generation += 1;
        if let Some(attachment) = &attachment
            && let Some(subscriber) = self.fanout.get_mut(attachment)
        {
            subscriber.last_control = self.generation;
        }
        self.controller = attachment.clone();
        self.emit(Response::ControllerChanged { attachment_id: attachment, generation: self.generation });
    }

    /// Subscribers that went away; if the controller was among them, the most recent former controller still
    /// subscribed takes over (or nobody, if none ever controlled).
    fn detached(&mut self, gone: Vec<Subscriber>) {
        let lost_controller = gone.iter().any(|s| self.controller.as_deref() == Some(s.attachment.as_str()));
        if !lost_controller {
            return;
        }
        let next = self.fanout.iter().filter(|s| s.last_control > 0).max_by_key(|s| s.last_control);
        let next = next.map(|s| s.attachment.clone());
        self.promote(next);
    }

    fn prune_dropped(&mut self) {
        let dropped = self.fanout.prune_dropped();
        if !dropped.is_empty() {
            self.detached(dropped);
        }
    }

    /// Attaches a subscriber: `attached` (with the replay from `offset`) is its first event, and live events
    /// continue at the replay's end, because both happen in this one command.
    fn subscribe(
        &mut self,
        offset: u64,
        attachment: String,
        role: Role,
        takeover: bool,
    ) -> Result<Subscription, ServiceError> {
        if role == Role::Controller
            && let Some(controller) = &self.controller
            && *controller != attachment
            && !takeover
        {
            return Err(ServiceError::invalid(format!("terminal already has controller {controller}")));
        }
        let replay = self.replay.read_from(offset).map_err(|e| ServiceError::invalid(e.to_string()))?;
        // Reusing an attachment id replaces its old subscription.
        if let Some(old) = self.fanout.remove_attachment(&attachment) {
            drop(old);
        }
        let (key, subscription) = self.fanout.add(attachment.clone(), role, self.parts.commands.clone());
        let becomes_controller = role == Role::Controller && self.controller.as_deref() != Some(attachment.as_str());
        if becomes_controller {
            // Counted now, so `attached` carries the generation after this attach.
            self.generation += 1;
            self.controller = Some(attachment.clone());
            if let Some(subscriber) = self.fanout.get_mut(&attachment) {
                subscriber.last_control = self.generation;
            }
        } else if role == Role::Controller
            && let Some(subscriber) = self.fanout.get_mut(&attachment)
        {
            subscriber.last_control = self.generation;
        }
        let role =
            if self.controller.as_deref() == Some(attachment.as_str()) { Role::Controller } else { Role::Observer };
        let attached = attached(self.info(), role, self.generation, replay);
        self.fanout.send_to(key, Event::Message(Arc::new(attached)));
        // After an exit, `exited` comes right after `attached`, before anything else.
        if let Some(exited) = &self.exited {
            self.fanout.send_to(key, Event::Message(exited.clone()));
        }
        if becomes_controller {
            let changed = Response::ControllerChanged { attachment_id: Some(attachment), generation: self.generation };
            self.emit(changed);
        }
        Ok(subscription)
    }

    fn snapshot(&mut self) -> Result<Response, ServiceError> {
        self.refresh_foreground();
        let text = self.vt.plain_text().map_err(|e| ServiceError::invalid(e.to_string()))?;
        let cursor = self.vt.cursor();
        let mut response = Response::Snapshot {
            process: self.info(),
            text,
            checkpoint_base64: String::new(),
            cursor_x: cursor.x,
            cursor_y: cursor.y,
        };
        // The checkpoint gets what the frame has left after the rest of the answer (B6), in base64's 4 bytes
        // per 3, up to its own limit (C4).
        let rest = serde_json::to_vec(&response).map_or(MAX_FRAME_BYTES, |json| json.len());
        let budget = (MAX_FRAME_BYTES.saturating_sub(rest) / 4 * 3).min(MAX_CHECKPOINT_BYTES);
        let checkpoint = self.vt.vt_checkpoint_within(budget).map_err(|e| ServiceError::invalid(e.to_string()))?;
        if let Response::Snapshot { checkpoint_base64, .. } = &mut response {
            *checkpoint_base64 = BASE64.encode(checkpoint);
        }
        Ok(response)
    }

    fn read_rows(&mut self, rows: Option<u16>) -> Result<Response, ServiceError> {
        let count = match rows {
            Some(0) => return Err(ServiceError::invalid("row count must be positive")),
            Some(rows) => usize::from(rows),
            None => usize::from(self.rows),
        };
        let lines = self.vt.read_rows(count, MAX_ROWS_BYTES).map_err(|e| ServiceError::invalid(e.to_string()))?;
        let cursor = self.vt.cursor();
        Ok(Response::Rows { process: self.info(), lines, cursor_x: cursor.x, cursor_y: cursor.y })
    }

    /// Re-reads the foreground process and publishes a change.
    fn refresh_foreground(&mut self) {
        let current = crate::procinfo::foreground_process(&self.parts.master_fd, self.parts.tty.as_deref());
        if current != self.foreground {
            self.foreground = current.clone();
            self.emit(Response::ForegroundProcessChanged { process: current });
        }
    }

    /// The process as `list` and `get` describe it.
    fn info(&self) -> ProcessInfo {
        let lifecycle = match (&self.failure, &self.exited, &self.exit) {
            (Some(message), _, _) => Lifecycle::Failed { message: message.clone() },
            (None, Some(_), Some(exit)) => Lifecycle::Exited { exit_code: exit.exit_code, signal: exit.signal.clone() },
            _ => Lifecycle::Running,
        };
        let spec = &self.parts.spec;
        ProcessInfo {
            id: self.parts.id,
            mode: Mode::Pty,
            pid: Some(self.parts.pid),
            command: std::iter::once(spec.program.clone()).chain(spec.args.iter().cloned()).collect(),
            cwd: spec.cwd.display().to_string(),
            group_id: spec.group_id.clone(),
            lifecycle,
            output_head: self.replay.head(),
            output_tail: self.replay.tail(),
            started_at: self.parts.started_at,
            exited_at: self.exited_at,
            pty: Some(PtyInfo {
                title: self.titles.effective().to_owned(),
                user_title: self.titles.user().map(str::to_owned),
                foreground_process: self.foreground.clone(),
                cols: nonzero(self.cols),
                rows: nonzero(self.rows),
            }),
            pipe: None,
        }
    }
}

/// The `attached` response for a replay read.
fn attached(process: ProcessInfo, role: Role, generation: u64, replay: ReplayRead) -> Response {
    Response::Attached {
        process,
        role,
        generation,
        requested_offset: replay.requested,
        available_offset: replay.available,
        end_offset: replay.end,
        truncated: replay.truncated,
        replay_base64: BASE64.encode(&replay.bytes),
    }
}

fn nonzero(value: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(value).unwrap_or(std::num::NonZeroU16::MIN)
}

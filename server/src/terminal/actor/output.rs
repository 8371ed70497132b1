//! The actor's output path: each chunk into the replay buffer, the emulator and (batched) the fan-out, and
//! what goes back to the child (the emulator's replies and client input) through the input's delivery: written
//! to the PTY by the actor itself while the writer thread holds nothing, else through the writer's bounded
//! queue, with what does not fit held here up to [`MAX_PENDING_INPUT_BYTES`].

use std::time::Instant;

use opencode_pty_protocol::Response;

use super::{Actor, MAX_PENDING_INPUT_BYTES, WRITE_CHUNK_BYTES};
use crate::error::ServiceError;
use crate::process::{Event, Output};
use crate::terminal::coalesce::Batch;

impl Actor {
    /// Output path: replay, then the emulator, then its replies to the writer, then (batched) fan-out.
    /// `read_at` is when the reader read `bytes`: the coalescing window of a batch they start counts from then.
    /// While a restored terminal's emulator is rebuilt elsewhere, it takes the chunk later (`catch_up.rs`).
    pub(super) fn output(&mut self, bytes: &[u8], read_at: Instant) {
        self.before_ring_grows(bytes.len());
        if !self.rebuilding() {
            self.vt.write(bytes);
        }
        self.parsed(bytes, read_at);
    }

    /// The output path after the emulator took `bytes`: the replay, its replies, the fan-out (or the shell's
    /// marks first) and the title.
    pub(super) fn parsed(&mut self, bytes: &[u8], read_at: Instant) {
        let (start, _end) = self.replay.append(bytes);
        let parsed = !self.rebuilding();
        if parsed {
            let replies = self.vt.take_replies();
            self.queue_replies(replies);
        }
        let now = Instant::now();
        if self.shell.is_some() {
            // Batched around the shell's marks, so that its events come between the right bytes.
            self.shell_output(start, bytes, read_at, now);
        } else {
            let batches = self.batch.push(start, bytes, read_at, now);
            self.publish_batches(batches);
        }
        self.input_activity(now);
        self.compaction.touched(now);
        if parsed
            && self.vt.take_title_changed()
            && let Some(title) = self.titles.set_osc(self.vt.title())
        {
            self.flush();
            self.emit(Response::TitleChanged { title });
        }
    }

    /// Fans out the pending output batch.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn flush(&mut self) {
        let batch = self.batch.take();
        self.publish_batches(batch);
    }

    pub(super) fn publish_batches(&mut self, batches: impl IntoIterator<Item = Batch>) {
        for (start, bytes) in batches {
            match Output::new(start, &bytes) {
                Ok(output) => self.publish(&Event::Output(output)),
                // Unreachable in practice (a batch is far below a frame's limit, and no stream reaches 2^64
                // bytes), so nothing a client does can repeat this line.
                Err(error) => tracing::error!(%error, start, "output dropped: it cannot be framed"),
            }
        }
    }

    /// Writes the output gathered for direct writes to subscribers' sockets.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn write_gathered(&mut self) {
        let removed = self.fanout.flush();
        if !removed.is_empty() {
            self.detached(removed);
        }
    }

    /// Stores the current info where requests can read it while the actor is busy.
    pub(super) fn publish_info(&self) {
        let info = self.info_full();
        *self.parts.last_info.lock().unwrap_or_else(|e| e.into_inner()) = info;
    }

    /// Publishes a JSON event, after any output read before it (D6).
    pub(super) fn emit(&mut self, response: Response) {
        self.flush();
        self.publish(&Event::message(response));
    }

    /// Sends an event to every subscriber, after publishing the info, so that whatever a client was told (the
    /// output, a title, a size, the exit) `get` and `list` show even when they cannot wait for this actor.
    pub(super) fn publish(&mut self, event: &Event) {
        self.publish_info();
        let removed = self.fanout.publish(event, self.controller.as_deref());
        if !removed.is_empty() {
            self.detached(removed);
        }
    }

    /// Queues client input for the PTY, after everything queued before it. Fails, queuing nothing, when more
    /// than [`MAX_PENDING_INPUT_BYTES`] would be waiting (the child is not reading its input).
    /// At a shell's prompt, the prompt's line may hold text from then on (`run` refuses it), unless nothing was
    /// typed: empty input, or a focus report a terminal UI forwards (which a line editor does not insert).
    pub(super) fn queue_input(&mut self, bytes: Vec<u8>) -> Result<(), ServiceError> {
        let typing = !bytes.is_empty() && bytes != b"\x1b[I" && bytes != b"\x1b[O";
        self.queue_typed(bytes)?;
        if let Some(shell) = self.shell.as_mut().filter(|_| typing) {
            shell.input_written();
        }
        Ok(())
    }

    /// [`Self::queue_input`] for what `run` types, which does not count as typed at the prompt.
    pub(super) fn queue_typed(&mut self, bytes: Vec<u8>) -> Result<(), ServiceError> {
        let waiting = self.parts.input.held().bytes;
        if waiting + bytes.len() > MAX_PENDING_INPUT_BYTES {
            return Err(ServiceError::InputQueueFull { waiting });
        }
        self.batch.input_written();
        self.enqueue(bytes);
        self.input_activity(Instant::now());
        Ok(())
    }

    /// Queues the emulator's replies; past [`MAX_PENDING_INPUT_BYTES`] they are dropped, since a program
    /// that floods queries without reading the answers cannot be answered anyway.
    pub(super) fn queue_replies(&mut self, bytes: Vec<u8>) {
        if self.parts.input.held().bytes + bytes.len() <= MAX_PENDING_INPUT_BYTES {
            self.enqueue(bytes);
        }
    }

    /// Hands bytes to the child, in chunks of at most [`WRITE_CHUNK_BYTES`], through the input's delivery:
    /// written to the PTY at once when nothing is queued before them and the writer is idle (one thread hop
    /// less for a keystroke's echo), else handed to the writer if its queue has room, else held (and counted)
    /// for the main loop. Whatever the PTY does not take at once goes the writer's way, in order. A writer that
    /// stopped has said why (`WriterFailed`); what reaches it no more is dropped.
    pub(super) fn enqueue(&mut self, bytes: Vec<u8>) {
        if bytes.len() <= WRITE_CHUNK_BYTES {
            // Most chunks of output leave no replies: nothing to write.
            if !bytes.is_empty() {
                self.parts.input.push(bytes);
                self.start_writer_if_needed();
            }
            return;
        }
        for chunk in bytes.chunks(WRITE_CHUNK_BYTES) {
            self.parts.input.push(chunk.to_vec());
        }
        self.start_writer_if_needed();
    }

    /// Starts the writer thread the first time the delivery hands it something (the PTY did not take a chunk at
    /// once); until then the actor writes all input itself and no writer runs (`writer.rs`). A writer that
    /// cannot start is a failure of the terminal, as one that failed to write.
    fn start_writer_if_needed(&mut self) {
        if self.parts.writer.is_none() || !self.parts.input.has_handed_over() {
            return;
        }
        let Some(writer) = self.parts.writer.take() else { return };
        if let Err(error) = writer.start() {
            // Once per terminal at most: its writer is asked for once.
            tracing::error!(%error, "the PTY's writer thread could not start");
            self.fail(format!("cannot start the PTY's writer: {error}"));
        }
    }
}

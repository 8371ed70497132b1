//! The actor's side of shell integration: each chunk of output through the shell's tracker (on the bytes the
//! output path already holds, after the replay took them, so the marks' offsets are the replay's), batched
//! around the marks so that the `command_started` and `command_finished` events of the subscribers that asked
//! for them come between the right bytes (SPEC SH12), the end of the output, and the `commands` answer.

use std::time::Instant;

use opencode_pty_protocol::Response;

use super::Actor;
use crate::error::ServiceError;
use crate::process::{Event, OptIns};
use crate::terminal::shell::Change;
use crate::time::now_ms;

impl Change {
    /// The output offset where it happened.
    fn at(self) -> u64 {
        match self {
            Change::Started { at, .. } | Change::Finished { at, .. } => at,
        }
    }
}

impl Actor {
    /// A chunk of output of a terminal with shell integration, which starts at output offset `start`: its marks
    /// read, its bytes batched for the subscribers (and fed to the capture of a command someone waits for) up to
    /// each change, each change's events and waiters after the bytes before it.
    pub(super) fn shell_output(&mut self, start: u64, bytes: &[u8], read_at: Instant, now: Instant) {
        let Some(shell) = &mut self.shell else { return };
        let before = (shell.state_kind(), shell.prompts());
        let mut changes = std::mem::take(&mut self.shell_changes);
        changes.clear();
        shell.output(start, bytes, now_ms(), &mut changes);
        let after = (shell.state_kind(), shell.prompts());
        let end = start + bytes.len() as u64;
        let mut done = start;
        for change in &changes {
            // A mark that began in an earlier chunk ends a command where that chunk was already sent.
            let at = change.at().clamp(done, end);
            self.shell_bytes(start, bytes, done, at, read_at, now);
            done = at;
            self.shell_changed(*change, false);
        }
        self.shell_bytes(start, bytes, done, end, read_at, now);
        self.shell_changes = changes;
        if after.1 != before.1 {
            self.run_prompted();
        }
        // The emulator has taken the whole chunk: a bracketed paste enabled just after the prompt counts.
        self.type_deferred(now);
        if after != before {
            // `prompt` in `pty.input` follows the shell's state.
            self.input_may_have_changed();
        }
    }

    /// The bytes of the chunk (which starts at `start`) from offset `from` to `to`: to the capture and batched.
    fn shell_bytes(&mut self, start: u64, bytes: &[u8], from: u64, to: u64, read_at: Instant, now: Instant) {
        if from >= to {
            return;
        }
        let piece = &bytes[(from - start) as usize..(to - start) as usize];
        self.run_output(piece);
        let batches = self.batch.push(from, piece, read_at, now);
        self.publish_batches(batches);
    }

    /// The output ended: a command still running ended with it, and whoever waits for a command is told.
    pub(super) fn shell_output_ended(&mut self) {
        let Some(shell) = &mut self.shell else { return };
        let mut changes = std::mem::take(&mut self.shell_changes);
        changes.clear();
        shell.output_ended(self.replay.tail(), now_ms(), &mut changes);
        for change in &changes {
            self.shell_changed(*change, true);
        }
        self.shell_changes = changes;
        self.run_output_ended();
    }

    /// One change: the waiters of its command, and the event to the subscribers that asked for `commands`, after
    /// the output before it.
    fn shell_changed(&mut self, change: Change, shell_exited: bool) {
        let event = match change {
            Change::Started { id, at } => {
                self.run_started(id);
                let command = self.shell.as_ref().and_then(|shell| shell.command(id));
                command.map(|command| Response::CommandStarted {
                    command_id: id,
                    command: command.command.clone(),
                    cwd: command.cwd.clone(),
                    output_start: at,
                })
            }
            Change::Finished { id, at } => {
                self.run_finished(id, shell_exited);
                let command = self.shell.as_ref().and_then(|shell| shell.command(id));
                command.map(|command| Response::CommandFinished {
                    command_id: id,
                    exit_code: command.exit_code,
                    output_start: command.output_start,
                    output_end: at,
                    text: None,
                    truncated: None,
                })
            }
        };
        if let Some(event) = event
            && self.fanout.iter().any(|subscriber| subscriber.events.commands)
        {
            self.flush();
            self.publish_info();
            let event = Event::message(event);
            let removed = self.fanout.publish_where(&event, self.controller.as_deref(), |s| s.events.commands);
            if !removed.is_empty() {
                self.detached(removed);
            }
        }
    }

    /// Whether the shell's marks say it waits for a command at its prompt (`pty.input` is `prompt` then).
    pub(super) fn shell_at_prompt(&self) -> bool {
        self.shell.as_ref().is_some_and(|shell| shell.state_kind() == opencode_pty_protocol::ShellStateState::Prompt)
    }

    /// A `commands` answer, or the error of a terminal without shell integration. Its `process` carries
    /// `pty.shell`: a request of the `commands` feature has opted into it.
    pub(super) fn commands(&self, limit: Option<usize>) -> Result<Response, ServiceError> {
        let shell = self.shell.as_ref().ok_or(ServiceError::NoShellIntegration(self.parts.id))?;
        let process = self.info_for(OptIns { commands: true, ..OptIns::NONE });
        Ok(Response::Commands { process, commands: shell.commands(limit) })
    }
}

//! The actor's side of shell integration: each chunk of output through the shell's tracker (on the bytes the
//! output path already holds, after the replay took them, so the marks' offsets are the replay's), the end of
//! the output, and the `commands` answer.

use opencode_pty_protocol::Response;

use super::Actor;
use crate::error::ServiceError;
use crate::process::OptIns;
use crate::terminal::shell::Change;
use crate::time::now_ms;

impl Actor {
    /// The marks in `bytes`, which start at output offset `start`, for a terminal with shell integration.
    pub(super) fn shell_output(&mut self, start: u64, bytes: &[u8]) {
        let Some(shell) = &mut self.shell else { return };
        self.shell_changes.clear();
        shell.output(start, bytes, now_ms(), &mut self.shell_changes);
        self.shell_changed();
    }

    /// The output ended: a command still running ended with it.
    pub(super) fn shell_output_ended(&mut self) {
        let Some(shell) = &mut self.shell else { return };
        self.shell_changes.clear();
        shell.output_ended(self.replay.tail(), now_ms(), &mut self.shell_changes);
        self.shell_changed();
    }

    /// What the shell's last marks changed. Nothing waits on a command yet (`run` and `wait_command` will);
    /// `pty.shell` is read from the tracker whenever the info is made.
    fn shell_changed(&mut self) {
        for change in &self.shell_changes {
            match change {
                Change::Started { id, at } => tracing::trace!(terminal = self.parts.id, id, at, "command started"),
                Change::Finished { id, at } => tracing::trace!(terminal = self.parts.id, id, at, "command finished"),
            }
        }
    }

    /// A `commands` answer, or the error of a terminal without shell integration. Its `process` carries
    /// `pty.shell`: a request of the `commands` feature has opted into it.
    pub(super) fn commands(&self, limit: Option<usize>) -> Result<Response, ServiceError> {
        let shell = self.shell.as_ref().ok_or(ServiceError::NoShellIntegration(self.parts.id))?;
        let process = self.info_for(OptIns { commands: true, ..OptIns::NONE });
        Ok(Response::Commands { process, commands: shell.commands(limit) })
    }
}

//! `run` and `wait_command` (SPEC SH10, SH11): the requests that type a command in a terminal started with
//! `shell_integration` or wait for one of its commands, each holding its own connection until the command
//! ends or the request's `timeout_ms` passes, and [`CommandOutcome`], which of the two happened.
//!
//! Both are answered by `command_finished` or `command_running` (the schema's `x-answer` and
//! `x-answer-also`); [`Client::exchange`] knows only the first, so these methods read the answer themselves.
//! The daemon answers by `timeout_ms` at the latest, so the wait for the answer is bounded by `timeout_ms`
//! (its default when not given) plus the client's request timeout.

use std::time::{Duration, Instant};

use opencode_pty_protocol::{
    CommandFinishedResponse, CommandRunningResponse, DEFAULT_COMMAND_WAIT_MS, Request, Response, RunRequest,
    WaitCommandRequest,
};

use crate::client::{Client, bounded};
use crate::conn::{describe, refuse};
use crate::error::ClientError;
use crate::resume::connection_lost;
use crate::types::{CommandFinished, CommandRunning};

/// How a `run` or `wait_command` ended: the command ended, or the timeout passed while it still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandOutcome {
    /// The command ended: its exit code, its output's offsets, and its output as text. In an answer (unlike
    /// the subscription event of the same type) `text` and `truncated` are always `Some`: the client refuses
    /// an answer without them as a protocol error.
    Finished(CommandFinished),
    /// The timeout passed first. The command goes on; [`Client::wait_command`] with its `command_id` waits
    /// again.
    Running(CommandRunning),
}

impl CommandOutcome {
    /// The command's id, whichever way it went.
    pub fn command_id(&self) -> u64 {
        match self {
            CommandOutcome::Finished(finished) => finished.command_id,
            CommandOutcome::Running(running) => running.command_id,
        }
    }

    /// The finished command, or `None` while it runs.
    pub fn finished(&self) -> Option<&CommandFinished> {
        match self {
            CommandOutcome::Finished(finished) => Some(finished),
            CommandOutcome::Running(_) => None,
        }
    }
}

impl TryFrom<Response> for CommandOutcome {
    type Error = ClientError;

    /// `command_finished` (with its `text` and `truncated`) or `command_running`; `error` becomes
    /// [`ClientError::Daemon`], any other type [`ClientError::Unexpected`].
    fn try_from(response: Response) -> Result<CommandOutcome, ClientError> {
        let other = match CommandFinishedResponse::try_from(response) {
            Ok(finished) if finished.text.is_none() || finished.truncated.is_none() => {
                return Err(ClientError::Protocol(
                    "a `command_finished` answer has no `text` or no `truncated`".into(),
                ));
            }
            Ok(finished) => return Ok(CommandOutcome::Finished(finished)),
            Err(other) => other,
        };
        CommandRunningResponse::try_from(other)
            .map(CommandOutcome::Running)
            .map_err(|other| refuse("command_finished", other))
    }
}

impl Client {
    /// `run`: types `command` and Enter at the prompt of a terminal started with `shell_integration` and waits
    /// for the command's end, or for `timeout_ms` (`None`: the daemon's 30 s, `DEFAULT_COMMAND_WAIT_MS`; at
    /// most 24 h). The shell must be at its prompt with nothing typed: otherwise (a command runs, the user
    /// typed something, the shell has not shown its first prompt) the daemon refuses at once with an error
    /// that says why. Needs the daemon's `commands` feature. Cancel safe: dropping the future closes the
    /// connection, and the command goes on.
    ///
    /// # Errors
    ///
    /// As [`Client::request`] for connecting and sending; a refusal, or a shell that exited or a terminal that
    /// was terminated before the command ended, is [`ClientError::Daemon`]; no answer within `timeout_ms`
    /// plus the request timeout is [`ClientError::Timeout`].
    pub async fn run(&self, id: u64, command: &str, timeout_ms: Option<u32>) -> Result<CommandOutcome, ClientError> {
        self.hold(RunRequest { command: command.to_owned(), id, timeout_ms }.into(), timeout_ms).await
    }

    /// `wait_command`: waits for the end of command `command_id` of a terminal started with
    /// `shell_integration` (answered at once for one that already ended, from the text it kept), or for
    /// `timeout_ms` as [`Client::run`] does. Several may wait for one command.
    ///
    /// # Errors
    ///
    /// As [`Client::run`]; a command the terminal does not know (or no longer keeps) is [`ClientError::Daemon`].
    pub async fn wait_command(
        &self,
        id: u64,
        command_id: u64,
        timeout_ms: Option<u32>,
    ) -> Result<CommandOutcome, ClientError> {
        self.hold(WaitCommandRequest { command_id, id, timeout_ms }.into(), timeout_ms).await
    }

    /// Sends a request answered by a [`CommandOutcome`] on a connection of its own and waits for the answer:
    /// connecting and sending within the request timeout, the answer within `timeout_ms` more. When a daemon
    /// with the `upgrade` feature closes the connection before answering and the same instance answers again,
    /// `wait_command` is asked again for the rest of its `timeout_ms`, and `run`, whose command may have been
    /// typed, ends with [`ClientError::RunInterrupted`].
    async fn hold(&self, request: Request, timeout_ms: Option<u32>) -> Result<CommandOutcome, ClientError> {
        let waits = Duration::from_millis(u64::from(timeout_ms.unwrap_or(DEFAULT_COMMAND_WAIT_MS)));
        let started = Instant::now();
        let mut request = request;
        loop {
            let envelope = self.envelope(&request)?;
            let what = describe(&envelope);
            let mut connection = self.bounded(what.clone(), self.open(&envelope)).await?;
            let left = waits.saturating_sub(started.elapsed());
            match bounded(left.saturating_add(self.request_timeout()), what, connection.read_response()).await {
                Err(lost) if connection_lost(&lost) => {
                    self.after_lost(lost).await?;
                    request = match request {
                        Request::WaitCommand { command_id, id, .. } => {
                            let timeout_ms = Some(u32::try_from(left.as_millis()).unwrap_or(u32::MAX));
                            Request::WaitCommand { command_id, id, timeout_ms }
                        }
                        Request::Run { id, .. } => return Err(ClientError::RunInterrupted { id }),
                        other => other,
                    };
                }
                answered => return CommandOutcome::try_from(answered?),
            }
        }
    }
}

//! `run` and `wait_command` on the actor (SPEC SH10, SH11): typing a command at the shell's prompt, the waiters
//! of commands (answered at the command's end, with its text, or with `command_running` at their deadline),
//! and the capture of the text of a command someone waits for.

use std::time::{Duration, Instant};

use opencode_pty_protocol::{Response, ShellCommand, ShellStateState};

use super::Actor;
use crate::error::ServiceError;
use crate::terminal::command::CommandWaiter;
use crate::terminal::shell::{Capture, CommandText};
use crate::upgrade::RunState;
use opencode_pty_vt::ModeKind;

/// The most `run` and `wait_command` requests that wait on one terminal at once; past it, one more is refused
/// (a waiter whose connection closed is forgotten first).
pub(crate) const MAX_COMMAND_WAITERS: usize = 64;

/// DEC private mode 2004: bracketed paste, which a multi-line command needs.
const BRACKETED_PASTE: u16 = 2004;

/// How long a command sent as a bracketed paste waits for the prompt to be drawn (its B mark) with bracketed
/// paste on (zsh enables it just after drawing its prompt), counted from the `run` or from the latest prompt
/// mark, before `run` gives up on it (a prompt that takes longer to draw, a shell whose B mark a prompt
/// framework removed, a line editor without bracketed paste).
pub(crate) const PASTE_MODE_GRACE: Duration = Duration::from_secs(2);

/// A command `run` holds until the shell's line editor takes a bracketed paste (several lines, or a tab).
#[derive(Debug)]
struct Deferred {
    command: String,
    /// When `run` gives up on typing it.
    give_up_at: Instant,
}

/// A command `run` typed that the shell has not started yet.
#[derive(Debug, Clone)]
struct Pending {
    /// The id the shell will give it.
    id: u64,
    /// The command line `run` typed, to compare with the one the shell reports.
    command: String,
    /// The prompts shown by the time it can no longer start (the shell showed a prompt without running it).
    gives_up_after: u64,
}

/// What the actor keeps for `run` and `wait_command`.
#[derive(Debug, Default)]
pub(super) struct Runs {
    /// Each waiter with the command it waits for.
    waiters: Vec<(u64, CommandWaiter)>,
    /// The text of the running command, while someone waits for it.
    capture: Option<(u64, Capture)>,
    /// The text of the last command captured to its end.
    last_text: Option<(u64, CommandText)>,
    pending: Option<Pending>,
    /// The pending command, when it has several lines and waits to be typed.
    deferred: Option<Deferred>,
}

impl Runs {
    /// What an upgrade's state carries of them: the command `run` typed or holds that the shell has not started
    /// (the waiters go with their connections, and a `wait_command` asked again finds it).
    pub(super) fn to_state(&self, now: Instant) -> Option<RunState> {
        let pending = self.pending.as_ref()?;
        let held_left = self.deferred.as_ref().map(|held| held.give_up_at.saturating_duration_since(now));
        Some(RunState {
            command_id: pending.id,
            command: pending.command.clone(),
            gives_up_after: pending.gives_up_after,
            held_left_ms: held_left.map(|left| u64::try_from(left.as_millis()).unwrap_or(u64::MAX)),
        })
    }

    /// Runs as a state left them, waiting for nobody yet.
    pub(super) fn restored(state: Option<&RunState>, now: Instant) -> Runs {
        let Some(state) = state else { return Runs::default() };
        let pending =
            Pending { id: state.command_id, command: state.command.clone(), gives_up_after: state.gives_up_after };
        let deferred = state.held_left_ms.map(|left| Deferred {
            command: state.command.clone(),
            give_up_at: now + Duration::from_millis(left.min(PASTE_MODE_GRACE.as_millis() as u64)),
        });
        Runs { pending: Some(pending), deferred, ..Runs::default() }
    }

    /// When the next waiter's answer is due, if any waits.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        let paste = self.deferred.as_ref().map(|deferred| deferred.give_up_at);
        self.waiters.iter().map(|(_, waiter)| waiter.deadline).chain(paste).min()
    }
}

impl Actor {
    /// `run`: types `command` and Enter, as the controller would, when the shell waits at its prompt with
    /// nothing typed; `waiter` then waits for the command's end.
    pub(super) fn run_command(&mut self, command: &str, waiter: CommandWaiter) -> Result<(), ServiceError> {
        let id = self.parts.id;
        let refuse = |message: String| Err(ServiceError::Shell { id, message });
        let Some(shell) = &self.shell else { return Err(ServiceError::NoShellIntegration(id)) };
        if self.life.is_output_ended() {
            return refuse("its shell has exited".into());
        }
        match shell.state_kind() {
            ShellStateState::Starting => return refuse("its shell has not shown its first prompt yet".into()),
            ShellStateState::Running => {
                let running = shell.state().command_id.unwrap_or_default();
                return refuse(format!(
                    "its shell is running command {running}; run needs the prompt (wait_command waits for it)"
                ));
            }
            ShellStateState::Prompt => {}
        }
        if let Some(pending) = &self.runs.pending {
            return refuse(format!(
                "the command run typed (command {}) has not started yet (a line the shell has not finished \
                 reading, such as one with an open quote, waits for more: Ctrl-C through input abandons it)",
                pending.id
            ));
        }
        if shell.typed() {
            return refuse("something was typed at the prompt since it was shown; run needs an empty prompt".into());
        }
        self.make_room_for_a_waiter()?;
        if command.contains(['\n', '\t']) {
            // Typed once the line editor takes a bracketed paste (see `type_deferred`): a newline would end the
            // line early, a tab ask for completion.
            let give_up_at = Instant::now() + PASTE_MODE_GRACE;
            self.runs.deferred = Some(Deferred { command: command.to_owned(), give_up_at });
        } else {
            let mut bytes = command.as_bytes().to_vec();
            bytes.push(b'\r');
            self.queue_typed(bytes)?;
        }
        let shell = self.shell.as_ref().expect("checked above");
        // At a prompt whose `P` mark has not come yet (the end mark came, the prompt is being drawn), that mark
        // is still this prompt's.
        let prompts = shell.prompts() + u64::from(shell.awaiting_prompt());
        let id = shell.next_id();
        self.runs.pending = Some(Pending { id, command: command.to_owned(), gives_up_after: prompts });
        self.runs.waiters.push((id, waiter));
        self.type_deferred(Instant::now());
        Ok(())
    }

    /// Types a command that `run` holds, as one bracketed paste, once the prompt is drawn and the shell has
    /// enabled bracketed paste; gives up at its deadline ([`PASTE_MODE_GRACE`] after the `run` or the latest
    /// prompt mark), answering its waiters.
    pub(super) fn type_deferred(&mut self, now: Instant) {
        let Some(give_up_at) = self.runs.deferred.as_ref().map(|deferred| deferred.give_up_at) else { return };
        let ready = self.shell.as_ref().is_some_and(|shell| shell.input_ready());
        if ready && self.emulator().mode(BRACKETED_PASTE, ModeKind::Dec).unwrap_or(false) {
            let deferred = self.runs.deferred.take().expect("checked above");
            let mut bytes = Vec::with_capacity(deferred.command.len() + 16);
            bytes.extend_from_slice(b"\x1b[200~");
            bytes.extend_from_slice(deferred.command.as_bytes());
            bytes.extend_from_slice(b"\x1b[201~\r");
            if let Err(refused) = self.queue_typed(bytes) {
                self.fail_pending(refused.to_string());
            }
            // Typed at this prompt: the next one shows that the shell did not start it.
            let prompts = self.shell.as_ref().map_or(0, |shell| shell.prompts());
            if let Some(pending) = &mut self.runs.pending {
                pending.gives_up_after = prompts;
            }
            return;
        }
        if now >= give_up_at {
            self.runs.deferred = None;
            self.fail_pending(
                "a command of several lines or with a tab needs bracketed paste, and the shell did not show its \
                 prompt with bracketed paste enabled within 2 s"
                    .into(),
            );
        }
    }

    /// The pending command will not be typed: its waiters get `message`.
    fn fail_pending(&mut self, message: String) {
        let Some(pending) = self.runs.pending.take() else { return };
        for (_, waiter) in self.runs.waiters.extract_if(.., |(waits_for, _)| *waits_for == pending.id) {
            waiter.answer(Err(ServiceError::Shell { id: self.parts.id, message: message.clone() }));
        }
    }

    /// `wait_command`: `waiter` waits for the end of command `command_id`, or is answered now for one that ended.
    pub(super) fn wait_command(&mut self, command_id: u64, waiter: CommandWaiter) -> Result<(), ServiceError> {
        let id = self.parts.id;
        let Some(shell) = &self.shell else { return Err(ServiceError::NoShellIntegration(id)) };
        if let Some(command) = shell.command(command_id).cloned() {
            if command.output_end.is_some() {
                waiter.answer(self.finished_answer(&command));
                return Ok(());
            }
            self.make_room_for_a_waiter()?;
            self.capture_running(&command);
            self.runs.waiters.push((command_id, waiter));
            return Ok(());
        }
        if self.runs.pending.as_ref().is_some_and(|pending| pending.id == command_id) {
            self.make_room_for_a_waiter()?;
            self.runs.waiters.push((command_id, waiter));
            return Ok(());
        }
        let message = match shell.oldest_id() {
            Some(oldest) if command_id < oldest => {
                format!("command {command_id} is no longer kept (the oldest kept is {oldest})")
            }
            _ => format!("no command {command_id} (the next command the shell starts is {})", shell.next_id()),
        };
        Err(ServiceError::Shell { id, message })
    }

    /// Refuses one more waiter past [`MAX_COMMAND_WAITERS`], once those whose requester left are forgotten.
    fn make_room_for_a_waiter(&mut self) -> Result<(), ServiceError> {
        self.runs.waiters.retain(|(_, waiter)| !waiter.gone());
        if self.runs.waiters.len() >= MAX_COMMAND_WAITERS {
            return Err(ServiceError::Shell {
                id: self.parts.id,
                message: format!("{MAX_COMMAND_WAITERS} requests already wait for its commands (MAX_COMMAND_WAITERS)"),
            });
        }
        Ok(())
    }

    /// Starts capturing the text of a running command someone now waits for, from its bytes still in the
    /// replay buffer.
    fn capture_running(&mut self, command: &ShellCommand) {
        if self.runs.capture.as_ref().is_some_and(|(id, _)| *id == command.command_id) {
            return;
        }
        let Ok(kept) = self.replay.read_from(command.output_start) else { return };
        let Ok(mut capture) = Capture::new(self.cols, self.rows, kept.truncated) else { return };
        capture.feed(&kept.bytes);
        self.runs.capture = Some((command.command_id, capture));
    }

    /// The answer for a command that ended: its text as captured, or made now from its bytes still kept.
    fn finished_answer(&self, command: &ShellCommand) -> Result<Response, ServiceError> {
        let output_end = command.output_end.unwrap_or(command.output_start);
        if command.exit_code.is_none() && self.life.is_output_ended() && output_end == self.replay.tail() {
            return Err(self.shell_exited(command.command_id));
        }
        let text = match &self.runs.last_text {
            Some((id, text)) if *id == command.command_id => text.clone(),
            _ => self.text_from_replay(command.output_start, output_end),
        };
        Ok(Response::CommandFinished {
            command_id: command.command_id,
            exit_code: command.exit_code,
            output_start: command.output_start,
            output_end,
            text: Some(text.text),
            truncated: Some(text.truncated),
        })
    }

    /// The text of the output between two offsets, from what the replay buffer still keeps of it.
    fn text_from_replay(&self, start: u64, end: u64) -> CommandText {
        let kept = self.replay.read_from(start).ok();
        let missed = kept.as_ref().is_none_or(|kept| kept.truncated);
        let Ok(mut capture) = Capture::new(self.cols, self.rows, missed) else {
            return CommandText { text: String::new(), truncated: true };
        };
        if let Some(kept) = kept {
            let length = usize::try_from(end.saturating_sub(kept.available)).unwrap_or(usize::MAX);
            capture.feed(&kept.bytes[..length.min(kept.bytes.len())]);
        }
        capture.finish()
    }

    /// The error of a wait whose command's shell exited first.
    fn shell_exited(&self, command_id: u64) -> ServiceError {
        ServiceError::Shell { id: self.parts.id, message: format!("its shell exited while command {command_id} ran") }
    }

    /// Output of the running command: into its capture, if someone waits for it.
    pub(super) fn run_output(&mut self, bytes: &[u8]) {
        if let Some((_, capture)) = &mut self.runs.capture {
            capture.feed(bytes);
        }
    }

    /// The shell started command `id`: the command `run` typed, if one was pending; captured when someone
    /// waits for it.
    pub(super) fn run_started(&mut self, id: u64) {
        // A command still held (not typed) is not this one.
        let typed = if self.runs.deferred.is_some() { None } else { self.runs.pending.take() };
        if let Some(pending) = typed {
            for (waits_for, _) in &mut self.runs.waiters {
                if *waits_for == pending.id {
                    *waits_for = id;
                }
            }
            let reported = self.shell.as_ref().and_then(|shell| shell.command(id)).map(|c| c.command.clone());
            if let Some(reported) = reported.filter(|reported| !same_command(reported, &pending.command)) {
                // Input typed ahead (while the last command ran, or before the prompt) joined the line.
                let message = format!(
                    "its shell started `{reported}` (command {id}) rather than the command run typed: input typed \
                     ahead of it joined the line"
                );
                for (_, waiter) in self.runs.waiters.extract_if(.., |(waits_for, _)| *waits_for == id) {
                    waiter.answer(Err(ServiceError::Shell { id: self.parts.id, message: message.clone() }));
                }
            }
        }
        self.runs.capture = None;
        if self.runs.waiters.iter().any(|(waits_for, _)| *waits_for == id) {
            self.runs.capture = Capture::new(self.cols, self.rows, false).ok().map(|capture| (id, capture));
        }
    }

    /// Command `id` ended: its waiters are answered (an error when the shell's exit ended it).
    pub(super) fn run_finished(&mut self, id: u64, shell_exited: bool) {
        if let Some((_, capture)) = self.runs.capture.take_if(|(captured, _)| *captured == id) {
            self.runs.last_text = Some((id, capture.finish()));
        }
        if !self.runs.waiters.iter().any(|(waits_for, _)| *waits_for == id) {
            return;
        }
        let command = self.shell.as_ref().and_then(|shell| shell.command(id)).cloned();
        let answer = match command {
            Some(_) if shell_exited => Err(self.shell_exited(id)),
            Some(command) => self.finished_answer(&command),
            None => Err(self.shell_exited(id)),
        };
        for (_, waiter) in self.runs.waiters.extract_if(.., |(waits_for, _)| *waits_for == id) {
            waiter.answer(answer.clone());
        }
    }

    /// The shell showed a prompt: a command `run` typed that it has not started by now never will.
    pub(super) fn run_prompted(&mut self) {
        let prompts = self.shell.as_ref().map_or(0, |shell| shell.prompts());
        if let Some(deferred) = &mut self.runs.deferred {
            // Not typed yet: the new prompt is the one it waits for, and it is being drawn.
            deferred.give_up_at = deferred.give_up_at.max(Instant::now() + PASTE_MODE_GRACE);
            return;
        }
        if self.runs.pending.as_ref().is_none_or(|pending| prompts <= pending.gives_up_after) {
            return;
        }
        let Some(pending) = self.runs.pending.take() else { return };
        let message = format!(
            "its shell showed a new prompt without starting the command run typed (command {}): a line it could \
             not parse, or one the shell's line editor took otherwise",
            pending.id
        );
        for (_, waiter) in self.runs.waiters.extract_if(.., |(waits_for, _)| *waits_for == pending.id) {
            waiter.answer(Err(ServiceError::Shell { id: self.parts.id, message: message.clone() }));
        }
    }

    /// The output ended (the shell exited): every waiter is told so.
    pub(super) fn run_output_ended(&mut self) {
        self.runs.pending = None;
        self.runs.deferred = None;
        self.runs.capture = None;
        for (command_id, waiter) in std::mem::take(&mut self.runs.waiters) {
            let started = self.shell.as_ref().is_some_and(|shell| shell.command(command_id).is_some());
            let error = match started {
                true => self.shell_exited(command_id),
                false => ServiceError::Shell {
                    id: self.parts.id,
                    message: format!("its shell exited before the command run typed (command {command_id}) started"),
                },
            };
            waiter.answer(Err(error));
        }
    }

    /// Answers `command_running` to the waiters whose deadline has come.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn runs_due(&mut self, now: Instant) {
        if self.runs.next_deadline().is_none_or(|next| next > now) {
            return;
        }
        self.type_deferred(now);
        for (command_id, waiter) in self.runs.waiters.extract_if(.., |(_, waiter)| waiter.deadline <= now) {
            let output_start =
                self.shell.as_ref().and_then(|shell| shell.command(command_id)).map(|command| command.output_start);
            waiter.answer(Ok(Response::CommandRunning { command_id, output_start }));
        }
        // The capture goes on (bounded): a `wait_command` that comes later still gets the output's head.
    }
}

/// Whether the command line the shell reported is the one `run` typed: the same (spaces around aside), or its
/// start (bash reports the first line of several, and a long line is kept cut). An empty report (a line bash kept
/// out of its history) says nothing against it.
fn same_command(reported: &str, typed: &str) -> bool {
    let (reported, typed) = (reported.trim(), typed.trim());
    reported.is_empty() || typed.starts_with(reported)
}

#[cfg(test)]
mod tests {
    use super::same_command;

    #[test]
    fn a_reported_command_line_matches_what_was_typed_or_its_start() {
        assert!(same_command("echo X", "echo X"));
        assert!(same_command("echo a", "echo a\necho b"), "bash's first line of several");
        assert!(same_command("", "echo X"), "nothing reported");
        assert!(!same_command("abcecho X", "echo X"), "type-ahead joined the line");
        assert!(!same_command("ls", "echo X"));
    }
}

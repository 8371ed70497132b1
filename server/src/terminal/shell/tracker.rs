//! What a terminal with shell integration knows of its shell: its state (starting, at its prompt, running a
//! command), its working directory, and its last [`MAX_COMMANDS`] commands with their output offsets and exit
//! codes, all learnt from the nonce'd marks the scanner finds in the output (`marks.rs`).
//!
//! The actor feeds it every chunk (with the chunk's start offset) and is told what changed ([`Change`]): a
//! command started or finished. A later `run` or `wait_command` waits on those changes, and finds a finished
//! command's offsets and exit code in the list for as long as it is kept.

use std::collections::VecDeque;

use opencode_pty_protocol::{
    MAX_COMMAND_LINE_BYTES, MAX_COMMANDS, MAX_SHELL_CWD_BYTES, ShellCommand, ShellState, ShellStateState,
};

use super::marks::{Kind, Mark, Scanner};
use crate::upgrade;

/// A change to the command list the actor may have to act on, with the output offset where it happened (an event
/// about it belongs after the output before that offset, and before the output after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// The command `id` started: its output starts at `at`.
    Started { id: u64, at: u64 },
    /// The command `id` finished: its output ended at `at`.
    Finished { id: u64, at: u64 },
}

/// The shell of one terminal with shell integration.
#[derive(Debug)]
pub(crate) struct Tracker {
    nonce: String,
    scanner: Scanner,
    /// The sequence of the last mark taken: a mark is taken only above it.
    sequence: u64,
    state: ShellStateState,
    cwd: Option<String>,
    /// The last commands, oldest first; a running one is last.
    commands: VecDeque<ShellCommand>,
    /// Whether the last command is running.
    running: bool,
    /// The id the next command gets.
    next_id: u64,
    /// Whether input reached the terminal while the shell was at this prompt (so its line may hold text).
    typed: bool,
    /// Whether input reached it after a command's end and before the next prompt's `P` mark: the next prompt's
    /// line editor reads it.
    typed_before_prompt: bool,
    /// Prompts shown so far (each `P` mark).
    prompts: u64,
    /// A command's end came and the next prompt's `P` mark has not yet.
    awaiting_prompt: bool,
    /// The prompt has been drawn (its `B` mark came): the shell's line editor takes input.
    input_ready: bool,
}

impl Tracker {
    /// A shell that has said nothing yet, whose marks carry `nonce`.
    pub(crate) fn new(nonce: String) -> Tracker {
        Tracker {
            nonce,
            scanner: Scanner::default(),
            sequence: 0,
            state: ShellStateState::Starting,
            cwd: None,
            commands: VecDeque::new(),
            running: false,
            next_id: 1,
            typed: false,
            typed_before_prompt: false,
            prompts: 0,
            awaiting_prompt: false,
            input_ready: false,
        }
    }

    /// Reads the marks in `bytes`, which start at output offset `offset`; `now` is the wall clock in
    /// milliseconds. Each change is pushed to `changes`, in order.
    pub(crate) fn output(&mut self, offset: u64, bytes: &[u8], now: u64, changes: &mut Vec<Change>) {
        let Tracker { scanner, nonce, .. } = self;
        // At most one per 40-odd bytes of the chunk (a mark with the nonce is longer), like `changes`.
        let mut marks = Vec::new();
        scanner.scan(offset, bytes, |raw| {
            if let Some(mark) = Mark::parse(raw.payload, nonce) {
                marks.push((mark, raw.start, raw.end));
            }
        });
        for (mark, start, end) in marks {
            self.mark(mark, start, end, now, changes);
        }
    }

    /// One mark of ours, which starts at `start` and ends just before `end`.
    fn mark(&mut self, mark: Mark, start: u64, end: u64, now: u64, changes: &mut Vec<Change>) {
        if mark.sequence <= self.sequence {
            return;
        }
        self.sequence = mark.sequence;
        self.input_ready = matches!(mark.kind, Kind::Input) && !self.running;
        match mark.kind {
            Kind::Prompt { cwd } => {
                // A prompt without the end of the command before it (its end mark was lost): it ended here.
                self.finish(start, None, now, changes);
                self.cwd = cwd.and_then(|cwd| shell_cwd(&cwd));
                self.state = ShellStateState::Prompt;
                // A new prompt's line is empty (after Ctrl-C or an empty line too), but for what was typed
                // since the last command's end, which its line editor reads.
                self.typed = std::mem::take(&mut self.typed_before_prompt);
                self.prompts += 1;
                self.awaiting_prompt = false;
            }
            // The end of a prompt drawn while a command runs (a nested shell's, say) is the command's output.
            Kind::Input if !self.running => self.state = ShellStateState::Prompt,
            Kind::Input => {}
            Kind::Output { command } => {
                self.finish(start, None, now, changes);
                self.typed = false;
                self.typed_before_prompt = false;
                let command_id = self.next_id;
                self.next_id += 1;
                if self.commands.len() == MAX_COMMANDS {
                    self.commands.pop_front();
                }
                self.commands.push_back(ShellCommand {
                    command_id,
                    command: command_line(&command),
                    cwd: self.cwd.clone(),
                    output_start: end,
                    output_end: None,
                    exit_code: None,
                    started_at: now,
                    finished_at: None,
                });
                self.running = true;
                self.state = ShellStateState::Running;
                changes.push(Change::Started { id: command_id, at: end });
            }
            Kind::End { exit_code } => {
                self.finish(start, exit_code, now, changes);
                self.state = ShellStateState::Prompt;
                self.awaiting_prompt = true;
            }
        }
    }

    /// Ends the running command, if any, at output offset `at`.
    fn finish(&mut self, at: u64, exit_code: Option<u32>, now: u64, changes: &mut Vec<Change>) {
        if !std::mem::take(&mut self.running) {
            return;
        }
        if let Some(command) = self.commands.back_mut() {
            command.output_end = Some(at);
            command.exit_code = exit_code;
            command.finished_at = Some(now);
            changes.push(Change::Finished { id: command.command_id, at });
        }
    }

    /// The terminal's output ended at `tail` (its shell exited): a running command ended there, without a status.
    pub(crate) fn output_ended(&mut self, tail: u64, now: u64, changes: &mut Vec<Change>) {
        self.finish(tail, None, now, changes);
    }

    /// `pty.shell`.
    pub(crate) fn state(&self) -> ShellState {
        let running = self.running.then(|| self.commands.back().map(|c| c.command_id)).flatten();
        ShellState { state: self.state, command_id: running, cwd: self.cwd.clone() }
    }

    /// The newest `limit` commands (all by default), oldest first.
    pub(crate) fn commands(&self, limit: Option<usize>) -> Vec<ShellCommand> {
        let skip = limit.map_or(0, |limit| self.commands.len().saturating_sub(limit));
        self.commands.iter().skip(skip).cloned().collect()
    }

    /// Input reached the terminal: at a prompt, the shell's line may now hold text.
    pub(crate) fn input_written(&mut self) {
        if self.state == ShellStateState::Prompt {
            self.typed = true;
            self.typed_before_prompt |= self.awaiting_prompt;
        }
    }

    /// Whether input reached the terminal since the shell last showed its prompt (`run` refuses then).
    pub(crate) fn typed(&self) -> bool {
        self.typed
    }

    /// The shell's state.
    pub(crate) fn state_kind(&self) -> ShellStateState {
        self.state
    }

    /// Whether a command's end came and the next prompt's `P` mark has not yet.
    pub(crate) fn awaiting_prompt(&self) -> bool {
        self.awaiting_prompt
    }

    /// Whether the prompt has been drawn (its `B` mark came last): the line editor takes input.
    pub(crate) fn input_ready(&self) -> bool {
        self.input_ready
    }

    /// How many prompts the shell has shown.
    pub(crate) fn prompts(&self) -> u64 {
        self.prompts
    }

    /// The id the next command that starts gets.
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id
    }

    /// The id of the oldest command kept, if any.
    pub(crate) fn oldest_id(&self) -> Option<u64> {
        self.commands.front().map(|command| command.command_id)
    }

    /// The command with this id, while it is kept.
    pub(crate) fn command(&self, command_id: u64) -> Option<&ShellCommand> {
        let oldest = self.commands.front()?.command_id;
        self.commands.get(usize::try_from(command_id.checked_sub(oldest)?).ok()?)
    }
}

impl Tracker {
    /// What an upgrade's state carries of the shell (the script's path is the terminal's to add).
    pub(crate) fn to_state(&self) -> upgrade::ShellState {
        upgrade::ShellState {
            nonce: self.nonce.clone(),
            script: None,
            sequence: self.sequence,
            phase: match self.state {
                ShellStateState::Starting => upgrade::ShellPhase::Starting,
                ShellStateState::Prompt => upgrade::ShellPhase::Prompt,
                ShellStateState::Running => upgrade::ShellPhase::Running,
            },
            cwd: self.cwd.clone(),
            commands: self.commands.iter().map(command_state).collect(),
            running: self.running,
            next_id: self.next_id,
            typed: self.typed,
            typed_before_prompt: self.typed_before_prompt,
            prompts: self.prompts,
            awaiting_prompt: self.awaiting_prompt,
            input_ready: self.input_ready,
            scanner: self.scanner.to_state(),
        }
    }

    /// The shell as a state left it (at most [`MAX_COMMANDS`] of its commands, the newest).
    pub(crate) fn from_state(state: &upgrade::ShellState) -> Tracker {
        let skip = state.commands.len().saturating_sub(MAX_COMMANDS);
        Tracker {
            nonce: state.nonce.clone(),
            scanner: Scanner::from_state(&state.scanner),
            sequence: state.sequence,
            state: match state.phase {
                upgrade::ShellPhase::Starting => ShellStateState::Starting,
                upgrade::ShellPhase::Prompt => ShellStateState::Prompt,
                upgrade::ShellPhase::Running => ShellStateState::Running,
            },
            cwd: state.cwd.clone(),
            commands: state.commands.iter().skip(skip).map(shell_command).collect(),
            running: state.running,
            next_id: state.next_id,
            typed: state.typed,
            typed_before_prompt: state.typed_before_prompt,
            prompts: state.prompts,
            awaiting_prompt: state.awaiting_prompt,
            input_ready: state.input_ready,
        }
    }
}

/// A command as the state carries it.
fn command_state(command: &ShellCommand) -> upgrade::CommandState {
    upgrade::CommandState {
        command_id: command.command_id,
        command: command.command.clone(),
        cwd: command.cwd.clone(),
        output_start: command.output_start,
        output_end: command.output_end,
        exit_code: command.exit_code,
        started_at: command.started_at,
        finished_at: command.finished_at,
    }
}

/// A command from the state.
fn shell_command(command: &upgrade::CommandState) -> ShellCommand {
    ShellCommand {
        command_id: command.command_id,
        command: command.command.clone(),
        cwd: command.cwd.clone(),
        output_start: command.output_start,
        output_end: command.output_end,
        exit_code: command.exit_code,
        started_at: command.started_at,
        finished_at: command.finished_at,
    }
}

/// The pristine state of a terminal whose shell has said nothing yet (before its actor starts).
pub(crate) fn starting() -> ShellState {
    ShellState { state: ShellStateState::Starting, command_id: None, cwd: None }
}

/// A reported working directory: UTF-8 without control characters and at most [`MAX_SHELL_CWD_BYTES`], or unknown.
fn shell_cwd(bytes: &[u8]) -> Option<String> {
    let cwd = std::str::from_utf8(bytes).ok()?;
    (cwd.len() <= MAX_SHELL_CWD_BYTES && !cwd.is_empty() && !cwd.chars().any(char::is_control)).then(|| cwd.to_owned())
}

/// A command line as kept: invalid UTF-8 and control characters other than tab and newline as U+FFFD, cut at a
/// character boundary to [`MAX_COMMAND_LINE_BYTES`].
fn command_line(bytes: &[u8]) -> String {
    let mut line = String::new();
    for c in String::from_utf8_lossy(bytes).chars() {
        let c = if c.is_control() && c != '\t' && c != '\n' { char::REPLACEMENT_CHARACTER } else { c };
        if line.len() + c.len_utf8() > MAX_COMMAND_LINE_BYTES {
            break;
        }
        line.push(c);
    }
    line
}

#[cfg(test)]
mod tests;

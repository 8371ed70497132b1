//! A terminal as the state carries it: its child and spec, the PTY master's descriptor, the emulator's snapshot,
//! the replay ring with its offsets, what its actor knows (titles, controller, foreground process, lifecycle,
//! shell integration) and the bytes on their way through it (output read and not yet parsed, input not yet
//! written). Everything a client can observe of a terminal comes back from this, with the same offsets.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::state::{Blob, ChildState, ExitState};

/// One terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TerminalState {
    /// The process id.
    pub(crate) id: u64,
    /// The child.
    pub(crate) child: ChildState,
    /// What it was created with.
    pub(crate) spec: TerminalSpec,
    /// When it started, in milliseconds since the Unix epoch.
    pub(crate) started_at: u64,
    /// The PTY's slave (`/dev/pts/N`), to recognise the processes attached to it.
    pub(crate) tty: Option<PathBuf>,
    /// The PTY master's descriptor, kept open across `execve`.
    pub(crate) master_fd: i32,
    /// The size now.
    pub(crate) cols: u16,
    /// The size now.
    pub(crate) rows: u16,
    /// History lines the emulator keeps.
    pub(crate) scrollback_lines: usize,
    /// The emulator's binary snapshot (libghostty's, readable only by the revision the state's build names).
    /// Empty when none could be made: the successor then rebuilds the screen from the replay ring alone.
    pub(crate) vt_snapshot: Blob,
    /// The replay ring.
    pub(crate) replay: ReplayState,
    /// Output read from the PTY that the emulator had not taken yet: it follows the ring's tail, and the
    /// successor processes it before reading more.
    pub(crate) unprocessed: Blob,
    /// Input and the emulator's replies not yet written to the PTY, in order: written before any new input.
    pub(crate) pending_input: Blob,
    /// The program's OSC title and the user's.
    pub(crate) titles: TitlesState,
    /// The controller's attachment id: a subscriber that comes back with it is the controller again.
    pub(crate) controller: Option<String>,
    /// How many times the controller changed.
    pub(crate) generation: u64,
    /// The foreground process's name, as last published.
    pub(crate) foreground: Option<String>,
    /// Why the terminal broke, if it did before its child's end was known.
    pub(crate) failure: Option<String>,
    /// Where it is on its way to `exited`.
    pub(crate) life: LifeState,
    /// Shell integration, for a terminal started with it.
    pub(crate) shell: Option<ShellState>,
    /// A command `run` typed (or holds, to type as a bracketed paste) that the shell had not started: a
    /// `wait_command` for its id after the upgrade still waits for it.
    pub(crate) run: Option<RunState>,
    /// Format 2: the emulator's snapshot and the ring's bytes travel in a file of their own, which the terminal's
    /// actor wrote while its terminal ran on (`vt_snapshot` and `replay.bytes` are then empty). Absent: they
    /// follow the header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) screen_file: Option<ScreenFile>,
    /// Format 2: the offset the emulator's snapshot was taken at, at most the ring's tail. The successor feeds
    /// the ring's bytes from there to the tail to the decoded emulator without answering them (the predecessor
    /// did). Absent (format 1): the ring's tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) snapshot_at: Option<u64>,
    /// Format 2: whether the alternate screen was active at the ring's tail, which `info` tells until the
    /// successor's emulator is rebuilt. Absent: the primary screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) alternate_screen: Option<bool>,
}

/// A terminal's emulator snapshot and replay bytes in a sealed memory file of their own, passed across `execve`
/// like the PTY master: the snapshot's bytes, then the ring's (from `replay.head`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScreenFile {
    /// The file's descriptor, kept open across `execve`.
    pub(crate) fd: i32,
    /// How many bytes of it are the snapshot (none: the successor rebuilds the screen from the ring).
    pub(crate) snapshot_len: u64,
    /// How many bytes of the ring follow it.
    pub(crate) ring_len: u64,
}

impl TerminalState {
    /// How many bytes of the ring the state holds (inline or in its screen file).
    pub(crate) fn ring_len(&self) -> u64 {
        self.screen_file.map_or(self.replay.bytes.0.len() as u64, |file| file.ring_len)
    }

    /// The offset just past the ring's newest byte: where the successor's reader starts.
    pub(crate) fn ring_tail(&self) -> u64 {
        self.replay.head + self.ring_len()
    }

    /// Whether it holds an emulator snapshot.
    pub(crate) fn has_snapshot(&self) -> bool {
        self.screen_file.map_or(!self.vt_snapshot.0.is_empty(), |file| file.snapshot_len > 0)
    }

    /// Its blobs, in the order their bytes follow the header.
    pub(crate) fn blobs(&self) -> Vec<&Blob> {
        let mut blobs = vec![&self.vt_snapshot, &self.replay.bytes, &self.unprocessed, &self.pending_input];
        blobs.extend(self.shell.iter().map(|shell| &shell.scanner.payload));
        blobs
    }

    /// The same, to fill them.
    pub(crate) fn blobs_mut(&mut self) -> Vec<&mut Blob> {
        let mut blobs =
            vec![&mut self.vt_snapshot, &mut self.replay.bytes, &mut self.unprocessed, &mut self.pending_input];
        blobs.extend(self.shell.iter_mut().map(|shell| &mut shell.scanner.payload));
        blobs
    }
}

/// What a terminal was created with (`terminal::PtySpec`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TerminalSpec {
    /// The program.
    pub(crate) program: String,
    /// Its arguments.
    pub(crate) args: Vec<String>,
    /// The working directory it started in.
    pub(crate) cwd: PathBuf,
    /// The environment the request overlaid.
    pub(crate) env: BTreeMap<String, String>,
    /// The grouping key.
    pub(crate) group_id: String,
    /// The creation title.
    pub(crate) title: String,
    /// The creation size.
    pub(crate) cols: u16,
    /// The creation size.
    pub(crate) rows: u16,
    /// Whether it started with shell integration.
    pub(crate) shell_integration: bool,
}

/// The replay ring: its newest bytes and the offset of the first one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayState {
    /// The most bytes it keeps.
    pub(crate) capacity: usize,
    /// The offset of its oldest byte.
    pub(crate) head: u64,
    /// Its bytes, oldest first; the tail is `head` plus their length.
    pub(crate) bytes: Blob,
}

/// The titles beside the creation title (`terminal::title::Titles`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TitlesState {
    /// The latest title the program set.
    pub(crate) osc: Option<String>,
    /// The title set by `rename`.
    pub(crate) user: Option<String>,
}

/// Where a process is on its way to its final event (`process::ending::Ending`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LifeState {
    /// How the child ended, once known.
    pub(crate) child: Option<ExitState>,
    /// Whether the output has ended (the reader saw EOF or failed).
    pub(crate) output_ended: bool,
    /// When `exited` was published, if it was (with both ends known, and the same members again).
    pub(crate) exited_at: Option<u64>,
}

/// A terminal's shell integration (`terminal::shell::Tracker` and its scanner).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShellState {
    /// The nonce the marks carry.
    pub(crate) nonce: String,
    /// The integration script the daemon wrote for the terminal, removed with it.
    pub(crate) script: Option<PathBuf>,
    /// The sequence of the last mark taken.
    pub(crate) sequence: u64,
    /// The shell's state.
    pub(crate) phase: ShellPhase,
    /// Its working directory.
    pub(crate) cwd: Option<String>,
    /// Its last commands, oldest first.
    pub(crate) commands: Vec<CommandState>,
    /// Whether the last command is running.
    pub(crate) running: bool,
    /// The id the next command gets.
    pub(crate) next_id: u64,
    /// Whether input reached the terminal at this prompt.
    pub(crate) typed: bool,
    /// Whether input reached it after a command's end, before the next prompt.
    pub(crate) typed_before_prompt: bool,
    /// Prompts shown so far.
    pub(crate) prompts: u64,
    /// A command's end came and the next prompt's mark has not.
    pub(crate) awaiting_prompt: bool,
    /// The prompt has been drawn.
    pub(crate) input_ready: bool,
    /// Where the mark scanner was in the output.
    pub(crate) scanner: ScannerState,
}

/// The shell's state (`ShellStateState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ShellPhase {
    /// It has not shown its first prompt.
    Starting,
    /// It waits at its prompt.
    Prompt,
    /// A command runs.
    Running,
}

/// One command the shell ran (`ShellCommand`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommandState {
    /// Its id.
    pub(crate) command_id: u64,
    /// Its command line.
    pub(crate) command: String,
    /// The shell's directory when it started.
    pub(crate) cwd: Option<String>,
    /// Where its output starts.
    pub(crate) output_start: u64,
    /// Where its output ended, once it has.
    pub(crate) output_end: Option<u64>,
    /// Its exit status, once known.
    pub(crate) exit_code: Option<u32>,
    /// When it started.
    pub(crate) started_at: u64,
    /// When it finished.
    pub(crate) finished_at: Option<u64>,
}

/// Where the OSC 133 scanner was (`terminal::shell::marks::Scanner`): a mark the output was in the middle of.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScannerState {
    /// Where it was within a sequence.
    pub(crate) phase: ScannerPhase,
    /// The offset of the current sequence's ESC.
    pub(crate) start: u64,
    /// The mark's payload read so far.
    pub(crate) payload: Blob,
}

/// Where the scanner was within a sequence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(crate) enum ScannerPhase {
    /// Outside any sequence of interest.
    #[default]
    Ground,
    /// This many bytes of the mark's introducer matched.
    Prefix {
        /// How many.
        matched: usize,
    },
    /// Inside a mark's payload.
    Payload,
    /// Inside a payload, just after an ESC.
    PayloadEsc,
}

/// A command `run` typed or holds that the shell had not started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunState {
    /// The id the shell will give it.
    pub(crate) command_id: u64,
    /// Its command line.
    pub(crate) command: String,
    /// The prompts shown by the time it can no longer start.
    pub(crate) gives_up_after: u64,
    /// While it is held (not typed yet), how long it still waits for the shell's bracketed paste, in
    /// milliseconds.
    pub(crate) held_left_ms: Option<u64>,
}

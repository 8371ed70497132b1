//! What a daemon hands to its successor when it upgrades in place (issue 30): the state of every terminal and
//! pipe process, captured without ending any child or closing any descriptor, written as bytes the new image
//! reads after `execve`, and the processes rebuilt from it with the descriptors it names.
//!
//! - `state.rs`, `terminal.rs`, `pipe.rs`: the format's types, plain data ([`UpgradeState`]).
//! - `encoding.rs`: its bytes (a JSON header and raw blobs) and the checks on reading them.
//! - `error.rs`: [`UpgradeError`].
//! - The capture and the rebuild live with what they capture: `PtyHandle::begin_capture`, `finish_capture` and
//!   `restore` (`terminal/handover.rs`, the actor's side in `terminal/actor/handover.rs`), the same for
//!   `PipeHandle` (`pipe/handover.rs`), and for every process at once `ProcessService::hand_over` and
//!   `take_over` (`service/handover.rs`), which is what the upgrade calls.
//!
//! This module is data only: it names no other module of the daemon but `error` (what a client is told), and
//! those that capture and rebuild name it.
//!
//! **Capture.** A terminal stops at a consistent point: its reader stops reading (what the child writes from
//! then on waits in the PTY), its actor takes every chunk already read, so the ring's tail is exactly where the
//! successor's reader starts, and its writer hands back what it could not write. The PTY master, the child and
//! its exit are untouched: the wait thread never reaps (it waits with `WNOWAIT`), so a child that exits during
//! the upgrade is a zombie the successor watches again and reports exactly as it ended. A pipe process's reader
//! stops between two chunks and hands over its pipe and output file, whose position travels with the descriptor.
//!
//! **The emulator.** Its state is libghostty's binary snapshot, taken while the terminal still runs and passed
//! with the ring in a screen file of its own (format 2), with the offset it was taken at: the successor feeds
//! it the ring from there, unanswered, while the terminal already serves (`terminal/rebuild.rs`). The snapshot
//! holds both screens, their history, the modes, the title and a control sequence the output was in the middle
//! of (up to
//! `opencode_pty_vt::MAX_CONTINUATION_BYTES`; a longer one is read on to its end first). libghostty marks that
//! format "version 1, work in progress, no binary-compatibility guarantee", so the state names the Ghostty
//! revision that made it (`Build::ghostty_revision`) and a build with another revision refuses a state with
//! terminals ([`UpgradeError::VtRevision`]) before anything changes: an upgrade across a libghostty change is
//! refused by the successor's preflight, not half done.
//!
//! **The upgrade's steps.** Before: stop taking requests and answer those in flight (a request queued at a
//! terminal when it is captured is answered that the terminal is gone). Then `ProcessService::hand_over` with
//! the daemon's facts (`Ownership::to_upgrade`, its named descriptors), `UpgradeState::write_to` (a memfd),
//! every descriptor of `UpgradeState::descriptors` kept open without close-on-exec, and `execve`. The
//! successor: `UpgradeState::read_from`, `ProcessService::take_over` with an `adopt` that owns each inherited
//! number, `Ownership::from_upgrade`. On a failure before `execve`, `take_over` in the same daemon with the
//! descriptors `Handover` holds gives everything back as it was. Until `take_over`, the service creates nothing.
//!
//! **Versions.** [`STATE_FORMAT`] is the format this build writes; [`ACCEPTED_STATE_FORMATS`] the ones it reads:
//! its own and the previous one. Format 2 is format 1 with three optional members of a terminal (its screen
//! file, where its snapshot was taken, its active screen), so a format-1 header reads into the same types with
//! them absent (a format-1 build refuses a format-2 state: it does not know the members). To change the format (a member added, removed or
//! renamed, a blob added or moved): copy the types as they are now into a frozen `v1.rs`, bump
//! [`STATE_FORMAT`] to 2 and add it to [`ACCEPTED_STATE_FORMATS`] beside 1, make `read_from` decode a format-1
//! header into the frozen types and convert them into the current ones, and commit a fixture of the new format
//! beside `server/tests/fixtures/upgrade/format-1.state`. The tests read every fixture kept there, and fail when
//! the current types no longer write the newest fixture byte for byte (a format change without a new number).

// The exec mechanics and the preflight: which program (`program`), whether it can take our state
// (`preflight`), the state's frame across `execve` (`envelope`), the `execve` itself (`exec`), taking the
// passed descriptors in the new image (`inherited`), and the new image's `resume` command with its fallback to
// the old executable (`resume`).
pub(crate) mod envelope;
pub(crate) mod exec;
pub(crate) mod inherited;
pub(crate) mod preflight;
pub(crate) mod program;
pub(crate) mod resume;

mod encoding;
mod error;
mod pipe;
mod state;
mod terminal;

pub(crate) use error::UpgradeError;
pub(crate) use pipe::{PipeChildEnd, PipeProcessState};
pub(crate) use state::{
    Blob, ChildState, DaemonState, ExitState, HandoffState, OwnerPhase, OwnerState, ProcessState, UpgradeState,
};
pub(crate) use terminal::{
    CommandState, LifeState, ReplayState, RunState, ScannerPhase, ScannerState, ScreenFile, ShellPhase, ShellState,
    TerminalSpec, TerminalState, TitlesState,
};

/// The state format this build writes.
pub const STATE_FORMAT: u32 = 2;

/// The state formats this build reads: its own and the previous one.
pub const ACCEPTED_STATE_FORMATS: &[u32] = &[1, 2];

/// [`ACCEPTED_STATE_FORMATS`] as words, for messages.
fn accepted_formats() -> String {
    ACCEPTED_STATE_FORMATS.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;

//! The process layer, under the service and under both kinds: what a PTY and a pipe process share, naming
//! neither. The shared types ([`Event`], [`ReplayRead`], [`SubscribeRequest`], [`ProcessSubscription`], the exit
//! status, the lifecycle model) and the shared machinery (delivery to a subscriber or a PTY in `delivery`, the
//! child's watch and kill-and-reap in `child`, ending a child's session in `session`, the daemon's one wait
//! thread in `waiter`, named threads and reporting joins in `thread`, every `unsafe` call in `sys`, the gate that
//! holds every spawn off while an upgrade passes descriptors in `spawn_gate`) live here.
//! PTY-specific code is in `terminal/`, pipe-specific code in `pipe/`; both build on this layer and neither
//! uses the other. What names both kinds (the `Process` enum over a terminal and a pipe process) sits above
//! them, in the service (`service/kinds.rs`).

mod child;
pub(crate) mod delivery;
pub(crate) mod ending;
mod event;
pub(crate) mod session;
pub(crate) mod spawn_gate;
pub(crate) mod sys;
pub(crate) mod thread;
pub(crate) mod threads;
mod waiter;

use opencode_pty_protocol::{OptIn, Role};

pub(crate) use child::Child;
pub use delivery::ProcessSubscription;
pub(crate) use event::response_frame;
pub use event::{Event, Message, Output};
pub(crate) use waiter::ExitStatus;

/// The answer to a replay read: the kept bytes from the requested offset (or the oldest kept one) to the tail.
/// A pipe process keeps none, so its read is always empty, from the tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayRead {
    /// The offset the reader asked for.
    pub requested: u64,
    /// The offset `bytes` starts at: the requested one, or the oldest kept one when that is later.
    pub available: u64,
    /// The offset just past the last byte of `bytes` (the tail at the time of the read).
    pub end: u64,
    /// Whether output between `requested` and `available` was dropped from the buffer.
    pub truncated: bool,
    /// The raw output from `available` to `end`.
    pub bytes: Vec<u8>,
}

/// Why a process is being stopped, which decides what its pending `wait`s hear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// A client's `terminate`: a pipe's pending waiters are answered `terminated`.
    Terminate,
    /// The daemon is stopping (or the handle was dropped): pending waiters are disconnected without an answer.
    Shutdown,
}

/// What a subscriber asking for control does when another attachment already controls the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExistingController {
    /// The subscription is refused.
    Refuse,
    /// The subscriber takes over (`takeover` on the wire); the old controller stays subscribed as an observer.
    Replace,
}

impl ExistingController {
    /// The wire's `takeover` flag as this choice.
    pub fn from_takeover(takeover: bool) -> ExistingController {
        if takeover { ExistingController::Replace } else { ExistingController::Refuse }
    }
}

/// The additive features a request opted into (SPEC V7): the members its answer's `ProcessInfo`s carry beyond
/// protocol 8 and, for a subscription, the events it gets beyond protocol 8. The default is none: exactly what a
/// client that knows no features expects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OptIns {
    /// `commands`: `pty.shell` (for a terminal with shell integration), and `command_started` and
    /// `command_finished` events.
    pub commands: bool,
    /// `input`: `pty.input` and `pty.alternate_screen`, and `input_changed` events.
    pub input: bool,
}

impl OptIns {
    /// None: what protocol 8 without features sends.
    pub const NONE: OptIns = OptIns { commands: false, input: false };

    /// The features a request names (its `features`, or `subscribe`'s `events`); repeats are harmless.
    pub fn from_wire(names: &[OptIn]) -> OptIns {
        let mut opt_ins = OptIns::NONE;
        for name in names {
            match name {
                OptIn::Commands => opt_ins.commands = true,
                OptIn::Input => opt_ins.input = true,
            }
        }
        opt_ins
    }
}

/// A `subscribe`, for either kind. A pipe process only has observers and keeps no replay, so it uses the
/// offset alone (the attachment id is still bounded, SPEC B2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscribeRequest {
    /// Replay from this output offset.
    pub offset: u64,
    /// The subscriber's attachment id.
    pub attachment: String,
    /// Observer or controller.
    pub role: Role,
    /// What happens when another attachment controls the terminal.
    pub existing_controller: ExistingController,
    /// The features whose events (and `attached` members) the subscriber asked for; a pipe process has none.
    pub events: OptIns,
}

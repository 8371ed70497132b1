//! The opencode-pty daemon as a library: the terminal runtime and its service, used by the binary and tested
//! in-process before any socket exists.
//!
//! Module map, from the top down: `daemon` (the persistent service: runtime directory, registration, socket,
//! ownership, the router that answers every request, the connection that only does I/O; and in `recovery`,
//! the record of process groups, the guardian and the sweep that end what a dead daemon left), `service` (the
//! registry of PTYs and pipe processes, in creation order, and the `Process` enum that names both kinds),
//! `terminal` (one PTY: spawn, the actor that owns its emulator, the reader and writer threads, replay, the
//! fan-out's policy, titles), `pipe` (one pipe process: its output file and reader), `process` (what both
//! kinds share, naming neither: events and their delivery to each destination, the exit status and
//! lifecycle, the wait thread, kill-and-reap, ending a session, named threads and reporting joins, and every
//! `unsafe` call), `procinfo` (what `/proc` says of a process: the crate's one `stat` parser, and the
//! foreground process of a PTY and what it waits for), `error` (what a client is told), `bounds` (client-supplied sizes against the
//! protocol's limits), `listing` (the daemon-wide budget that keeps `list` within one frame), `time` (the wall
//! clock in milliseconds), `upgrade` (the in-place upgrade: the program and its preflight, the state's frame,
//! the `execve` handover, the descriptors a new image inherits, and its `resume` with the fallback).

#![deny(missing_docs)]
#![deny(unsafe_code)]
#![warn(unreachable_pub, unnameable_types)]

mod bounds;
mod daemon;
mod error;
mod listing;
mod pipe;
mod process;
mod procinfo;
mod service;
mod terminal;
mod time;
mod upgrade;

// The public API is what the binary (`main.rs`, `cli/`), the tests and the examples use; everything else is
// `pub(crate)`, and `unreachable_pub` keeps it so.

pub use daemon::error::RuntimeError;
pub use daemon::recovery::guardian::{GuardError, serve as serve_guardian};
pub use daemon::run::{DaemonError, DaemonOptions, run as run_daemon};
pub use daemon::runtime::{default_root, validate_name};
pub use daemon::serving::state::DAEMON_STOPPING;
pub use error::{ALREADY_CONTROLLED, ServiceError};
pub use pipe::{MetadataBudget, PipeHandle, PipeSpec, PipeWait, stalled_output_error};
pub use process::{
    Event, ExistingController, Message, OptIns, Output, ProcessSubscription, ReplayRead, StopReason, SubscribeRequest,
};
pub use service::{Process, ProcessHook, ProcessService};
pub use terminal::replay::{Replay, ReplayError};
pub use terminal::{PtyHandle, PtySpec, TerminalConfig, Turns};
pub use upgrade::envelope::EnvelopeError;
pub use upgrade::exec::ExecError;
pub use upgrade::inherited::AdoptError;
pub use upgrade::preflight::{
    CheckReport, PreflightError, UpgradeRefused, check_report as upgrade_check_report, vet as vet_upgrade,
};
pub use upgrade::program::{Program as UpgradeProgram, ProgramError};
pub use upgrade::resume::{ResumeArgs, ResumeError, resume as resume_daemon};
pub use upgrade::{ACCEPTED_STATE_FORMATS, STATE_FORMAT};

/// The daemon's named bounds and deadlines that its tests check against (each documented where it is defined).
pub mod limits {
    pub use crate::daemon::lock::LOCK_WAIT;
    pub use crate::daemon::log_limit::LOG_BURST;
    pub use crate::daemon::serving::connection::FIRST_REQUEST_TIMEOUT;
    pub use crate::daemon::serving::intake::{
        BUDGET_WAIT, MAX_AUTHENTICATED_PARTIAL_BYTES, MAX_UNAUTHENTICATED_BYTES, UNBUDGETED_FRAME_BYTES,
    };
    pub use crate::daemon::serving::pool::{IDLE_WORKER_LINGER, MAX_IDLE_WORKERS};
    pub use crate::daemon::serving::state::{CONNECTION_RESERVE, MAX_CONNECTIONS, MAX_HELD_CONNECTIONS};
    pub use crate::daemon::serving::subscription::{STALLED_WRITE_CHECK, WRITE_BATCH_BYTES};
    pub use crate::daemon::socket::DEFAULT_SOCKET_TMP;
    pub use crate::daemon::watch::RUNTIME_CHECK_INTERVAL;
    pub use crate::listing::{MAX_PIPE_INFO_BYTES, MAX_PTY_INFO_BYTES, PROCESS_INFO_OVERHEAD_BYTES};
    pub use crate::pipe::{LINGER, MAX_PIPE_WAITERS, MAX_TOTAL_METADATA_BYTES};
    pub use crate::process::session::HANGUP_GRACE;
    pub use crate::procinfo::{
        MAX_FDINFO_BYTES, MAX_INSPECTED_MEMBERS, MAX_INSPECTED_TASKS, MAX_POLLED_FDS, MAX_WALKED_PROCESSES,
    };
    pub use crate::terminal::replay::{REPLAY_BLOCK_BYTES, REPLAY_PLAIN_TAIL_BYTES};
    pub use crate::terminal::{
        COALESCE_TIMER_SLACK_NS, COMPACT_AFTER, CONTROLLER_BACKLOG_EVENTS, CONTROLLER_QUEUE_EVENTS,
        DIRECT_WRITE_BATCH_BYTES, FREE_OUTPUT_BURST_BYTES, FREE_OUTPUT_BYTES_PER_SECOND, INPUT_CHECK_DELAYS,
        INPUT_CHECK_MAX_DELAY, MAX_COMPACT_STEPS, MAX_OUTPUT_TURNS, MAX_PENDING_INPUT_BYTES, OBSERVER_BACKLOG_BYTES,
        OBSERVER_BACKLOG_EVENTS, OBSERVER_QUEUE_EVENTS, OUTPUT_QUEUE_CHUNKS, PRECISE_FLUSH_BYTES, PRECISE_WAKE_MARGIN,
        REQUEST_TIMEOUT, TURN_OUTPUT_BYTES, WRITER_QUEUE_CHUNKS,
    };
}

/// What the daemon leaves in its runtime directory and reads from `/proc` about the process groups it started,
/// for tests that check the guardian's work from outside (and the command line's `stop`, which waits for the
/// daemon's process to be gone).
pub mod inspect {
    pub use crate::daemon::recovery::record::{GROUPS_FILE, Group, RecordFile};
    pub use crate::process::session::HANGUP_GRACE;
    pub use crate::procinfo::stat::{ProcStat, parse_stat, proc_stat};
}

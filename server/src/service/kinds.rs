//! What names both kinds, above them: [`Process`], one registered process (a terminal or a pipe process) with
//! the operations both have (`info`, `replay`, `subscribe`, `terminate`, the stop in two steps), each passing
//! the call on to `terminal/` or `pipe/`. (A subscription of either kind is one type, the process layer's
//! `ProcessSubscription`.)

use std::sync::Arc;

use opencode_pty_protocol::{Mode, ProcessInfo};

use crate::error::ServiceError;
use crate::pipe::PipeHandle;
use crate::process::session::Reach;
use crate::process::{OptIns, ProcessSubscription, ReplayRead, StopReason, SubscribeRequest};
use crate::terminal::{InfoRequest, PtyHandle};

/// One registered process of either kind.
#[derive(Debug, Clone)]
pub enum Process {
    /// A pseudo-terminal with its emulator.
    Pty(Arc<PtyHandle>),
    /// A plain process whose output goes to a file.
    Pipe(Arc<PipeHandle>),
}

/// A process's info being refreshed for `list` (see [`Process::ask_info`]).
#[derive(Debug)]
pub(crate) enum InfoAsked {
    /// A terminal's actor, asked.
    Pty(InfoRequest),
    /// A pipe process's, read at once (nothing to wait for).
    Pipe(Box<ProcessInfo>),
}

impl InfoAsked {
    /// The refreshed info, or the last published one when the terminal did not answer by the deadline.
    pub(crate) fn answer(self) -> ProcessInfo {
        match self {
            InfoAsked::Pty(request) => request.answer(),
            InfoAsked::Pipe(info) => *info,
        }
    }
}

impl Process {
    /// The service's id of the process.
    pub fn id(&self) -> u64 {
        match self {
            Process::Pty(handle) => handle.id(),
            Process::Pipe(handle) => handle.id(),
        }
    }

    /// Which kind it is.
    pub fn mode(&self) -> Mode {
        match self {
            Process::Pty(_) => Mode::Pty,
            Process::Pipe(_) => Mode::Pipe,
        }
    }

    /// The child's pid, which is also its process group id.
    pub fn pid(&self) -> u32 {
        match self {
            Process::Pty(handle) => handle.pid(),
            Process::Pipe(handle) => handle.pid(),
        }
    }

    /// The process as `get` describes it (a PTY's foreground process refreshed, within `INFO_TIMEOUT`).
    pub fn info(&self) -> ProcessInfo {
        self.info_with(OptIns::NONE)
    }

    /// [`Self::info`] with the members of the features `opt_ins` names (a pipe process has none).
    pub fn info_with(&self, opt_ins: OptIns) -> ProcessInfo {
        match self {
            Process::Pty(handle) => handle.info_with(opt_ins),
            Process::Pipe(handle) => handle.info(),
        }
    }

    /// The process as it last described itself, without waiting for anything: what `create` answers.
    pub fn last_info(&self) -> ProcessInfo {
        self.last_info_with(OptIns::NONE)
    }

    /// [`Self::last_info`] with the members of the features `opt_ins` names.
    pub fn last_info_with(&self, opt_ins: OptIns) -> ProcessInfo {
        match self {
            Process::Pty(handle) => handle.last_info_with(opt_ins),
            Process::Pipe(handle) => handle.info(),
        }
    }

    /// The first half of [`Self::info`] for `list`: a PTY is asked to refresh, answering by `deadline`, and
    /// not waited for yet; [`InfoAsked::answer`] is the second half.
    pub(crate) fn ask_info(&self, deadline: std::time::Instant, opt_ins: OptIns) -> InfoAsked {
        match self {
            Process::Pty(handle) => InfoAsked::Pty(handle.ask_info(deadline, opt_ins)),
            Process::Pipe(handle) => InfoAsked::Pipe(Box::new(handle.info())),
        }
    }

    /// Kept output from `offset` (always empty, from the tail, for a pipe process).
    pub fn replay(&self, offset: u64) -> Result<ReplayRead, ServiceError> {
        match self {
            Process::Pty(handle) => handle.replay(offset),
            Process::Pipe(handle) => handle.replay(offset),
        }
    }

    /// Attaches a subscriber; its first event is `attached`.
    pub fn subscribe(&self, request: SubscribeRequest) -> Result<ProcessSubscription, ServiceError> {
        // Bounded for both kinds (SPEC B2), though a pipe subscription neither keeps nor echoes it.
        crate::bounds::check_attachment(&request.attachment)?;
        match self {
            Process::Pty(handle) => handle.subscribe_with(
                request.offset,
                request.attachment,
                request.role,
                request.existing_controller,
                request.events,
            ),
            Process::Pipe(handle) => handle.subscribe(request.offset),
        }
    }

    /// Kills the process (a terminal: hangs up its session, then kills what is left of it; a pipe process: its
    /// process group), joins its threads and reaps the child; `reason` decides what a pipe's pending waiters
    /// hear. Returns false when it had already been stopped.
    pub fn terminate(&self, reason: StopReason) -> bool {
        match self {
            Process::Pty(handle) => handle.terminate(),
            Process::Pipe(handle) => handle.terminate(reason),
        }
    }

    /// The first step of [`Self::terminate`], for stopping many processes at once: a pipe process's group gets
    /// SIGKILL, a terminal is hung up (its session is then ended with `session::end_sessions`, see
    /// [`Self::session`]). False when it had already been stopped; otherwise [`Self::finish_stop`] must follow.
    pub(crate) fn begin_stop(&self, reason: StopReason) -> bool {
        match self {
            Process::Pty(handle) => handle.begin_stop(),
            Process::Pipe(handle) => handle.begin_stop(reason),
        }
    }

    /// The session a terminal's stop ends as a whole (`None` for a pipe process, whose group is all it has).
    pub(crate) fn session(&self) -> Option<Reach> {
        match self {
            Process::Pty(handle) => handle.session(),
            Process::Pipe(_) => None,
        }
    }

    /// The last step of [`Self::terminate`]: joins the process's threads and reaps the child.
    pub(crate) fn finish_stop(&self) {
        match self {
            Process::Pty(handle) => handle.finish_stop(),
            Process::Pipe(handle) => handle.finish_stop(),
        }
    }
}

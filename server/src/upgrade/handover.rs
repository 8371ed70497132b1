//! What the upgrade calls: [`capture`] every process of the service into a state beside the daemon's own
//! facts, with the descriptors the state names (to keep open across `execve`), and [`restore`] them from a
//! state in the image that reads it (the successor, or this one when the upgrade falls back).

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;

use super::{DaemonState, UpgradeError, UpgradeState};
use crate::error::ServiceError;
use crate::service::ProcessService;

/// A daemon's state for its successor and the descriptors it names.
#[derive(Debug)]
#[allow(dead_code, reason = "the upgrade's execve (issue 30) reads it; that part is merged separately")]
pub(crate) struct Handover {
    /// The state: this build, the daemon's facts (its `next_id` is the service's), every process captured.
    pub(crate) state: UpgradeState,
    /// The descriptors the processes' states name, by number: keep them open, without close-on-exec, until
    /// [`restore`] takes them (`UpgradeState::descriptors` lists them with the daemon's own).
    pub(crate) descriptors: BTreeMap<i32, OwnedFd>,
    /// The processes that could not be captured (each was ended), with why.
    pub(crate) failures: Vec<(u64, ServiceError)>,
}

/// Captures every process of `service` (which then takes no new one until [`restore`]) into a state with
/// `daemon`'s facts; the service's next process id replaces `daemon.next_id`. Nothing is killed, reaped or
/// closed. Every terminal is asked at once, so the pause is about the slowest terminal's.
#[allow(dead_code, reason = "the upgrade's execve (issue 30) calls it; that part is merged separately")]
pub(crate) fn capture(service: &ProcessService, daemon: DaemonState) -> Handover {
    let captured = service.capture_all();
    let daemon = DaemonState { next_id: captured.next_id, ..daemon };
    Handover {
        state: UpgradeState::new(daemon, captured.processes),
        descriptors: captured.descriptors,
        failures: captured.failures,
    }
}

/// Rebuilds the processes of `state` in `service`, each taking the descriptors its state names from `adopt`
/// (which turns a number inherited across `execve`, or one [`Handover::descriptors`] holds, into its owned
/// descriptor). Answers the processes that could not be rebuilt (each was ended, the others run); refused
/// as a whole, rebuilding nothing, when a process of the state is running already. The daemon's own facts
/// (`state.daemon`: ownership, its descriptors) are the caller's to take.
#[allow(dead_code, reason = "the upgrade's execve (issue 30) calls it; that part is merged separately")]
pub(crate) fn restore(
    service: &ProcessService,
    state: UpgradeState,
    adopt: impl FnMut(i32) -> Result<OwnedFd, String>,
) -> Result<Vec<UpgradeError>, UpgradeError> {
    state.check_compatible()?;
    service.restore_all(state.daemon.next_id, state.processes, adopt)
}

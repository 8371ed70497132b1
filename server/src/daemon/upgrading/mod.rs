//! The in-place upgrade, end to end (issue 30): the owner's `upgrade` checked on its channel (`ask`: the
//! program and its preflight, then handed to the main thread), the old image's side on the main thread
//! (`handover.rs`: quiesce, capture, `execve`; on failure everything back as it was), and the new image's
//! (`resume.rs`: the state checked before anything is taken, then the daemon rebuilt around the same
//! descriptors, children and owner, and served). The mechanics it uses are in `crate::upgrade`.

pub(crate) mod handover;
pub(crate) mod resume;

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;

use crossbeam_channel::{Sender, bounded};

use super::serving::state::{DAEMON_STOPPING, DaemonState};
use crate::upgrade::preflight::{CheckReport, vet};
use crate::upgrade::program::Program;

/// The named descriptor of the listening socket in the state.
pub(crate) const LISTENER: &str = "listener";
/// The named descriptor of the runtime directory's service lock.
pub(crate) const LOCK: &str = "lock";
/// The named descriptor of the owner's connection, which stays open and stays the owner channel.
pub(crate) const OWNER: &str = "owner";
/// The named descriptor of the write end of the guardian's pipe (the guardian's pid travels beside it).
pub(crate) const GUARDIAN: &str = "guardian";

/// An upgrade the owner asked for, checked, on its way to the main thread.
#[derive(Debug)]
pub(crate) struct Pending {
    /// What to execute.
    pub(crate) program: Program,
    /// What its preflight said of it.
    pub(crate) report: CheckReport,
    /// The owner channel that asked: it stays open across the upgrade.
    pub(crate) owner: Arc<UnixStream>,
    /// Where the main thread says why the upgrade did not happen (it says nothing when it did).
    pub(crate) reply: Sender<String>,
}

/// `upgrade` on the owner channel of `generation` (`owner`): checks `program` (absent: the daemon's own
/// executable as it is on disk now) and its preflight, then has the main thread carry it out. Returns only
/// when this image serves on, with why the upgrade was refused or did not happen; nothing was lost then.
pub(crate) fn ask(state: &DaemonState, owner: &Arc<UnixStream>, generation: u64, program: Option<String>) -> String {
    let requested = program.map(PathBuf::from);
    let (program, report) = match vet(requested.as_deref()) {
        Ok(vetted) => vetted,
        Err(refused) => {
            tracing::warn!(%refused, "upgrade refused");
            return refused.to_string();
        }
    };
    tracing::info!(program = %program.path().display(), version = %report.version, protocol = report.protocol,
        "upgrade asked for; the program passed its checks");
    let (reply, replied) = bounded(1);
    if let Err(refused) = state.request_upgrade(generation, Pending { program, report, owner: owner.clone(), reply }) {
        return refused.to_owned();
    }
    // The main thread answers when the upgrade did not happen, or drops the sender when the daemon stops first.
    replied.recv().unwrap_or_else(|_| DAEMON_STOPPING.to_owned())
}

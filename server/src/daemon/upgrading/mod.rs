//! The in-place upgrade, end to end (issue 30): the old image's side (`handover.rs`: the owner's `upgrade`
//! checked on its channel, the program and its preflight, then carried out by the main thread: quiesce,
//! capture, `execve`; on failure everything back as it was), and the new image's
//! (`resume.rs`: the state checked and everything that can fail done before it commits, each step one the
//! old image takes back if it falls back, then the daemon rebuilt around the same descriptors, children and
//! owner, and served). The mechanics it uses are in `crate::upgrade`.

pub(crate) mod handover;
pub(crate) mod resume;

pub(crate) use handover::{Pending, ask};

/// The named descriptor of the listening socket in the state.
pub(crate) const LISTENER: &str = "listener";
/// The named descriptor of the runtime directory's service lock.
pub(crate) const LOCK: &str = "lock";
/// The named descriptor of the owner's connection, which stays open and stays the owner channel.
pub(crate) const OWNER: &str = "owner";
/// The named descriptor of the write end of the guardian's pipe (the guardian's pid travels beside it).
pub(crate) const GUARDIAN: &str = "guardian";

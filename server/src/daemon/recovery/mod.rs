//! Recovering from a dead daemon: the record of a daemon's process groups (`record`), ending what a dead
//! daemon's record lists (`leftovers`), the startup sweep of dead siblings' runtime directories (`sweep`) and
//! the guardian process that outlives its daemon (`guardian`).

pub(crate) mod guardian;
pub(crate) mod leftovers;
pub(crate) mod record;
pub(crate) mod sweep;

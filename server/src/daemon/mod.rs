//! The persistent service, in three parts: the daemon's life (`run`: start, the runtime directory and
//! registration, the lock, the socket, signals, the watch on its directory, the stop), serving requests
//! (`serving`), and recovering from a dead daemon (`recovery`). The terminal runtime (`crate::terminal`) knows
//! nothing of any of it.

pub(crate) mod error;
pub(crate) mod files;
pub(crate) mod lock;
pub(crate) mod log_limit;
pub(crate) mod recovery;
pub(crate) mod run;
pub(crate) mod running;
pub(crate) mod runtime;
pub(crate) mod serving;
pub(crate) mod signals;
pub(crate) mod socket;
pub(crate) mod upgrading;
pub(crate) mod watch;

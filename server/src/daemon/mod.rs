//! The persistent service: the runtime directory and registration, the socket, ownership and handoff,
//! connections and the request router, and recovering from a dead daemon (`recovery`). The terminal runtime
//! (`crate::terminal`) knows nothing of any of it.

pub(crate) mod connection;
pub(crate) mod error;
pub(crate) mod files;
pub(crate) mod frames;
pub(crate) mod intake;
pub(crate) mod lock;
pub(crate) mod log_limit;
pub(crate) mod ownership;
pub(crate) mod pool;
pub(crate) mod recovery;
pub(crate) mod router;
pub(crate) mod run;
pub(crate) mod runtime;
pub(crate) mod server;
pub(crate) mod signals;
pub(crate) mod socket;
pub(crate) mod state;
pub(crate) mod subscription;
pub(crate) mod watch;

//! The persistent service: the runtime directory and registration, the socket, ownership and handoff,
//! connections and the request router. The terminal runtime (`crate::terminal`) knows nothing of any of it.

pub mod connection;
pub mod error;
pub mod guardian;
pub mod leftovers;
pub mod log_limit;
pub mod ownership;
pub mod record;
pub(crate) mod router;
pub mod run;
pub mod runtime;
pub mod server;
pub mod signals;
pub mod subscription;
pub mod sweep;

//! Serving requests: the accept loop and its connection threads, each connection's frames and first-request
//! deadline, the router, ownership and handoff, and the subscriptions and waits a connection holds.

pub(crate) mod connection;
pub(crate) mod frames;
pub(crate) mod intake;
pub(crate) mod ownership;
pub(crate) mod pool;
pub(crate) mod router;
pub(crate) mod server;
pub(crate) mod state;
pub(crate) mod subscription;

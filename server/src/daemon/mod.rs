//! The persistent service: the runtime directory and registration, the socket, ownership and handoff,
//! connections and request dispatch. The terminal runtime (`crate::terminal`) knows nothing of any of it.

pub mod runtime;
pub mod sweep;

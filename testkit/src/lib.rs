//! Helpers shared by the workspace's tests, examples and benchmarks, and by nothing it ships: generated
//! terminal input ([`screens`]), a sleeping child to signal ([`Sleeper`]) and the daemon binary beside a test
//! ([`daemon_binary`]). It depends on none of our crates,
//! so that any of them, `vt` included, may take it as a dev-dependency without a dependency pointing back.

mod binary;
pub mod screens;
mod sleeper;

pub use binary::daemon_binary;
pub use sleeper::Sleeper;

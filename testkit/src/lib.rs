//! Helpers shared by the workspace's tests, examples and benchmarks, and by nothing it ships: generated
//! terminal input ([`screens`]), a sleeping child to signal ([`Sleeper`]) and the daemon binary beside a test
//! ([`daemon_binary`]), and running Node.js projects' tests ([`node`]). It depends on none of our crates,
//! so that any of them, `vt` included, may take it as a dev-dependency without a dependency pointing back.

mod binary;
pub mod node;
pub mod screens;
mod sleeper;

pub use binary::daemon_binary;
pub use sleeper::Sleeper;

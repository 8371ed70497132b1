//! Helpers shared by the workspace's tests, examples and benchmarks, and by nothing it ships: generated
//! terminal input ([`screens`]) and a sleeping child to signal ([`Sleeper`]). It depends on none of our crates,
//! so that any of them, `vt` included, may take it as a dev-dependency without a dependency pointing back.

pub mod screens;
mod sleeper;

pub use sleeper::Sleeper;

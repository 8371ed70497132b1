//! The server's runtime in process, without the socket: one test binary whose modules are its topics. The
//! daemon binary's tests over the socket are in `tests/daemon/`. Two in-process tests are binaries of their own
//! because they need their process to themselves: `tests/threads.rs` counts its threads, and
//! `tests/descriptors.rs` keeps every core busy.

#[path = "../support/mod.rs"]
mod support;

mod control;
mod input;
mod pipe;
mod terminal;

//! The real daemon binary over its socket and its command line: one test binary whose modules are its
//! topics. Every daemon a test starts is stopped when its guard drops, even on panic.

#[path = "../support/mod.rs"]
mod support;

mod bad_input;
mod bounds;
mod cli;
mod completions;
mod compression;
mod faults;
mod guardian;
mod jobs;
mod json_output;
mod limits;
mod listing;
mod long_lived;
mod newcomer;
mod ownership;
mod packaging;
mod pipe;
mod run;
mod runtime_dir;
mod security;
mod shell;
mod terminal;
mod tie_up;
mod upgrade;

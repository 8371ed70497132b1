//! Integration tests of the client against a scripted fake daemon (`fake`): each test plays the daemon's side
//! of one or more connections next to the client's calls, and everything is bounded by `fake::bounded`.

mod commands;
mod discover;
mod fake;
mod framing;
mod owner;
mod requests;
mod resume;
mod subscription;

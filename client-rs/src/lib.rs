//! Typed async Rust client for the opencode-pty daemon (protocol 8), on tokio. It finds a daemon through its
//! registration file, checks the protocol version and the daemon's identity, and offers one method per request
//! op. It depends on `opencode-pty-protocol` only and treats the daemon as a black box behind its socket.
//!
//! ```no_run
//! # async fn demo() -> Result<(), opencode_pty_client::ClientError> {
//! use opencode_pty_client::{Client, CreatePty, Event, Role, Takeover};
//! let client = Client::discover(std::path::Path::new("/run/user/1000/opencode-pty")).await?;
//! let process = client.create_pty(CreatePty::new("bash", "/home/me")).await?;
//! let mut subscription = client.subscribe(process.id, 0, "me", Role::Controller, Takeover::Refuse).await?;
//! while let Some(event) = subscription.next().await {
//!     if let Event::Output { bytes, .. } = event? {
//!         print!("{}", String::from_utf8_lossy(&bytes));
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! Every request is its own connection (SPEC E8): [`Client`] holds only the registration, and each call
//! connects, sends one envelope and reads one answer within [`REQUEST_TIMEOUT`]. Some requests keep their
//! connection: [`Client::subscribe`] returns a [`Subscription`], [`Client::own`] an [`Owner`],
//! [`Client::wait`] waits without a limit for its one answer, and [`Client::run`] and
//! [`Client::wait_command`] wait for a command's end (or their timeout) for a [`CommandOutcome`]. Against a
//! daemon with the `upgrade` feature, these go on by themselves when an in-place upgrade ([`Owner::upgrade`])
//! closes their connection: a subscription yields [`Event::Resumed`] and continues at the same offset.
//!
//! Module map: `client` (discovery, timeouts, generic, typed and raw requests, the long-lived requests), `ops`
//! (the typed one-shot requests), `pages` (`list` a page at a time), `commands` (`run`, `wait_command` and
//! their outcome), `params` (`create_pty` and `create_pipe` parameters, `Takeover`), `types` (the
//! returned values), `generated` (the returned values with base64 members decoded, written by
//! `opencode-pty-codegen` from `schema/`), `owner`, `subscription`, `conn` (one framed socket connection),
//! `registration` (reading the file, checking a `pong`), `resume` (waiting for the same daemon after a lost
//! connection), `error`.
//!
//! [`launch`] starts a daemon binary and waits for its registration, for tests, benchmarks and the conformance
//! runner.
#![deny(missing_docs)]

mod client;
mod commands;
mod conn;
mod error;
// Generated code, formatted by its generator.
#[rustfmt::skip]
mod generated;
pub mod launch;
mod ops;
mod owner;
mod pages;
mod params;
mod registration;
mod resume;
mod subscription;
mod types;

pub use client::{Client, REQUEST_TIMEOUT};
pub use commands::CommandOutcome;
pub use conn::READ_CHUNK_BYTES;
pub use error::ClientError;
pub use owner::Owner;
pub use pages::ListPage;
pub use params::{CreatePipe, CreatePty, DEFAULT_COLS, DEFAULT_ROWS, Takeover};
pub use registration::{MAX_REGISTRATION_BYTES, parse_registration, read_registration};
pub use resume::{RESUME_FIRST_BACKOFF, RESUME_MAX_BACKOFF, RESUME_WINDOW, UPGRADE_FEATURE};
pub use subscription::Subscription;
pub use types::{
    Attached, CommandFinished, CommandRunning, CommandStarted, Commands, Event, Exited, Handoff, InputChanged, Pong,
    Replay, Resized, Resumed, Rows, Snapshot, response_type,
};

/// The protocol crate, for the types this crate's API uses beyond those re-exported below.
pub use opencode_pty_protocol as protocol;
pub use opencode_pty_protocol::{
    AUTHENTICATION_FAILED, InputWait, Mode, OptIn, PROTOCOL_VERSION, ProcessInfo, REGISTRATION_FILE, Registration,
    Request, Response, Role, ShellCommand, ShellState, ShellStateState, Signal, UNSUPPORTED_REQUEST_PREFIX,
};

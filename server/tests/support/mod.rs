//! The one support module of the server's test binaries, included by each with
//! `#[path = "../support/mod.rs"] mod support;` (each uses a different subset): here the in-process helpers (a
//! service, PTY and pipe specs, bounded waits on subscription events and exits); in `poll` the bound on every
//! wait and the one poll for state outside the protocol; in `daemon` the real daemon binary's helpers.

#![allow(dead_code, unused_imports)] // Each test binary uses a different subset.

pub(crate) mod daemon;
pub(crate) mod poll;

pub(crate) use daemon::*;
pub(crate) use poll::*;

use std::collections::HashMap;
use std::time::Instant;

use opencode_pty::ProcessService;
use opencode_pty::{Event, ExistingController};
use opencode_pty::{PipeHandle, PipeSpec};
use opencode_pty::{ProcessSubscription, PtySpec, TerminalConfig};
use opencode_pty_protocol::Response;

/// A service with the default buffers.
pub(crate) fn service() -> ProcessService {
    ProcessService::new(TerminalConfig::default())
}

/// A PTY running `sh -c script` in `/`, 80x24.
pub(crate) fn sh(script: &str) -> PtySpec {
    PtySpec {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: "/".into(),
        env: HashMap::new(),
        group_id: "test".into(),
        title: "initial".into(),
        cols: 80,
        rows: 24,
        shell_integration: false,
        scrollback_lines: None,
        replay_bytes: None,
    }
}

/// A pipe process running `program args` in `/`, with a `PATH` and nothing else in its environment, writing to
/// `out.log` in `dir`.
pub(crate) fn pipe_spec(dir: &std::path::Path, program: &str, args: &[&str]) -> PipeSpec {
    PipeSpec {
        program: program.into(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        cwd: "/".into(),
        env: HashMap::from([("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned())]),
        group_id: "test".into(),
        output_path: dir.join("out.log"),
        metadata: serde_json::Map::new(),
    }
}

/// A pipe process running `sh -c script` (see [`pipe_spec`]).
pub(crate) fn pipe_sh(dir: &std::path::Path, script: &str) -> PipeSpec {
    pipe_spec(dir, "sh", &["-c", script])
}

/// Waits (bounded by [`WAIT`]) for a pipe process's `exited`.
pub(crate) fn exited_pipe(handle: &PipeHandle) -> Response {
    let answer = handle.wait().receiver().recv_timeout(WAIT).expect("exited within the bound");
    answer.expect("exited, not terminated")
}

/// What a subscription delivered until a condition held.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// Output bytes in order, checked contiguous.
    pub output: Vec<u8>,
    /// The offset just past the last output byte seen.
    pub end: Option<u64>,
    /// Every JSON event, in order.
    pub messages: Vec<Response>,
    /// Each output event's size.
    pub chunk_sizes: Vec<usize>,
}

impl Seen {
    /// The output as text.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.output).into_owned()
    }

    /// Whether an `exited` event arrived.
    pub(crate) fn exited(&self) -> Option<&Response> {
        self.messages.iter().find(|m| matches!(m, Response::Exited { .. }))
    }
}

/// Reads events until `done(seen)` holds; panics after [`WAIT`] or when the subscription ends first.
pub(crate) fn read_until(subscription: &ProcessSubscription, seen: &mut Seen, done: impl Fn(&Seen) -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done(seen) {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "timed out waiting; seen so far: {:?} / {:?}", seen.text(), seen.messages);
        match subscription.recv_timeout(left) {
            Ok(Event::Output(chunk)) => {
                if let Some(end) = seen.end {
                    assert_eq!(chunk.start(), end, "output events must be contiguous");
                }
                seen.end = Some(chunk.end());
                seen.chunk_sizes.push(chunk.bytes().len());
                seen.output.extend_from_slice(chunk.bytes());
            }
            Ok(Event::Message(message)) => {
                if let Response::Attached { end_offset, replay_base64, .. } = message.response() {
                    use base64::Engine;
                    let replay = base64::engine::general_purpose::STANDARD.decode(replay_base64).expect("base64");
                    seen.output.extend_from_slice(&replay);
                    seen.end = Some(*end_offset);
                }
                seen.messages.push(message.response().clone());
            }
            Err(error) => panic!("subscription ended ({error:?}); seen: {:?} / {:?}", seen.text(), seen.messages),
        }
    }
}

/// An observer subscription from offset 0 to process `id`.
pub(crate) fn observe(service: &ProcessService, id: u64) -> ProcessSubscription {
    let handle = service.pty(id).expect("a known process");
    handle
        .subscribe(0, "observer".into(), opencode_pty_protocol::Role::Observer, ExistingController::Refuse)
        .expect("subscribe")
}

/// Everything an observer sees of process `id` until it exits.
pub(crate) fn until_exit(service: &ProcessService, id: u64) -> Seen {
    let mut seen = Seen::default();
    read_until(&observe(service, id), &mut seen, |s| s.exited().is_some());
    seen
}

/// Appends events to `log` as `out:<text>` and `msg:<Debug>` until an entry satisfies `done`; panics after
/// [`WAIT`]. For tests about the order of output and events.
pub(crate) fn log_until(subscription: &ProcessSubscription, log: &mut Vec<String>, done: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + WAIT;
    while !log.iter().any(|e| done(e)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match subscription.recv_timeout(left).unwrap_or_else(|e| panic!("no event ({e:?}); logged: {log:?}")) {
            Event::Output(chunk) => log.push(format!("out:{}", String::from_utf8_lossy(chunk.bytes()))),
            Event::Message(message) => log.push(format!("msg:{message:?}")),
        }
    }
}

/// Whether a log entry is output containing `text`.
pub(crate) fn is_output(entry: &str, text: &str) -> bool {
    entry.starts_with("out:") && entry.contains(text)
}

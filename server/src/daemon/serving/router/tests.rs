//! Unit tests of the request router: every op routes to the expected kind of outcome on each channel (a table
//! checked against the schema's list of ops), the owner channel carries out nothing but its own requests
//! (`prepare_handoff`, `shutdown`, and `upgrade`, which the connection carries out), and a superseded owner
//! channel is closed whatever it sends.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use opencode_pty_protocol::{Mode, Registration, Request, Response};
use serde_json::{Value, json};

use super::{Channel, Outcome, route};
use crate::daemon::serving::frames::Incoming;
use crate::daemon::serving::state::DaemonState;
use crate::pipe::PipeSpec;
use crate::service::ProcessService;
use crate::terminal::TerminalConfig;

const INSTANCE: &str = "0123456789abcdef0123456789abcdef";

/// The id of the fixture's pipe process (the service's first id).
const PIPE: u64 = 1;

/// A daemon's state with one running pipe process ([`PIPE`]); dropping it ends the process.
struct Fixture {
    state: Arc<DaemonState>,
    dir: tempfile::TempDir,
}

fn pipe_spec(dir: &Path, program: &str, args: &[&str]) -> PipeSpec {
    PipeSpec {
        program: program.into(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        cwd: "/".into(),
        env: HashMap::from([("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned())]),
        group_id: "router-test".into(),
        output_path: dir.join(format!("{program}.log")),
        metadata: serde_json::Map::new(),
    }
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let service = ProcessService::new(TerminalConfig::default());
    service.create_pipe(pipe_spec(dir.path(), "sleep", &["60"])).expect("the fixture's pipe process starts");
    let registration = Registration {
        features: Vec::new(),
        instance_id: INSTANCE.into(),
        pid: std::process::id(),
        protocol: opencode_pty_protocol::PROTOCOL_VERSION,
        socket: "/nonexistent/router-test.sock".into(),
        token: "fedcba9876543210fedcba9876543210".into(),
    };
    let state = DaemonState::new(service, registration, Duration::from_secs(120), Duration::from_secs(10));
    state.service.pipe(PIPE).expect("the fixture's process is the pipe process PIPE");
    Fixture { state, dir }
}

fn request(value: Value) -> Incoming {
    Incoming::Request(serde_json::from_value::<Request>(value.clone()).unwrap_or_else(|e| panic!("{value}: {e}")))
}

/// The kind of an outcome, with the `type` of its response if it has one: `reply error`, `stream`, ...
fn kind(outcome: &Outcome<'_>) -> String {
    let tag = |response: &Response| serde_json::to_value(response).expect("a response serialises")["type"].clone();
    match outcome {
        Outcome::Reply(response) => format!("reply {}", tag(response).as_str().unwrap_or("?")),
        Outcome::ReplyAndRead(response) => format!("reply-and-read {}", tag(response).as_str().unwrap_or("?")),
        Outcome::Stream { .. } => "stream".into(),
        Outcome::Hold { .. } => "hold".into(),
        Outcome::OwnerChannel(_) => "owner channel".into(),
        Outcome::Stop => "stop".into(),
        Outcome::Upgrade { .. } => "upgrade".into(),
    }
}

fn message(outcome: &Outcome<'_>) -> String {
    match outcome {
        Outcome::Reply(Response::Error { message }) | Outcome::ReplyAndRead(Response::Error { message }) => {
            message.clone()
        }
        _ => panic!("expected an error answer"),
    }
}

/// One request of every op; `shutdown` last, since on the owner channel it stops the ownership.
fn one_of_each(dir: &Path) -> Vec<Value> {
    let cwd = "relative/dir"; // refused before anything is started
    vec![
        json!({"op": "ping"}),
        json!({"op": "own", "instance_id": "ffffffffffffffffffffffffffffffff"}),
        json!({"op": "prepare_handoff"}),
        json!({"op": "subscribe", "id": PIPE, "offset": 0, "attachment_id": "a", "role": "observer", "takeover": false}),
        json!({"op": "wait", "id": PIPE}),
        json!({"op": "create_pty", "program": "sh", "args": [], "cwd": cwd, "env": {}, "group_id": "g", "title": "t",
               "cols": 80, "rows": 24}),
        json!({"op": "create_pipe", "program": "true", "args": [], "cwd": "/",
               "env": {"PATH": "/usr/local/bin:/usr/bin:/bin"}, "group_id": "g",
               "output_path": dir.join("true.log"), "metadata": {}}),
        json!({"op": "list", "mode": "pipe"}),
        json!({"op": "get", "id": PIPE}),
        json!({"op": "write", "id": PIPE, "attachment_id": null, "data_base64": "aGk="}),
        json!({"op": "resize", "id": PIPE, "attachment_id": null, "cols": 80, "rows": 24}),
        json!({"op": "control", "id": PIPE, "attachment_id": "a", "cols": 80, "rows": 24}),
        json!({"op": "input", "id": PIPE, "attachment_id": "a", "cols": 80, "rows": 24, "data_base64": "aGk="}),
        json!({"op": "snapshot", "id": PIPE}),
        json!({"op": "read_rows", "id": PIPE}),
        json!({"op": "commands", "id": PIPE, "limit": 5}),
        json!({"op": "run", "id": PIPE, "command": "true"}),
        json!({"op": "wait_command", "id": PIPE, "command_id": 1}),
        json!({"op": "rename", "id": PIPE, "title": "x"}),
        json!({"op": "replay", "id": PIPE, "offset": 0}),
        json!({"op": "signal", "id": 99, "signal": "SIGTERM"}),
        json!({"op": "set_metadata", "id": PIPE, "metadata": {"k": "v"}}),
        json!({"op": "terminate", "id": 99}),
        json!({"op": "upgrade", "program": "/nonexistent/opencode-pty"}),
        json!({"op": "shutdown"}),
    ]
}

/// What each request of [`one_of_each`] gets on an ordinary connection.
fn ordinary_kind(op: &str) -> &'static str {
    match op {
        "ping" => "reply pong",
        "subscribe" => "stream",
        "wait" => "hold",
        "create_pipe" => "reply created",
        "list" => "reply processes",
        "get" => "reply process",
        "replay" => "reply replay",
        "set_metadata" => "reply ok",
        "shutdown" => "stop",
        // Refused by the service or the ownership: a wrong instance, not the owner (`prepare_handoff`,
        // `upgrade`), a relative cwd, a PTY request for a pipe process, an unknown id.
        _ => "reply error",
    }
}

fn op(value: &Value) -> String {
    value["op"].as_str().expect("an op").to_owned()
}

#[test]
fn the_table_covers_every_op_of_the_schema() {
    let requests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/requests");
    let schema: BTreeSet<String> = std::fs::read_dir(&requests)
        .expect("the schema's requests")
        .map(|entry| entry.expect("an entry").path())
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_owned()))
        .collect();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let table: BTreeSet<String> = one_of_each(dir.path()).iter().map(op).collect();
    assert_eq!(table, schema);
}

#[test]
fn every_op_on_an_ordinary_connection_routes_to_its_outcome() {
    let fixture = fixture();
    for value in one_of_each(fixture.dir.path()) {
        let outcome = route(&fixture.state, request(value.clone()), Channel::Ordinary);
        assert_eq!(kind(&outcome), ordinary_kind(&op(&value)), "{value}");
    }
    // `shutdown` is carried out by the connection, after it wrote `ok`.
    assert!(!fixture.state.is_stopping());
    let own = route(&fixture.state, request(json!({"op": "own", "instance_id": INSTANCE})), Channel::Ordinary);
    assert_eq!(kind(&own), "owner channel");
}

#[test]
fn upgrade_is_refused_on_an_ordinary_connection_and_carried_out_on_the_owner_channel() {
    let fixture = fixture();
    let state = &fixture.state;
    let upgrade = || request(json!({"op": "upgrade"}));
    let outcome = route(state, upgrade(), Channel::Ordinary);
    assert_eq!((kind(&outcome), message(&outcome)), ("reply error".into(), super::UPGRADE_NEEDS_OWNER.into()));
    let own = route(state, request(json!({"op": "own", "instance_id": INSTANCE})), Channel::Ordinary);
    let Outcome::OwnerChannel(claim) = own else { panic!("own claims the daemon") };
    let Channel::Owner { generation: owner } = claim.channel() else { panic!("a claim serves an owner channel") };
    for (value, expected) in [
        (json!({"op": "upgrade"}), None),
        (json!({"op": "upgrade", "program": "/usr/bin/opencode-pty"}), Some("/usr/bin/opencode-pty")),
    ] {
        let outcome = route(state, request(value.clone()), claim.channel());
        let Outcome::Upgrade { generation, program } = outcome else { panic!("{value}: {}", kind(&outcome)) };
        assert_eq!((generation, program.as_deref()), (owner, expected), "{value}");
    }
    // Deciding changed nothing: the channel is still the owner's, and the daemon runs on.
    assert!(state.ownership().is_owner(owner));
    assert!(!state.is_stopping() && !state.is_upgrading());
}

#[test]
fn the_owner_channel_carries_out_only_prepare_handoff_shutdown_and_upgrade() {
    let fixture = fixture();
    let state = &fixture.state;
    let own = route(state, request(json!({"op": "own", "instance_id": INSTANCE})), Channel::Ordinary);
    let Outcome::OwnerChannel(claim) = own else { panic!("own claims the daemon") };
    let processes = state.service.list(Mode::Pipe).len();
    for value in one_of_each(fixture.dir.path()) {
        let outcome = route(state, request(value.clone()), claim.channel());
        let expected = match op(&value).as_str() {
            "prepare_handoff" => "reply-and-read handoff",
            "shutdown" => "stop",
            "upgrade" => "upgrade",
            _ => "reply-and-read error",
        };
        assert_eq!(kind(&outcome), expected, "{value}");
        if expected == "reply-and-read error" {
            assert_eq!(message(&outcome), super::OWNER_CHANNEL_ONLY, "{value}");
        }
    }
    // Nothing was created, terminated or subscribed to; the owner's `shutdown` stopped the ownership.
    assert_eq!(state.service.list(Mode::Pipe).len(), processes);
    assert!(state.ownership().is_stopped());
}

#[test]
fn a_refused_frame_closes_an_ordinary_connection_and_not_the_owner_channel() {
    let fixture = fixture();
    let state = &fixture.state;
    let refused = || Incoming::Refused(opencode_pty_protocol::AUTHENTICATION_FAILED.into());
    assert_eq!(kind(&route(state, refused(), Channel::Ordinary)), "reply error");
    assert_eq!(kind(&route(state, Incoming::OutputFrame, Channel::Ordinary)), "reply error");
    let own = route(state, request(json!({"op": "own", "instance_id": INSTANCE})), Channel::Ordinary);
    let Outcome::OwnerChannel(claim) = own else { panic!("own claims the daemon") };
    let outcome = route(state, refused(), claim.channel());
    assert_eq!((kind(&outcome), message(&outcome)), ("reply-and-read error".into(), "authentication failed".into()));
    let outcome = route(state, Incoming::OutputFrame, claim.channel());
    assert_eq!(message(&outcome), super::NOT_AN_ENVELOPE);
    assert_eq!(kind(&outcome), "reply error");
}

#[test]
fn a_superseded_owner_channel_is_closed_whatever_it_sends_and_its_end_changes_nothing() {
    let fixture = fixture();
    let state = &fixture.state;
    let first = route(state, request(json!({"op": "own", "instance_id": INSTANCE})), Channel::Ordinary);
    let Outcome::OwnerChannel(first) = first else { panic!("own claims the daemon") };
    let prepared = route(state, request(json!({"op": "prepare_handoff"})), first.channel());
    let Outcome::ReplyAndRead(Response::Handoff { ticket, .. }) = prepared else { panic!("a handoff") };
    let successor = json!({"op": "own", "instance_id": INSTANCE, "ticket": ticket});
    let Outcome::OwnerChannel(second) = route(state, request(successor), Channel::Ordinary) else {
        panic!("the ticket claims the daemon")
    };
    let mut frames: Vec<Incoming> = one_of_each(fixture.dir.path()).into_iter().map(request).collect();
    frames.extend([Incoming::OutputFrame, Incoming::Refused("authentication failed".into())]);
    for incoming in frames {
        let outcome = route(state, incoming, first.channel());
        assert_eq!((kind(&outcome), message(&outcome)), ("reply error".into(), super::SUPERSEDED.into()));
    }
    drop(first);
    let Channel::Owner { generation } = second.channel() else { panic!("a claim serves an owner channel") };
    assert!(state.ownership().is_owner(generation));
    assert!(!state.is_stopping());
}

//! What a peer can tie up, against the real binary (SPEC N10, N11): many connections that never authenticate,
//! each sending all but the last byte of the largest frame, leave the daemon's peak memory within the budget
//! for unauthenticated frames while an authenticated request is answered; a large frame that finds the budget
//! held is answered so, and read whole once the room is back; a token longer than the daemon's could be written
//! is refused uncopied, the daemon's own fully escaped is not; the largest frames, and a `write` sent in pieces, are still read whole; subscriptions and waits
//! held up to their cap leave the reserve to `ping`, `create_pty`, `list` and the owner's handoff, the next one
//! being refused with the message naming the cap, and a place given back is taken again.

use crate::support;

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use opencode_pty::limits::{
    CONNECTION_RESERVE, MAX_AUTHENTICATED_PARTIAL_BYTES, MAX_HELD_CONNECTIONS, MAX_UNAUTHENTICATED_BYTES,
    UNBUDGETED_FRAME_BYTES,
};
use opencode_pty_protocol::{FRAME_HEADER_BYTES, MAX_FRAME_BYTES, MAX_INPUT_BYTES};
use serde_json::{Value, json};
use support::{Daemon, create_sh, eventually, message, poll_for, recv, send, threads_named};

/// Connections that each send a partial frame of the largest size: 320 MiB in all, were it kept, over twice the
/// bound (and few enough not to starve the tests that run beside this one).
const PEERS: usize = 40;

/// The bound of the waits that many connections or threads at once may make long on a loaded machine.
const LONG_WAIT: Duration = Duration::from_secs(60);

/// What the daemon may hold beyond the budgets (its threads' stacks, the allocator's slack).
const MARGIN: u64 = 64 * 1024 * 1024;

/// The peak resident memory (`VmHWM`) of process `pid` so far, in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse::<u64>().ok()).expect("a number") * 1024
}

/// A frame header declaring `len` payload bytes.
fn header(len: usize) -> Vec<u8> {
    u32::try_from(len).expect("fits").to_be_bytes().to_vec()
}

/// `envelope` as the payload of a frame of exactly `len` bytes, padded with a top-level member the daemon skips.
fn padded_frame(envelope: &Value, len: usize) -> Vec<u8> {
    let mut text = serde_json::to_string(envelope).expect("json");
    text.pop(); // the closing brace
    text.push_str(r#","pad":""#);
    let rest = len - text.len() - 2;
    text.extend(std::iter::repeat_n('a', rest));
    text.push_str("\"}");
    let mut frame = header(text.len());
    frame.extend_from_slice(text.as_bytes());
    assert_eq!(frame.len(), FRAME_HEADER_BYTES + len);
    frame
}

/// Writes `frame` in pieces of `piece` bytes, `between` running after each.
fn send_in_pieces(stream: &mut UnixStream, frame: &[u8], piece: usize, mut between: impl FnMut()) {
    for chunk in frame.chunks(piece) {
        stream.write_all(chunk).expect("a piece");
        between();
    }
}

#[test]
fn unauthenticated_partial_frames_stay_within_the_budget_and_requests_are_still_answered() {
    // 40 peers send 640 MiB in all: on a loaded machine that takes longer than the 10 s first-request deadline,
    // which would cut a peer mid-frame (a broken pipe, not what this test is about).
    let daemon = Daemon::start_with(&["--first-request-timeout-ms", "120000"]);
    let _owner = daemon.own();
    let pid = daemon.pid();
    let before = peak_memory(pid);
    let frame = Arc::new(partial_frame());
    let senders: Vec<_> = (0..PEERS)
        .map(|_| {
            let mut stream = daemon.connect();
            stream.set_write_timeout(Some(LONG_WAIT)).expect("timeout");
            let frame = frame.clone();
            std::thread::spawn(move || {
                stream.write_all(&frame).expect("the daemon takes every byte in, storing it or not");
                stream
            })
        })
        .collect();
    let streams: Vec<UnixStream> = senders.into_iter().map(|sender| sender.join().expect("sender")).collect();
    assert_eq!(streams.len(), PEERS);

    let grown = peak_memory(pid).saturating_sub(before);
    let bound = (MAX_UNAUTHENTICATED_BYTES + PEERS * UNBUDGETED_FRAME_BYTES) as u64 + MARGIN;
    assert!(grown <= bound, "peak memory grew by {grown} bytes for {PEERS} partial frames, over {bound}");
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong", "an authenticated request is answered");
}

/// All of the largest frame but its last byte: never complete, so never authenticated.
fn partial_frame() -> Vec<u8> {
    let mut frame = header(MAX_FRAME_BYTES);
    frame.extend_from_slice(br#"{"token":"wrong","x":""#);
    frame.resize(FRAME_HEADER_BYTES + MAX_FRAME_BYTES - 1, b'a');
    frame
}

#[test]
fn a_large_frame_without_room_is_answered_so_and_read_once_the_room_is_back() {
    // A first-request deadline the test cannot outlast, so the frames holding the budget stay.
    let daemon = Daemon::start_with(&["--first-request-timeout-ms", "120000"]);
    let _owner = daemon.own();
    // One after the other, so each gets the room for its whole frame: together they hold all but the room of
    // one such frame.
    let holders = MAX_UNAUTHENTICATED_BYTES / (MAX_FRAME_BYTES - UNBUDGETED_FRAME_BYTES);
    let frame = partial_frame();
    let held: Vec<UnixStream> = (0..holders)
        .map(|_| {
            let mut stream = daemon.connect();
            stream.write_all(&frame).expect("a partial frame");
            stream
        })
        .collect();
    // A small request needs no room; a large one finds none, is read to its end and answered so.
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong");
    let large = padded_frame(&daemon.envelope(json!({"op": "ping"})), MAX_FRAME_BYTES);
    let mut stream = daemon.connect();
    stream.write_all(&large).expect("the large frame");
    let refusal = format!(
        "the daemon is short of room for requests: frames of unauthenticated connections being read hold its \
         {MAX_UNAUTHENTICATED_BYTES}-byte budget; send it again"
    );
    assert_eq!(message(&recv(&mut stream).expect("an answer")), refusal);
    assert!(recv(&mut stream).is_none(), "and closed");
    // The holders leave: their room comes back, and the same frame is read whole (within the wait for room).
    drop(held);
    let mut stream = daemon.connect();
    stream.write_all(&large).expect("the large frame");
    assert_eq!(recv(&mut stream).expect("an answer")["type"], "pong");
}

#[test]
fn the_largest_frames_are_read_whole_even_sent_in_pieces() {
    let daemon = Daemon::start();
    let mut owner = daemon.own();
    // A first request of the largest size, sent in pieces with other requests answered in between.
    let mut stream = daemon.connect();
    let frame = padded_frame(&daemon.envelope(json!({"op": "ping"})), MAX_FRAME_BYTES);
    send_in_pieces(&mut stream, &frame, MAX_FRAME_BYTES / 8, || {
        assert_eq!(daemon.request(json!({"op": "list", "mode": "pty"}))["type"], "processes");
    });
    assert_eq!(recv(&mut stream).expect("an answer")["type"], "pong");

    // The owner channel's later frames draw on the other budget: the largest is read whole too.
    const { assert!(MAX_FRAME_BYTES <= MAX_AUTHENTICATED_PARTIAL_BYTES) };
    let frame = padded_frame(&daemon.envelope(json!({"op": "prepare_handoff"})), MAX_FRAME_BYTES);
    send_in_pieces(&mut owner, &frame, MAX_FRAME_BYTES / 8, || {});
    assert_eq!(recv(&mut owner).expect("an answer")["type"], "handoff");

    // A `write` of the most input one request may carry, in small pieces, a `ping` answered after each.
    let created = daemon.request(create_sh("cat >/dev/null"));
    let id = created["process"]["id"].as_u64().expect("created");
    let data = base64::engine::general_purpose::STANDARD.encode(vec![b'x'; MAX_INPUT_BYTES]);
    let write = daemon.envelope(json!({"op": "write", "id": id, "attachment_id": null, "data_base64": data}));
    let Value::Object(map) = write else { unreachable!() };
    let frame = opencode_pty_protocol::encode_control(&map).expect("encode");
    let mut stream = daemon.connect();
    send_in_pieces(&mut stream, &frame, 16 * 1024, || {
        assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong");
    });
    let answer = recv(&mut stream).expect("an answer");
    assert_eq!(answer["type"], "ok", "{answer}");
}

/// Sends `request` on a new connection and returns it, unanswered yet.
fn start(daemon: &Daemon, request: Value) -> UnixStream {
    let mut stream = daemon.connect();
    send(&mut stream, &daemon.envelope(request));
    stream
}

/// The name prefix of the thread the daemon starts for each held `wait` or subscription (it watches the peer).
const PEER_THREAD: &str = "opencode-pty-peer";

#[test]
fn held_connections_stop_at_their_cap_and_the_reserve_still_answers() {
    let daemon = Daemon::start();
    let mut owner = daemon.own();
    let pid = daemon.pid();
    let out = tempfile::tempdir().expect("tempdir");
    let pipe = json!({"op": "create_pipe", "program": "/bin/sh", "args": ["-c", "exec sleep 600"], "cwd": "/",
                      "env": {}, "group_id": "g", "output_path": out.path().join("out.log").to_str().unwrap()});
    let id = daemon.request(pipe)["process"]["id"].as_u64().expect("a pipe process");
    let mut held: Vec<UnixStream> =
        (0..MAX_HELD_CONNECTIONS).map(|_| start(&daemon, json!({"op": "wait", "id": id}))).collect();
    let all_held = poll_for(LONG_WAIT, || (threads_named(pid, PEER_THREAD) == MAX_HELD_CONNECTIONS).then_some(()));
    assert!(all_held.is_some(), "every wait held: {} of {MAX_HELD_CONNECTIONS}", threads_named(pid, PEER_THREAD));

    let refusal = format!(
        "too many held connections: the daemon holds at most {MAX_HELD_CONNECTIONS} subscriptions and waits at once, \
         keeping {CONNECTION_RESERVE} connections for other requests"
    );
    let mut wait = start(&daemon, json!({"op": "wait", "id": id}));
    assert_eq!(message(&recv(&mut wait).expect("an answer")), refusal);
    assert!(recv(&mut wait).is_none(), "and closed");
    let (_, subscribed) = daemon.subscribe(id, "s", "observer");
    assert_eq!(message(&subscribed), refusal);

    // The reserve: requests answered at once, and the owner's handoff to a new owner channel.
    assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong");
    let created = daemon.request(create_sh("exit 0"));
    assert_eq!(created["type"], "created", "{created}");
    assert_eq!(daemon.request(json!({"op": "list", "mode": "pipe"}))["processes"].as_array().map(Vec::len), Some(1));
    send(&mut owner, &daemon.envelope(json!({"op": "prepare_handoff"})));
    let handoff = recv(&mut owner).expect("handoff");
    let ticket = handoff["ticket"].as_str().expect("a ticket");
    let mut successor =
        start(&daemon, json!({"op": "own", "instance_id": daemon.registration.instance_id, "ticket": ticket}));
    assert_eq!(recv(&mut successor).expect("owned")["type"], "owned");

    // A place given back is taken again.
    drop(held.pop());
    eventually("the closed wait to end", || (threads_named(pid, PEER_THREAD) < MAX_HELD_CONNECTIONS).then_some(()));
    held.push(start(&daemon, json!({"op": "wait", "id": id})));
    eventually("the new wait to be held", || (threads_named(pid, PEER_THREAD) == MAX_HELD_CONNECTIONS).then_some(()));
    drop(held);
    assert!(poll_for(LONG_WAIT, || (threads_named(pid, PEER_THREAD) == 0).then_some(())).is_some(), "every wait ended");
}

#[test]
fn a_token_longer_than_ours_could_be_written_is_refused_and_ours_fully_escaped_is_not() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let escaped: String = daemon.registration.token.chars().map(|c| format!("\\u{:04x}", u32::from(c))).collect();
    let text = format!(r#"{{"token":"{escaped}","request":{{"op":"ping"}}}}"#);
    let mut frame = header(text.len());
    frame.extend_from_slice(text.as_bytes());
    let mut stream = daemon.connect();
    stream.write_all(&frame).expect("send");
    assert_eq!(recv(&mut stream).expect("an answer")["type"], "pong", "every character escaped");

    let long = format!("{}{}", daemon.registration.token, "0".repeat(MAX_FRAME_BYTES / 2));
    let mut stream = daemon.connect();
    send(&mut stream, &json!({"token": long, "request": {"op": "ping"}}));
    assert_eq!(message(&recv(&mut stream).expect("an answer")), "authentication failed");
}

//! A terminal's own memory bounds over the socket (feature `bounds`, SPEC D16): `create_pty`'s
//! `scrollback_lines` and `replay_bytes` set what its emulator's history and its replay ring keep, a terminal
//! without them keeps the daemon's defaults, and bounds outside the limits are refused, starting nothing.

use crate::support;

use opencode_pty_protocol::{DEFAULT_SCROLLBACK_LINES, MAX_REPLAY_BYTES, MAX_SCROLLBACK_LINES, MIN_REPLAY_BYTES};
use serde_json::{Value, json};
use support::{Daemon, create_sh, eventually, message};

/// What `seq 1 20000` prints through a terminal: each number and CRLF.
fn printed() -> u64 {
    (1..=20_000u64).map(|n| n.to_string().len() as u64 + 2).sum()
}

/// Creates `request` and waits until its terminal printed everything; its `get` answer.
fn printed_by(daemon: &Daemon, request: Value) -> Value {
    let created = daemon.request(request);
    let id = created["process"]["id"].as_u64().unwrap_or_else(|| panic!("created: {created}"));
    eventually("the terminal prints everything", || {
        let got = daemon.request(json!({"op": "get", "id": id}));
        (got["process"]["output_tail"].as_u64() >= Some(printed())).then_some(got)
    })
}

/// How many rows of screen and history the terminal keeps, as `read_rows` of more than it printed tells them.
fn lines(daemon: &Daemon, id: u64) -> usize {
    let rows = daemon.request(json!({"op": "read_rows", "id": id, "rows": 30_000}));
    rows["lines"].as_array().unwrap_or_else(|| panic!("rows: {}", &rows.to_string()[..200])).len()
}

#[test]
fn a_terminal_keeps_the_history_and_replay_its_create_asked_for() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let pong = daemon.request(json!({"op": "ping"}));
    assert!(pong["features"].as_array().expect("features").contains(&json!("bounds")), "{pong}");
    let script = "seq 1 20000; exec sleep 600";
    let mut small = create_sh(script);
    small["scrollback_lines"] = json!(0);
    small["replay_bytes"] = json!(MIN_REPLAY_BYTES);
    let small = printed_by(&daemon, small);
    let default = printed_by(&daemon, create_sh(script));
    let kept =
        |got: &Value| got["process"]["output_tail"].as_u64().unwrap() - got["process"]["output_head"].as_u64().unwrap();
    assert_eq!(kept(&small), u64::from(MIN_REPLAY_BYTES), "its own ring: {small}");
    assert_eq!(kept(&default), printed(), "the default ring keeps all of it: {default}");
    let id = |got: &Value| got["process"]["id"].as_u64().unwrap();
    // libghostty enforces a history limit a page of rows at a time: without history, at most a page is kept,
    // and the default keeps about its 10,000 lines (a page fewer, as pages happen to fill).
    let (small_lines, default_lines) = (lines(&daemon, id(&small)), lines(&daemon, id(&default)));
    assert!(small_lines < 1_000, "no history asked for: {small_lines} lines");
    let about = DEFAULT_SCROLLBACK_LINES as usize * 9 / 10;
    assert!(default_lines >= about, "the default history: {default_lines} lines");
    for got in [&small, &default] {
        daemon.request(json!({"op": "terminate", "id": id(got)}));
    }
}

#[test]
fn bounds_outside_the_limits_are_refused_and_start_nothing() {
    let daemon = Daemon::start();
    let _owner = daemon.own();
    let with = |key: &str, value: u64| {
        let mut request = create_sh("exit 0");
        request[key] = json!(value);
        request
    };
    let refused = [
        (
            with("scrollback_lines", u64::from(MAX_SCROLLBACK_LINES) + 1),
            format!("scrollback_lines must be at most {MAX_SCROLLBACK_LINES} (got {})", MAX_SCROLLBACK_LINES + 1),
        ),
        (
            with("replay_bytes", u64::from(MIN_REPLAY_BYTES) - 1),
            format!(
                "replay_bytes must be from {MIN_REPLAY_BYTES} to {MAX_REPLAY_BYTES} (got {})",
                MIN_REPLAY_BYTES - 1
            ),
        ),
        (
            with("replay_bytes", u64::from(MAX_REPLAY_BYTES) + 1),
            format!(
                "replay_bytes must be from {MIN_REPLAY_BYTES} to {MAX_REPLAY_BYTES} (got {})",
                MAX_REPLAY_BYTES + 1
            ),
        ),
    ];
    for (request, expected) in refused {
        assert_eq!(message(&daemon.request(request)), expected);
    }
    assert_eq!(daemon.request(json!({"op": "list", "mode": "pty"}))["processes"], json!([]), "nothing started");
}

/// The daemon's own defaults (`--scrollback-lines`, `--replay-bytes`) hold for every terminal whose create
/// names no bounds, and a create's own bounds still win over them.
#[test]
fn the_daemon_s_flags_set_the_bounds_of_terminals_that_name_none() {
    let daemon = Daemon::start_with(&["--scrollback-lines", "0", "--replay-bytes", "8192"]);
    let _owner = daemon.own();
    let script = "seq 1 20000; exec sleep 600";
    let plain = printed_by(&daemon, create_sh(script));
    let mut own = create_sh(script);
    own["scrollback_lines"] = json!(DEFAULT_SCROLLBACK_LINES);
    own["replay_bytes"] = json!(MIN_REPLAY_BYTES);
    let own = printed_by(&daemon, own);
    let kept =
        |got: &Value| got["process"]["output_tail"].as_u64().unwrap() - got["process"]["output_head"].as_u64().unwrap();
    assert_eq!(kept(&plain), 8192, "the daemon's ring: {plain}");
    assert_eq!(kept(&own), u64::from(MIN_REPLAY_BYTES), "the create's own ring: {own}");
    let id = |got: &Value| got["process"]["id"].as_u64().unwrap();
    let (plain_lines, own_lines) = (lines(&daemon, id(&plain)), lines(&daemon, id(&own)));
    assert!(plain_lines < 1_000, "the daemon keeps no history: {plain_lines} lines");
    assert!(own_lines >= DEFAULT_SCROLLBACK_LINES as usize * 9 / 10, "the create's own history: {own_lines} lines");
    for got in [&plain, &own] {
        daemon.request(json!({"op": "terminate", "id": id(got)}));
    }
}

/// Daemon flags outside the limits stop the daemon before it starts, saying which.
#[test]
fn daemon_flags_outside_the_limits_are_refused() {
    for (flag, value) in [("--scrollback-lines", "100001"), ("--replay-bytes", "4095"), ("--replay-bytes", "67108865")]
    {
        let output = std::process::Command::new(support::binary())
            .args(["daemon", "--name", "refused", flag, value])
            .output()
            .expect("run the binary");
        assert!(!output.status.success(), "{flag} {value} was taken");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(flag) && stderr.contains(value), "{flag} {value}: {stderr}");
    }
}

//! The suite can fail: a deliberately broken transcript, a "daemon" that never registers, and fake daemons
//! that leave out a member, swap two events or change a text the protocol fixes are each reported as a
//! failure with a message that says what differed, and the runner leaves none of the processes it started
//! behind. A fake that words only the other errors its own way fails only under `--strict-messages`; one that
//! lacks a feature skips the transcripts that need it.

mod support;

use serde_json::json;

use support::{process_exists, read_pid, run, write_script, write_transcript};

/// A transcript that expects `pong` to say protocol 7.
#[test]
fn a_broken_transcript_fails_with_the_step_and_a_diff() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_transcript(
        dir.path(),
        "probe/broken",
        &[
            json!({"conformance": 1, "description": "expects the wrong protocol", "spec": ["V1"], "shareable": true}),
            json!({"step": "connect", "conn": "a"}),
            json!({"step": "send", "conn": "a", "frame": {"token": "$token", "request": {"op": "ping"}}}),
            json!({"step": "expect", "conn": "a", "frame": {"type": "pong", "instance_id": "$instance_id",
                   "pid": "$daemon_pid", "protocol": 7, "features": "$features"}}),
        ],
    );
    let daemon = support::daemon_binary();
    let transcripts = dir.path().to_str().expect("UTF-8");
    let out = run(&["--daemon", daemon.to_str().expect("UTF-8"), "--transcripts", transcripts], &[]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains("FAIL  probe/broken"), "{}", out.stdout);
    assert!(out.stdout.contains("broken.jsonl:4:"), "the failing line is named: {}", out.stdout);
    assert!(out.stdout.contains("$.protocol: expected 7, got 8"), "{}", out.stdout);
    assert!(out.stdout.contains("-  \"protocol\": 7") && out.stdout.contains("+  \"protocol\": 8"), "{}", out.stdout);
    assert!(out.stdout.contains("0 passed, 1 failed"), "{}", out.stdout);
}

/// A "daemon" that only sleeps: no registration appears, the runner says so and kills it.
#[test]
fn a_binary_that_is_not_a_daemon_fails_and_is_killed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let script = dir.path().join("not-a-daemon");
    write_script(&script, &format!("echo $$ > {}\nexec sleep 60", pidfile.display()));
    let out = run(&["--daemon", script.to_str().expect("UTF-8"), "--start-timeout-ms", "1000", "probe/ping-pong"], &[]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains("FAIL  probe/ping-pong"), "{}", out.stdout);
    assert!(out.stdout.contains("no registration naming the daemon's pid"), "{}", out.stdout);
    assert!(!process_exists(read_pid(&pidfile)), "the runner left the sleeping script running");
}

/// Runs `filter` from `transcripts` against the fake daemon with `fault`; returns what the runner printed.
fn against_fake(fault: &str, transcripts: &std::path::Path, filter: &str) -> support::Run {
    against_fake_with(fault, transcripts, filter, &[])
}

/// [`against_fake`] with more arguments for the runner.
fn against_fake_with(fault: &str, transcripts: &std::path::Path, filter: &str, more: &[&str]) -> support::Run {
    against_fake_announcing("commands", fault, transcripts, filter, more)
}

/// [`against_fake_with`] with the features the fake announces (comma-separated; empty: none).
fn against_fake_announcing(
    features: &str,
    fault: &str,
    transcripts: &std::path::Path,
    filter: &str,
    more: &[&str],
) -> support::Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let fake = dir.path().join("fake-daemon");
    let python = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake_daemon.py");
    write_script(&fake, &format!("exec python3 {python} \"$@\""));
    let attached = concat!(env!("CARGO_MANIFEST_DIR"), "/../schema/examples/valid/Response.attached.json");
    let mut args =
        vec!["--daemon", fake.to_str().expect("UTF-8"), "--transcripts", transcripts.to_str().expect("UTF-8"), filter];
    args.extend_from_slice(more);
    let out = run(
        &args,
        &[
            ("FAKE_FAULT", fault),
            ("FAKE_FEATURES", features),
            ("FAKE_ATTACHED", attached),
            ("FAKE_PIDFILE", pidfile.to_str().expect("UTF-8")),
        ],
    );
    assert!(!process_exists(read_pid(&pidfile)), "the runner left the fake daemon running: {out:?}");
    out
}

/// The fake answers the recorded ping transcript with a `pong` that lacks `features`.
#[test]
fn a_missing_member_fails_schema_validation() {
    let out = against_fake("missing-member", &support::transcripts(), "probe/ping-pong");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains("FAIL  probe/ping-pong"), "{}", out.stdout);
    assert!(out.stdout.contains("the schema refuses"), "{}", out.stdout);
    assert!(out.stdout.contains("features"), "the missing member is named: {}", out.stdout);
}

/// The same fake without a fault passes the same transcript, so the failure above is the fault's.
#[test]
fn the_fake_without_a_fault_passes() {
    let out = against_fake("", &support::transcripts(), "probe/ping-pong");
    assert_eq!(out.code, Some(0), "{out:?}");
}

/// The fake sends `title_changed` before `controller_changed`.
#[test]
fn swapped_events_fail_with_a_diff() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_transcript(
        dir.path(),
        "ordering/two-events",
        &[
            json!({"conformance": 1, "description": "two events in order", "spec": ["D12"], "shareable": true}),
            json!({"step": "connect", "conn": "s"}),
            json!({"step": "send", "conn": "s", "frame": {"token": "$token", "request": {"op": "subscribe", "id": 1,
                   "offset": 0, "attachment_id": "A", "role": "controller", "takeover": false}}}),
            json!({"step": "expect", "conn": "s", "frame": "{...}"}),
            json!({"step": "expect", "conn": "s", "frame": {"type": "controller_changed", "attachment_id": "A",
                   "generation": 1}}),
            json!({"step": "expect", "conn": "s", "frame": {"type": "title_changed", "title": "t"}}),
        ],
    );
    let good = against_fake("", dir.path(), "ordering/two-events");
    assert_eq!(good.code, Some(0), "{good:?}");
    let out = against_fake("swapped-events", dir.path(), "ordering/two-events");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains("FAIL  ordering/two-events"), "{}", out.stdout);
    assert!(out.stdout.contains("two-events.jsonl:5:"), "{}", out.stdout);
    assert!(out.stdout.contains("$.type: expected \"controller_changed\", got \"title_changed\""), "{}", out.stdout);
    assert!(out.stdout.contains("+  \"type\": \"title_changed\""), "{}", out.stdout);
}

/// A fake that never refuses bad framing and is closed only by a 10 s read deadline, like the daemon's first-request
/// deadline: the framing transcripts must not take that close for a refusal.
#[test]
fn a_daemon_that_only_times_out_fails_the_framing_transcripts() {
    let out = against_fake("deadline-only", &support::transcripts(), "framing/oversized-length");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains("FAIL  framing/oversized-length"), "{}", out.stdout);
    assert!(out.stdout.contains("expected the end of the stream within"), "{}", out.stdout);
}

/// A run in which nothing passed checked nothing: it is not a success.
#[test]
fn a_run_where_nothing_passes_is_not_a_success() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_transcript(
        dir.path(),
        "probe/no-checks",
        &[
            json!({"conformance": 1, "description": "sends but expects nothing", "spec": ["V1"], "shareable": true}),
            json!({"step": "connect", "conn": "a"}),
        ],
    );
    let daemon = support::daemon_binary();
    let transcripts = dir.path().to_str().expect("UTF-8");
    let out = run(&["--daemon", daemon.to_str().expect("UTF-8"), "--transcripts", transcripts], &[]);
    assert_ne!(out.code, Some(0), "{out:?}");
    assert!(format!("{out:?}").contains("no expect step"), "{out:?}");
}

/// A daemon that does not announce a feature skips its transcripts (header `features`) instead of failing them: a
/// plain protocol 8 daemon skips those of `commands`, one with `commands` alone those of `input`, one with both
/// those of `upgrade`. Nothing ran, so no run is a success.
#[test]
fn the_transcripts_of_a_feature_the_daemon_lacks_are_skipped() {
    for (features, filter, missing) in
        [("", "shell/", "commands"), ("commands", "input/", "input"), ("commands,input", "upgrade/", "upgrade")]
    {
        let out = against_fake_announcing(features, "", &support::transcripts(), filter, &[]);
        assert_eq!(out.code, Some(2), "{filter}: {out:?}");
        let lines: Vec<&str> = out.stdout.lines().filter(|line| !line.starts_with("conformance:")).collect();
        assert!(lines.len() >= 2, "{filter}: {}", out.stdout);
        let skipped = format!("needs the feature \"{missing}\", which the daemon does not announce");
        for line in lines {
            assert!(line.starts_with(&format!("SKIP  {filter}")) && line.ends_with(&skipped), "{filter}: {line}");
        }
    }
}

/// A transcript of two errors as our daemon words them: `process 999 not found`, whose wording is ours, and
/// `unsupported request: frobnicate`, which the protocol fixes (marked `fixed_message`).
fn two_errors(dir: &std::path::Path) {
    write_transcript(
        dir,
        "errors/two-errors",
        &[
            json!({"conformance": 1, "description": "two errors", "spec": ["E5"], "shareable": true}),
            json!({"step": "connect", "conn": "a"}),
            json!({"step": "send", "conn": "a", "frame": {"token": "$token", "request": {"op": "get", "id": 999}}}),
            json!({"step": "expect", "conn": "a", "frame": {"type": "error", "message": "process 999 not found"}}),
            json!({"step": "connect", "conn": "b"}),
            json!({"step": "send", "conn": "b", "frame": {"token": "$token", "request": {"op": "frobnicate"}}}),
            json!({"step": "expect", "conn": "b", "fixed_message": true,
                   "frame": {"type": "error", "message": "unsupported request: frobnicate"}}),
        ],
    );
}

/// Another implementation's wording of an error the protocol does not fix passes, unless `--strict-messages`
/// asks for ours; the fake's own wording, which is ours, passes both ways.
#[test]
fn wording_the_protocol_leaves_open_fails_only_under_strict_messages() {
    let dir = tempfile::tempdir().expect("tempdir");
    two_errors(dir.path());
    let lenient = against_fake("reworded", dir.path(), "errors/two-errors");
    assert_eq!(lenient.code, Some(0), "{lenient:?}");
    let strict = against_fake_with("reworded", dir.path(), "errors/two-errors", &["--strict-messages"]);
    assert_eq!(strict.code, Some(1), "{strict:?}");
    assert!(strict.stdout.contains("two-errors.jsonl:4:"), "{}", strict.stdout);
    assert!(
        strict.stdout.contains(r#"$.message: expected "process 999 not found", got "no process 999""#),
        "{}",
        strict.stdout
    );
    let ours = against_fake_with("", dir.path(), "errors/two-errors", &["--strict-messages"]);
    assert_eq!(ours.code, Some(0), "{ours:?}");
}

/// A text the protocol fixes, worded otherwise, fails with or without `--strict-messages`.
#[test]
fn a_changed_fixed_text_fails_with_or_without_strict_messages() {
    let dir = tempfile::tempdir().expect("tempdir");
    two_errors(dir.path());
    for more in [&[][..], &["--strict-messages"][..]] {
        let out = against_fake_with("changed-fixed", dir.path(), "errors/two-errors", more);
        assert_eq!(out.code, Some(1), "{more:?}: {out:?}");
        assert!(out.stdout.contains("two-errors.jsonl:7:"), "{more:?}: {}", out.stdout);
        assert!(
            out.stdout.contains(
                r#"$.message: expected "unsupported request: frobnicate", got "unknown request: frobnicate""#
            ),
            "{more:?}: {}",
            out.stdout
        );
    }
}

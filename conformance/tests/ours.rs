//! Our own daemon (`target/<profile>/opencode-pty`) passes every recorded transcript, its error messages
//! compared byte for byte (`--strict-messages`): the conformance suite runs as part of `cargo test --workspace
//! --locked`.

mod support;

#[test]
fn our_daemon_passes_every_transcript() {
    let daemon = support::daemon_binary();
    let run =
        support::run(&["--daemon", daemon.to_str().expect("UTF-8 path"), "--jobs", "8", "--strict-messages"], &[]);
    assert_eq!(run.code, Some(0), "the suite failed against our daemon:\n{}\n{}", run.stdout, run.stderr);
    let passed = run.stdout.lines().filter(|line| line.starts_with("PASS ")).count();
    assert!(passed >= 40, "only {passed} transcripts passed:\n{}", run.stdout);
    assert!(!run.stdout.contains("FAIL "), "{}", run.stdout);
}

/// `--registration`: a daemon someone else started and owns; the shareable transcripts run against it and the
/// others are skipped, and the runner leaves it running for its owner.
#[test]
fn a_registered_daemon_runs_the_shareable_transcripts() {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    let root = tempfile::tempdir().expect("tempdir");
    // Stopped (and reaped) when the test ends, however it ends.
    let daemon = opencode_pty_client::launch::Launch::new(support::daemon_binary(), root.path(), "ext")
        .start()
        .expect("start the daemon");
    let registration = daemon.registration().clone();
    let file = root.path().join("ext/service.json");
    let mut owner = UnixStream::connect(&registration.socket).expect("connect");
    let own = serde_json::json!({"token": registration.token,
                                 "request": {"op": "own", "instance_id": registration.instance_id}});
    let serde_json::Value::Object(map) = own else { panic!("an object") };
    owner.write_all(&opencode_pty_protocol::encode_control(&map).expect("encode")).expect("own");
    owner.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    let owned = opencode_pty_protocol::read_frame(&mut owner).expect("a frame");
    assert!(matches!(owned, Some(opencode_pty_protocol::Frame::Control(ref m)) if m["type"] == "owned"), "{owned:?}");

    let out = support::run(&["--registration", file.to_str().expect("UTF-8"), "ownership/"], &[]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("PASS  ownership/handoff-needs-owner"), "{}", out.stdout);
    assert!(out.stdout.contains("SKIP  ownership/handoff "), "{}", out.stdout);
    assert!(support::process_exists(registration.pid), "the runner stopped a daemon it did not start");
    drop(owner);
    drop(daemon);
}

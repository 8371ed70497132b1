//! Our own daemon (`target/<profile>/opencode-pty`) passes every recorded transcript: the conformance suite
//! runs as part of `cargo test --workspace --locked`.

mod support;

#[test]
fn our_daemon_passes_every_transcript() {
    let daemon = support::daemon_binary();
    let run = support::run(&["--daemon", daemon.to_str().expect("UTF-8 path"), "--jobs", "8"], &[]);
    assert_eq!(run.code, Some(0), "the suite failed against our daemon:\n{}\n{}", run.stdout, run.stderr);
    let passed = run.stdout.lines().filter(|line| line.starts_with("PASS ")).count();
    assert!(passed >= 40, "only {passed} transcripts passed:\n{}", run.stdout);
    assert!(!run.stdout.contains("FAIL "), "{}", run.stdout);
}

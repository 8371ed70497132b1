//! Unit tests of a terminal's handle: failures against exits, one failing terminal beside a healthy one, the
//! shared encoded frames of fan-out, requests the actor dropped or took late.

use std::collections::HashMap;

use opencode_pty_protocol::Lifecycle;

use super::*;
use crate::process::Event;

pub(crate) fn sh(script: &str) -> PtySpec {
    PtySpec {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: "/".into(),
        env: HashMap::new(),
        group_id: "unit".into(),
        title: "unit".into(),
        cols: 80,
        rows: 24,
        shell_integration: false,
        scrollback_lines: None,
        replay_bytes: None,
    }
}

/// Waits (bounded) for the terminal to report an exit.
fn exited(handle: &PtyHandle) -> ProcessInfo {
    let subscription =
        handle.subscribe(0, "probe".into(), Role::Observer, ExistingController::Refuse).expect("subscribe");
    loop {
        match subscription.recv_timeout(REQUEST_TIMEOUT).expect("an event before the timeout") {
            Event::Message(message) if matches!(message.response(), Response::Exited { .. }) => break,
            _ => {}
        }
    }
    handle.info()
}

#[test]
fn a_failure_after_the_exit_does_not_overwrite_it() {
    let handle = PtyHandle::spawn(1, sh("exit 7"), TerminalConfig::default()).expect("spawn");
    let info = exited(&handle);
    assert_eq!(info.lifecycle, Lifecycle::Exited { exit_code: Some(7), signal: None });
    // What the writer thread would send if the PTY broke afterwards (the reader has ended by then: `exited`
    // waits for the end of the output; the actor's own tests cover a reader failure).
    handle.commands.send(Command::WriterFailed("broken pipe".into())).unwrap();
    assert_eq!(handle.info().lifecycle, Lifecycle::Exited { exit_code: Some(7), signal: None });
}

#[test]
fn a_failing_terminal_leaves_another_running() {
    let failing = PtyHandle::spawn(1, sh("read never"), TerminalConfig::default()).expect("spawn");
    let healthy =
        PtyHandle::spawn(2, sh("read line; echo got-$line; read never"), TerminalConfig::default()).expect("spawn");
    failing.commands.send(Command::WriterFailed("input/output error".into())).unwrap();
    assert_eq!(failing.info().lifecycle, Lifecycle::Failed { message: "input/output error".into() });
    let subscription =
        healthy.subscribe(0, "probe".into(), Role::Observer, ExistingController::Refuse).expect("subscribe");
    healthy.write(None, b"ok\r".to_vec()).expect("the other terminal still takes input");
    let mut output = Vec::new();
    while !String::from_utf8_lossy(&output).contains("got-ok") {
        match subscription.recv_timeout(REQUEST_TIMEOUT).expect("output before the timeout") {
            Event::Output(chunk) => output.extend_from_slice(chunk.bytes()),
            Event::Message(_) => {}
        }
    }
    assert_eq!(healthy.info().lifecycle, Lifecycle::Running);
}

/// Every subscriber is sent the same encoded frame: output and a resize (with its checkpoint) are serialised
/// once, not once per subscriber.
#[test]
fn subscribers_share_each_event_s_encoded_frame() {
    let handle =
        PtyHandle::spawn(1, sh("read line; echo got-$line; read never"), TerminalConfig::default()).expect("spawn");
    let subscribe =
        |name: &str| handle.subscribe(0, name.into(), Role::Observer, ExistingController::Refuse).expect("subscribe");
    let (first, second) = (subscribe("first"), subscribe("second"));
    handle.write(None, b"ok\r".to_vec()).expect("input");
    // Each subscriber's own stream, until its output shows the echo and its resize has arrived.
    let collect = |subscription: &ProcessSubscription, resize: bool| {
        let (mut output, mut frames, mut resized) = (Vec::new(), Vec::new(), None);
        let mut resize_asked = !resize;
        while !(String::from_utf8_lossy(&output).contains("got-ok") && resized.is_some()) {
            let event = subscription.recv_timeout(REQUEST_TIMEOUT).expect("an event before the timeout");
            match &event {
                Event::Output(chunk) => {
                    output.extend_from_slice(chunk.bytes());
                    frames.push(event.frame().as_ptr());
                    if !resize_asked && String::from_utf8_lossy(&output).contains("got-ok") {
                        resize_asked = true;
                        handle.resize(None, 100, 30).expect("resize");
                    }
                }
                Event::Message(message) if matches!(message.response(), Response::Resized { .. }) => {
                    resized = Some(event.frame().as_ptr());
                }
                Event::Message(_) => {}
            }
        }
        (frames, resized)
    };
    let (first_frames, first_resized) = collect(&first, true);
    let (second_frames, second_resized) = collect(&second, false);
    assert!(!first_frames.is_empty());
    assert_eq!(first_frames, second_frames, "both were sent the very same output buffers");
    assert_eq!(first_resized, second_resized, "the checkpoint was encoded once, for both");
    assert!(handle.terminate());
}

/// The actor drops a request it takes after its deadline without answering it: the requester is told it
/// timed out, not that the terminal is gone (a `get` then falls back to the last published info, and a
/// client is not told its terminal ended).
#[test]
fn a_request_the_actor_dropped_as_expired_is_a_timeout_not_the_end_of_the_terminal() {
    let handle = PtyHandle::spawn(1, sh("read never"), TerminalConfig::default()).expect("spawn");
    let deadline = std::time::Instant::now();
    let answer = handle
        .send_until(deadline, |reply| Command::Snapshot { opt_ins: crate::process::OptIns::NONE, reply })
        .expect("queued");
    // Answered in order after the expired snapshot: by then the actor has dropped it.
    handle.rename(Some("later".into())).expect("rename");
    assert!(matches!(handle.answer_by(deadline, &answer), Err(ServiceError::Timeout { id: 1, .. })));
    assert_eq!(handle.info().lifecycle, Lifecycle::Running);
    assert!(handle.terminate());
}

/// `INFO_TIMEOUT` cuts only the wait, not the refresh: a `get` the actor could not answer in time (here it
/// had not even started) still refreshes the foreground process once the actor gets to it, and the
/// published info shows it without another request.
#[test]
fn a_refresh_asked_too_late_still_happens() {
    const HELD_ID: u64 = 9_000_000_002;
    let open = actor_gate::hold(HELD_ID);
    let handle = PtyHandle::spawn(HELD_ID, sh("read never"), TerminalConfig::default()).expect("spawn");
    let answered = handle.info();
    assert_eq!(answered.pty.expect("pty").foreground_process, None, "the info published at the start");
    drop(open);
    let deadline = std::time::Instant::now() + REQUEST_TIMEOUT;
    while handle.last_info().pty.expect("pty").foreground_process.is_none() {
        assert!(std::time::Instant::now() < deadline, "the expired refresh never happened");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(handle.terminate());
}

#[test]
fn a_failure_before_the_exit_is_reported() {
    let handle = PtyHandle::spawn(1, sh("read never"), TerminalConfig::default()).expect("spawn");
    handle.commands.send(Command::WriterFailed("broken pipe".into())).unwrap();
    assert_eq!(handle.info().lifecycle, Lifecycle::Failed { message: "broken pipe".into() });
    assert!(handle.terminate());
    assert!(!handle.terminate(), "a second terminate does nothing");
}

/// Terminals sharing one turn at output processing, all printing without pause: each one's whole output arrives,
/// in order, and each ends (a turn's share never cuts output, and no terminal waits for a turn forever).
#[test]
fn terminals_sharing_one_turn_all_deliver_their_whole_output() {
    const LINES: usize = 50_000;
    let config = TerminalConfig { turns: Turns::new(1), ..TerminalConfig::default() };
    // Each prints once its subscriber is there (the Enter that starts it is echoed first).
    let script = format!("read go; seq 1 {LINES}; echo end");
    let handles: Vec<PtyHandle> =
        (1..=3).map(|id| PtyHandle::spawn(id, sh(&script), config.clone()).expect("spawn")).collect();
    let mut expected = "\r\n".to_owned();
    expected.extend((1..=LINES).map(|n| format!("{n}\r\n")));
    expected.push_str("end\r\n");
    assert!(expected.len() > 4 * TURN_OUTPUT_BYTES, "more than a few turns' worth");
    std::thread::scope(|scope| {
        for handle in &handles {
            let expected = &expected;
            scope.spawn(move || {
                let subscription =
                    handle.subscribe(0, "probe".into(), Role::Observer, ExistingController::Refuse).expect("subscribe");
                handle.write(None, b"\r".to_vec()).expect("input");
                let mut output = Vec::new();
                loop {
                    match subscription.recv_timeout(REQUEST_TIMEOUT).expect("an event before the timeout") {
                        Event::Output(chunk) => output.extend_from_slice(chunk.bytes()),
                        Event::Message(message) if matches!(message.response(), Response::Exited { .. }) => break,
                        Event::Message(_) => {}
                    }
                }
                let text = String::from_utf8_lossy(&output);
                assert!(text == *expected, "terminal {}: {} of {} bytes", handle.id(), text.len(), expected.len());
            });
        }
    });
}

//! The capture of a terminal whose controller stalled: the requests the actor held back are carried out before
//! the state is taken, not dropped unanswered.

use std::time::{Duration, Instant};

use opencode_pty_protocol::Role;

use crate::process::ExistingController;
use crate::terminal::command::{Command, Reply};
use crate::terminal::tests::sh;
use crate::terminal::{PtyHandle, TerminalConfig};

/// The longest any step waits.
const WAIT: Duration = Duration::from_secs(60);

/// How long the actor's queue stays full before the actor is taken to hold back no more requests (it takes
/// none once it holds as many as it keeps; a much longer unscheduled pause is not expected even under load).
const FULL_FOR: Duration = Duration::from_secs(2);

#[test]
fn the_requests_held_back_for_a_stalled_controller_are_carried_out_at_the_capture() {
    let handle = PtyHandle::spawn(1, sh("sleep 600"), TerminalConfig::default()).expect("spawn");
    let _controller = handle.subscribe(0, "c".into(), Role::Controller, ExistingController::Refuse).expect("sub");
    // Renames until the actor takes no more: its controller never reads, so past its queue and backlog of
    // `title_changed` events the actor holds renames back, and once it holds as many as it keeps, its own queue
    // stays full.
    let deadline = Instant::now() + WAIT;
    // Room for every answer (the renames are far fewer), so no answer waits for this test.
    let (answers, _answered) = crossbeam_channel::bounded(4 * 4096);
    let mut sent = 0u64;
    loop {
        assert!(Instant::now() < deadline, "the actor still takes renames after {sent}");
        // Each rename may wait for its answer until the test's deadline; the queue is given `FULL_FOR`.
        let rename =
            Command::Rename { title: Some(format!("title {sent}")), reply: Reply::new(answers.clone(), deadline) };
        match handle.commands.send_timeout(rename, FULL_FOR) {
            Ok(()) => sent += 1,
            Err(_) => break,
        }
    }
    let queued = handle.commands.len() as u64;
    let published = handle.last_info().pty.expect("pty").title;
    let capturing = handle.begin_capture().expect("capture");
    let captured = handle.finish_capture(capturing).expect("captured");
    // Every rename the actor took was carried out, those it held back included: the last one not still queued.
    let expected = format!("title {}", sent - 1 - queued);
    assert_eq!(captured.state.titles.user.as_deref(), Some(expected.as_str()), "published before: {published}");
    assert_ne!(published, expected, "renames were held back");
    drop(captured);
    handle.terminate();
}

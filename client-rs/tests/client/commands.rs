//! `run` and `wait_command` against the fake daemon: the exact requests, both answers typed as a
//! `CommandOutcome`, refusals and wrong answers, and how long the client waits for the answer (past the
//! request timeout, but not past the request's own `timeout_ms` plus it).

use std::time::Duration;

use opencode_pty_client::{ClientError, CommandOutcome, CommandRunning};
use serde_json::{Value, json};

use crate::fake::{FakeDaemon, TOKEN, bounded};

/// A `command_finished` answer of command 4: `ok`, exit code 0.
fn finished() -> Value {
    json!({"type": "command_finished", "command_id": 4, "exit_code": 0, "output_start": 100, "output_end": 104,
           "text": "ok", "truncated": false})
}

#[tokio::test]
async fn run_and_wait_command_send_their_requests_and_type_both_answers() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (outcome, envelope) = tokio::join!(client.run(3, "echo ok", None), daemon.answer(finished()));
        assert_eq!(envelope, json!({"token": TOKEN, "request": {"op": "run", "id": 3, "command": "echo ok"}}));
        let outcome = outcome.expect("finished");
        assert_eq!(outcome.command_id(), 4);
        let done = outcome.finished().expect("finished");
        assert_eq!((done.exit_code, done.output_start, done.output_end), (Some(0), 100, 104));
        assert_eq!((done.text.as_deref(), done.truncated), (Some("ok"), Some(false)));

        let running = json!({"type": "command_running", "command_id": 5, "output_start": null});
        let (outcome, envelope) = tokio::join!(client.run(3, "sleep 9", Some(0)), daemon.answer(running));
        assert_eq!(envelope["request"], json!({"op": "run", "id": 3, "command": "sleep 9", "timeout_ms": 0}));
        let outcome = outcome.expect("running");
        assert_eq!(outcome, CommandOutcome::Running(CommandRunning { command_id: 5, output_start: None }));
        assert!(outcome.finished().is_none());

        let running = json!({"type": "command_running", "command_id": 5, "output_start": 200});
        let (outcome, envelope) = tokio::join!(client.wait_command(3, 5, Some(1_000)), daemon.answer(running));
        assert_eq!(envelope["request"], json!({"op": "wait_command", "id": 3, "command_id": 5, "timeout_ms": 1000}));
        assert_eq!(
            outcome.expect("running"),
            CommandOutcome::Running(CommandRunning { command_id: 5, output_start: Some(200) })
        );

        let (outcome, envelope) = tokio::join!(client.wait_command(3, 4, None), daemon.answer(finished()));
        assert_eq!(envelope["request"], json!({"op": "wait_command", "id": 3, "command_id": 4}));
        assert!(matches!(outcome, Ok(CommandOutcome::Finished(done)) if done.text.as_deref() == Some("ok")));
    })
    .await;
}

#[tokio::test]
async fn a_refusal_is_a_daemon_error_and_a_wrong_answer_is_refused() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let message = "process 3: its shell is running command 4; run needs the prompt (wait_command waits for it)";
        let (outcome, _) =
            tokio::join!(client.run(3, "true", None), daemon.answer(json!({"type": "error", "message": message})));
        assert!(matches!(&outcome, Err(ClientError::Daemon { message: said }) if said == message), "{outcome:?}");

        let (outcome, _) = tokio::join!(client.run(3, "true", None), daemon.answer(json!({"type": "ok"})));
        assert!(
            matches!(&outcome, Err(ClientError::Unexpected { expected: "command_finished", got }) if got == "ok"),
            "{outcome:?}"
        );

        // The subscription event's shape (no text) is not an answer.
        let mut event = finished();
        event.as_object_mut().expect("object").remove("text");
        let (outcome, _) = tokio::join!(client.wait_command(3, 4, None), daemon.answer(event));
        assert!(matches!(&outcome, Err(ClientError::Protocol(_))), "{outcome:?}");
    })
    .await;
}

#[tokio::test]
async fn the_answer_is_awaited_past_the_request_timeout_but_not_past_timeout_ms_plus_it() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client().with_request_timeout(Duration::from_millis(100));
        // Answered after three request timeouts, within the run's own 1 s.
        let (outcome, ()) = tokio::join!(client.run(3, "sleep 0.3", Some(1_000)), async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            peer.send_json(&finished()).await;
        });
        assert!(matches!(outcome, Ok(CommandOutcome::Finished(_))), "{outcome:?}");
        // Never answered: the client gives up after timeout_ms (0) and its request timeout, and closes.
        let (outcome, ()) = tokio::join!(client.wait_command(3, 4, Some(0)), async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            peer.expect_eof().await;
        });
        assert!(
            matches!(&outcome, Err(ClientError::Timeout { what, .. }) if what == "wait_command request"),
            "{outcome:?}"
        );
    })
    .await;
}

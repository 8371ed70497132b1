//! Going on across an in-place upgrade, against a fake daemon that announces the `upgrade` feature: a
//! subscription whose connection is dropped before `exited` pings, finds the same instance and subscribes again
//! from where output stopped with the same attachment id, yielding `Resumed` and contiguous output; another
//! instance, no daemon, a daemon that never answers, another protocol and lost bytes end it as before. `wait`
//! and `wait_command` are asked again; `run` says its command may have been typed.

use std::time::{Duration, Instant};

use opencode_pty_client::{ClientError, CommandOutcome, Event, Response, Resumed, Role, Subscription, Takeover};
use serde_json::{Value, json};

use crate::fake::{FakeDaemon, INSTANCE_ID, Peer, TOKEN, bounded, exited, pty_process};

/// An `attached` answer of process 3 whose replay `data` starts at `from`.
fn attached(role: &str, generation: u64, from: u64, data: &[u8]) -> Value {
    use base64::Engine;
    let end = from + u64::try_from(data.len()).expect("fits");
    json!({"type": "attached", "process": pty_process(3), "role": role, "generation": generation,
           "requested_offset": from, "available_offset": from, "end_offset": end, "truncated": false,
           "replay_base64": base64::engine::general_purpose::STANDARD.encode(data)})
}

/// Accepts a subscription, returns its request and the daemon's end after answering `answer`.
async fn accept_subscription(daemon: &FakeDaemon, answer: &Value) -> (Value, Peer) {
    let mut peer = daemon.accept().await;
    let envelope = peer.read_envelope().await;
    peer.send_json(answer).await;
    (envelope["request"].clone(), peer)
}

/// A controller subscription `tab-1` of process 3 through an upgradable client, attached with `hello` (0..5).
async fn controller(daemon: &FakeDaemon) -> (Subscription, Peer) {
    let client = daemon.upgradable_client();
    let answer = attached("controller", 1, 0, b"hello");
    let (subscription, (_, peer)) = tokio::join!(
        client.subscribe(3, 0, "tab-1", Role::Controller, Takeover::Take),
        accept_subscription(daemon, &answer)
    );
    (subscription.expect("attached"), peer)
}

/// The next event, which must be there and not an error.
async fn next(subscription: &mut Subscription) -> Event {
    subscription.next().await.expect("an event").expect("not an error")
}

#[tokio::test]
async fn a_subscription_goes_on_across_an_upgrade_with_contiguous_offsets_and_the_same_attachment() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let (mut subscription, mut peer) = controller(&daemon).await;
        peer.send_output(5, b" wor").await;
        drop(peer); // The upgrade closes the connection between two frames.
        let daemon_side = async {
            daemon.answer_ping(INSTANCE_ID, 8).await;
            let (request, mut peer) = accept_subscription(&daemon, &attached("controller", 1, 9, b"ld")).await;
            assert_eq!(
                request,
                json!({"op": "subscribe", "id": 3, "offset": 9, "attachment_id": "tab-1", "role": "controller",
                       "takeover": false}),
                "from where output stopped, as the controller it was, without taking over"
            );
            peer.send_output(11, b"!").await;
            peer.send_json(&exited(12)).await;
            peer
        };
        let client_side = async {
            let (mut events, mut offsets) = (Vec::new(), Vec::new());
            while let Some(event) = subscription.next().await {
                events.push(event.expect("no error"));
                offsets.push(subscription.next_offset());
            }
            (events, offsets)
        };
        let ((events, offsets), _peer) = tokio::join!(client_side, daemon_side);
        // The offset moves with the bytes yielded, never ahead of them.
        assert_eq!(offsets, [9, 9, 11, 12, 12]);
        let resumed = Resumed {
            offset: 9,
            process: serde_json::from_value(pty_process(3)).expect("info"),
            role: Role::Controller,
            generation: 1,
            attempts: 1,
        };
        assert_eq!(
            events[..4],
            [
                Event::Output { start: 5, bytes: b" wor".to_vec() },
                Event::Resumed(Box::new(resumed)),
                Event::Output { start: 9, bytes: b"ld".to_vec() },
                Event::Output { start: 11, bytes: b"!".to_vec() },
            ]
        );
        assert!(matches!(&events[4], Event::Message(m) if matches!(**m, Response::Exited { final_offset: 12, .. })));
        assert_eq!((events.len(), subscription.next_offset()), (5, 12));
    })
    .await;
}

#[tokio::test]
async fn a_controller_taken_over_during_the_break_goes_on_as_an_observer() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let (mut subscription, peer) = controller(&daemon).await;
        drop(peer);
        let daemon_side = async {
            daemon.answer_ping(INSTANCE_ID, 8).await;
            let refusal = json!({"type": "error", "message": "terminal already has controller tab-2"});
            let (first, _) = accept_subscription(&daemon, &refusal).await;
            assert_eq!((first["role"].as_str(), first["takeover"].as_bool()), (Some("controller"), Some(false)));
            daemon.answer_ping(INSTANCE_ID, 8).await;
            let (second, peer) = accept_subscription(&daemon, &attached("observer", 2, 5, b"")).await;
            assert_eq!((second["role"].as_str(), second["attachment_id"].as_str()), (Some("observer"), Some("tab-1")));
            peer
        };
        let (event, _peer) = tokio::join!(next(&mut subscription), daemon_side);
        let Event::Resumed(resumed) = event else { panic!("{event:?} is not Resumed") };
        assert_eq!((resumed.offset, resumed.role, resumed.generation), (5, Role::Observer, 2));
    })
    .await;
}

#[tokio::test]
async fn an_observer_told_it_became_controller_resumes_as_the_controller() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.upgradable_client();
        let answer = attached("observer", 1, 0, b"");
        let (subscription, (_, mut peer)) = tokio::join!(
            client.subscribe(3, 0, "tab-1", Role::Observer, Takeover::Refuse),
            accept_subscription(&daemon, &answer)
        );
        let mut subscription = subscription.expect("attached");
        peer.send_json(&json!({"type": "controller_changed", "attachment_id": "tab-1", "generation": 2})).await;
        drop(peer);
        assert!(matches!(next(&mut subscription).await, Event::Message(_)));
        let daemon_side = async {
            daemon.answer_ping(INSTANCE_ID, 8).await;
            let (request, peer) = accept_subscription(&daemon, &attached("controller", 2, 0, b"")).await;
            assert_eq!(request["role"], "controller");
            peer
        };
        let (event, _peer) = tokio::join!(next(&mut subscription), daemon_side);
        assert!(matches!(event, Event::Resumed(r) if r.role == Role::Controller && r.generation == 2));
    })
    .await;
}

#[tokio::test]
async fn another_instance_ends_the_subscription_as_before() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let (mut subscription, peer) = controller(&daemon).await;
        drop(peer);
        let other = "9".repeat(32);
        let ((), result) = tokio::join!(daemon.answer_ping(&other, 8), subscription.next());
        assert!(matches!(result, Some(Err(ClientError::Closed))), "{result:?}");
        assert!(subscription.next().await.is_none());
    })
    .await;
}

#[tokio::test]
async fn another_protocol_ends_the_subscription_with_a_version_mismatch() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let (mut subscription, peer) = controller(&daemon).await;
        drop(peer);
        let ((), result) = tokio::join!(daemon.answer_ping(INSTANCE_ID, 9), subscription.next());
        assert!(matches!(result, Some(Err(ClientError::VersionMismatch { expected: 8, found: 9 }))), "{result:?}");
    })
    .await;
}

#[tokio::test]
async fn with_no_daemon_left_the_subscription_ends_at_once() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let (mut subscription, peer) = controller(&daemon).await;
        let dir = daemon.crash();
        drop(peer);
        let started = Instant::now();
        assert!(matches!(subscription.next().await, Some(Err(ClientError::Closed))));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "a refused connection is not retried: {:?}",
            started.elapsed()
        );
        // A stopped daemon removes its socket: that ends it at once too.
        let (mut subscription, peer) = {
            let daemon = FakeDaemon::start();
            let pair = controller(&daemon).await;
            std::fs::remove_file(daemon.dir().join("socket")).expect("remove the socket");
            pair
        };
        drop(peer);
        assert!(matches!(subscription.next().await, Some(Err(ClientError::Closed))));
        drop(dir);
    })
    .await;
}

#[tokio::test]
async fn a_daemon_that_never_answers_is_given_up_after_the_window() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.upgradable_client().with_resume_window(Duration::from_millis(300));
        let answer = attached("observer", 0, 0, b"");
        let (subscription, (_, peer)) = tokio::join!(
            client.subscribe(3, 0, "tab-1", Role::Observer, Takeover::Refuse),
            accept_subscription(&daemon, &answer)
        );
        let mut subscription = subscription.expect("attached");
        drop(peer);
        // Connections wait in the listener's backlog and nobody accepts them, as during a hung upgrade.
        let started = Instant::now();
        assert!(matches!(subscription.next().await, Some(Err(ClientError::Closed))));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(5), "{waited:?}");
    })
    .await;
}

#[tokio::test]
async fn bytes_the_daemon_no_longer_keeps_end_the_subscription_rather_than_skip_them() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let (mut subscription, peer) = controller(&daemon).await;
        drop(peer);
        let daemon_side = async {
            daemon.answer_ping(INSTANCE_ID, 8).await;
            let mut later = attached("controller", 1, 7, b"xy");
            later["requested_offset"] = json!(5);
            later["truncated"] = json!(true);
            accept_subscription(&daemon, &later).await.1
        };
        let (result, mut peer) = tokio::join!(subscription.next(), daemon_side);
        assert!(matches!(result, Some(Err(ClientError::Closed))), "{result:?}");
        peer.expect_eof().await;
    })
    .await;
}

#[tokio::test]
async fn a_process_gone_after_the_upgrade_ends_the_subscription_as_before() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.upgradable_client();
        let answer = attached("observer", 0, 0, b"");
        let (subscription, (_, peer)) = tokio::join!(
            client.subscribe(3, 0, "tab-1", Role::Observer, Takeover::Refuse),
            accept_subscription(&daemon, &answer)
        );
        let mut subscription = subscription.expect("attached");
        drop(peer);
        let daemon_side = async {
            daemon.answer_ping(INSTANCE_ID, 8).await;
            daemon.answer(json!({"type": "error", "message": "process 3 not found"})).await
        };
        let (result, request) = tokio::join!(subscription.next(), daemon_side);
        assert_eq!(request["request"]["role"], "observer");
        assert!(matches!(result, Some(Err(ClientError::Closed))), "{result:?}");
    })
    .await;
}

#[tokio::test]
async fn wait_and_wait_command_are_asked_again_and_run_says_its_command_may_have_been_typed() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.upgradable_client();
        let exit = json!({"type": "exited", "exit_code": 0, "final_offset": 0, "exited_at": 2, "output_lines": 1});
        let daemon_side = async {
            daemon.close_after_reading().await;
            daemon.answer_ping(INSTANCE_ID, 8).await;
            daemon.answer(exit.clone()).await
        };
        let (exited, again) = tokio::join!(client.wait(5), daemon_side);
        assert_eq!(exited.expect("exited").exit_code, Some(0));
        assert_eq!(again, json!({"token": TOKEN, "request": {"op": "wait", "id": 5}}));

        let finished = json!({"type": "command_finished", "command_id": 4, "exit_code": 0, "output_start": 1,
                              "output_end": 2, "text": "", "truncated": false});
        let daemon_side = async {
            daemon.close_after_reading().await;
            daemon.answer_ping(INSTANCE_ID, 8).await;
            daemon.answer(finished).await
        };
        let (outcome, again) = tokio::join!(client.wait_command(3, 4, Some(60_000)), daemon_side);
        assert!(matches!(&outcome, Ok(CommandOutcome::Finished(done)) if done.command_id == 4), "{outcome:?}");
        let rest = again["request"]["timeout_ms"].as_u64().expect("the rest of the wait");
        assert!(rest <= 60_000 && rest > 50_000, "{again}");
        assert_eq!(
            (again["request"]["op"].as_str(), again["request"]["command_id"].as_u64()),
            (Some("wait_command"), Some(4))
        );

        let daemon_side = async {
            daemon.close_after_reading().await;
            daemon.answer_ping(INSTANCE_ID, 8).await;
        };
        let (outcome, ()) = tokio::join!(client.run(3, "make", None), daemon_side);
        assert!(matches!(outcome, Err(ClientError::RunInterrupted { id: 3 })), "{outcome:?}");
        // Without the feature, nothing is asked again: the loss is the answer, as before.
        let plain = daemon.client();
        let (outcome, ()) = tokio::join!(plain.wait(5), daemon.close_after_reading());
        assert!(matches!(outcome, Err(ClientError::Closed)), "{outcome:?}");
    })
    .await;
}

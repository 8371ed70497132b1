//! Subscriptions: `attached` first, then contiguous output and events up to `exited`, then nothing; a refused
//! or cut subscription, and output that skips or repeats bytes, are errors.

use opencode_pty_client::{
    ClientError, CommandFinished, CommandStarted, Event, InputWait, OptIn, Response, Role, Subscription, Takeover,
};
use serde_json::{Value, json};

use crate::fake::{FakeDaemon, Peer, TOKEN, bounded, exited, pty_process};

/// An `attached` answer whose replay `hello` ends at offset 5.
fn attached() -> Value {
    json!({"type": "attached", "process": pty_process(3), "role": "controller", "generation": 1,
           "requested_offset": 0, "available_offset": 0, "end_offset": 5, "truncated": false,
           "replay_base64": "aGVsbG8="})
}

/// Accepts the subscription, checks nothing, answers `attached` and returns the connection.
async fn attach(daemon: &FakeDaemon) -> (Peer, Value) {
    let mut peer = daemon.accept().await;
    let envelope = peer.read_envelope().await;
    peer.send_json(&attached()).await;
    (peer, envelope)
}

/// An observer subscription to process 3, attached, and the daemon's end of it.
async fn observe(daemon: &FakeDaemon) -> (Subscription, Peer) {
    let client = daemon.client();
    let (subscription, (peer, _)) =
        tokio::join!(client.subscribe(3, 0, "a", Role::Observer, Takeover::Refuse), attach(daemon));
    (subscription.expect("attached"), peer)
}

#[tokio::test]
async fn a_subscription_yields_replay_output_events_and_exited_then_ends() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (subscription, (mut peer, envelope)) =
            tokio::join!(client.subscribe(3, 0, "tab-1", Role::Controller, Takeover::Take), attach(&daemon));
        assert_eq!(
            envelope,
            json!({"token": TOKEN, "request": {"op": "subscribe", "id": 3, "offset": 0, "attachment_id": "tab-1",
                                               "role": "controller", "takeover": true}})
        );
        let mut subscription = subscription.expect("attached");
        let attached = subscription.attached();
        assert_eq!((attached.role, attached.generation, attached.end_offset), (Role::Controller, 1, 5));
        assert_eq!(attached.replay, b"hello");

        peer.send_output(5, b" wor").await;
        peer.send_json(&json!({"type": "title_changed", "title": "vim"})).await;
        peer.send_output(9, b"ld").await;
        peer.send_json(&exited(11)).await;
        // The daemon keeps its end open: the client must stop at `exited` without waiting for the close.

        let first = subscription.next().await.expect("an event").expect("output");
        assert_eq!(first, Event::Output { start: 5, bytes: b" wor".to_vec() });
        let second = subscription.next().await.expect("an event").expect("title");
        assert_eq!(second, Event::Message(Box::new(Response::TitleChanged { title: "vim".into() })));
        let third = subscription.next().await.expect("an event").expect("output");
        assert_eq!(third, Event::Output { start: 9, bytes: b"ld".to_vec() });
        assert_eq!(subscription.next_offset(), 11);
        let last = subscription.next().await.expect("an event").expect("exited");
        let Event::Message(last) = last else { panic!("{last:?} is not an event") };
        assert!(matches!(*last, Response::Exited { final_offset: 11, .. }), "{last:?}");
        assert!(subscription.next().await.is_none());
        assert!(subscription.next().await.is_none());

        drop(subscription);
        peer.expect_eof().await;
    })
    .await;
}

#[tokio::test]
async fn output_that_skips_bytes_breaks_the_protocol() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let (mut subscription, mut peer) = observe(&daemon).await;
        // The replay ended at 5, so a frame from 6 leaves a gap.
        peer.send_output(6, b"x").await;
        let error = subscription.next().await.expect("an event").unwrap_err();
        assert!(
            error.to_string().contains("output frame starts at offset 6, but the output so far ends at 5"),
            "{error}"
        );
        assert!(subscription.next().await.is_none(), "a broken subscription ends");
    })
    .await;
}

#[tokio::test]
async fn a_refused_subscription_is_a_daemon_error() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let answer = json!({"type": "error", "message": "terminal already has controller tab-0"});
        let (result, _) =
            tokio::join!(client.subscribe(3, 0, "a", Role::Controller, Takeover::Refuse), daemon.answer(answer));
        let error = result.unwrap_err();
        assert!(matches!(&error, ClientError::Daemon { message } if message.contains("already has controller")));
    })
    .await;
}

#[tokio::test]
async fn eof_before_attached_is_closed() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (result, ()) =
            tokio::join!(client.subscribe(3, 0, "a", Role::Observer, Takeover::Refuse), daemon.close_after_reading());
        assert!(matches!(result, Err(ClientError::Closed)), "{result:?}");
    })
    .await;
}

#[tokio::test]
async fn eof_before_exited_is_reported_once() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let (mut subscription, peer) = observe(&daemon).await;
        drop(peer);
        assert!(matches!(subscription.next().await, Some(Err(ClientError::Closed))));
        assert!(subscription.next().await.is_none());
    })
    .await;
}

#[tokio::test]
async fn a_response_that_is_not_an_event_breaks_the_protocol() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let (mut subscription, mut peer) = observe(&daemon).await;
        peer.send_json(&json!({"type": "ok"})).await;
        let error = subscription.next().await.expect("an event").unwrap_err();
        assert!(error.to_string().contains("a subscription carried a `ok`"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn a_subscription_that_names_input_asks_for_its_events_and_yields_them() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (subscription, (mut peer, envelope)) = tokio::join!(
            client.subscribe_with(3, 0, "agent", Role::Observer, Takeover::Refuse, &[OptIn::Input]),
            attach(&daemon)
        );
        assert_eq!(
            envelope["request"],
            json!({"op": "subscribe", "id": 3, "offset": 0, "attachment_id": "agent", "role": "observer",
                   "takeover": false, "events": ["input"]})
        );
        let mut subscription = subscription.expect("attached");
        peer.send_output(5, b"Password: ").await;
        peer.send_json(&json!({"type": "input_changed", "input": "password"})).await;
        peer.send_json(&json!({"type": "input_changed", "input": null})).await;
        let output = subscription.next().await.expect("an event").expect("output");
        assert_eq!(output, Event::Output { start: 5, bytes: b"Password: ".to_vec() });
        let waiting = subscription.next().await.expect("an event").expect("input_changed");
        assert_eq!(waiting, Event::Message(Box::new(Response::InputChanged { input: Some(InputWait::Password) })));
        let done = subscription.next().await.expect("an event").expect("input_changed");
        assert_eq!(done, Event::Message(Box::new(Response::InputChanged { input: None })));
    })
    .await;
}

#[tokio::test]
async fn a_subscription_that_names_commands_yields_typed_command_events() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let events = [OptIn::Commands, OptIn::Input];
        let (subscription, (mut peer, envelope)) = tokio::join!(
            client.subscribe_with(3, 0, "agent", Role::Observer, Takeover::Refuse, &events),
            attach(&daemon)
        );
        assert_eq!(envelope["request"]["events"], json!(["commands", "input"]));
        let mut subscription = subscription.expect("attached");
        peer.send_json(&json!({"type": "command_started", "command_id": 1, "command": "ls", "cwd": "/tmp",
                               "output_start": 5}))
            .await;
        peer.send_output(5, b"a\r\n").await;
        peer.send_json(&json!({"type": "command_finished", "command_id": 1, "exit_code": 0, "output_start": 5,
                               "output_end": 8}))
            .await;
        let Some(Ok(Event::Message(started))) = subscription.next().await else { panic!("command_started") };
        let started = CommandStarted::try_from(*started).expect("command_started");
        assert_eq!((started.command_id, started.command.as_str(), started.cwd.as_deref()), (1, "ls", Some("/tmp")));
        assert_eq!(started.output_start, subscription.next_offset(), "at the offset of the output before it");
        let output = subscription.next().await.expect("an event").expect("output");
        assert_eq!(output, Event::Output { start: 5, bytes: b"a\r\n".to_vec() });
        let Some(Ok(Event::Message(done))) = subscription.next().await else { panic!("command_finished") };
        let done = CommandFinished::try_from(*done).expect("command_finished");
        assert_eq!((done.exit_code, done.output_end, done.text), (Some(0), subscription.next_offset(), None));
    })
    .await;
}

//! The owner channel: `own` names the registration's instance, and `prepare_handoff` and `shutdown` travel on
//! the same connection; the channel reports when the daemon closes it, and closes when dropped.

use std::time::Duration;

use opencode_pty_client::{ClientError, Handoff};
use serde_json::json;

use crate::fake::{FakeDaemon, INSTANCE_ID, TOKEN, bounded};

#[tokio::test]
async fn own_then_prepare_handoff_and_shutdown_on_the_same_connection() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (owner, mut peer) = tokio::join!(client.own(None), async {
            let mut peer = daemon.accept().await;
            let envelope = peer.read_envelope().await;
            assert_eq!(envelope, json!({"token": TOKEN, "request": {"op": "own", "instance_id": INSTANCE_ID}}));
            peer.send_json(&json!({"type": "owned"})).await;
            peer
        });
        let mut owner = owner.expect("owned");

        let (handoff, ()) = tokio::join!(owner.prepare_handoff(), async {
            let envelope = peer.read_envelope().await;
            assert_eq!(envelope, json!({"token": TOKEN, "request": {"op": "prepare_handoff"}}));
            peer.send_json(&json!({"type": "handoff", "ticket": "t1", "expires_at": 120000})).await;
        });
        assert_eq!(handoff.expect("handoff"), Handoff { ticket: "t1".into(), expires_at: 120_000 });

        let (shutdown, ()) = tokio::join!(owner.shutdown(), async {
            assert_eq!(peer.read_envelope().await["request"], json!({"op": "shutdown"}));
            peer.send_json(&json!({"type": "ok"})).await;
        });
        shutdown.expect("ok");

        owner.close().await.expect("closed");
        peer.expect_eof().await;
    })
    .await;
}

#[tokio::test]
async fn own_with_a_ticket_sends_it() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (owner, envelope) = tokio::join!(client.own(Some("t1".into())), daemon.answer(json!({"type": "owned"})));
        owner.expect("owned");
        assert_eq!(envelope["request"], json!({"op": "own", "instance_id": INSTANCE_ID, "ticket": "t1"}));
    })
    .await;
}

#[tokio::test]
async fn a_refused_claim_is_a_daemon_error() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let answer = json!({"type": "error", "message": "daemon already has an owner"});
        let (owner, _) = tokio::join!(client.own(None), daemon.answer(answer));
        assert!(matches!(owner, Err(ClientError::Daemon { .. })), "{owner:?}");
        let (owner, _) = tokio::join!(client.own(None), daemon.answer(json!({"type": "ok"})));
        assert!(matches!(owner, Err(ClientError::Unexpected { expected: "owned", .. })), "{owner:?}");
    })
    .await;
}

#[tokio::test]
async fn closed_resolves_when_the_daemon_closes_the_channel() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (owner, peer) = tokio::join!(client.own(None), async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            peer.send_json(&json!({"type": "owned"})).await;
            peer
        });
        let mut owner = owner.expect("owned");
        drop(peer);
        owner.closed().await.expect("a clean close");
    })
    .await;
}

#[tokio::test]
async fn dropping_the_owner_closes_the_channel() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (owner, mut peer) = tokio::join!(client.own(None), async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            peer.send_json(&json!({"type": "owned"})).await;
            peer
        });
        drop(owner.expect("owned"));
        peer.expect_eof().await;
    })
    .await;
}

#[tokio::test]
async fn a_request_that_timed_out_leaves_the_channel_unusable() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client().with_request_timeout(Duration::from_millis(50));
        let (owner, mut peer) = tokio::join!(client.own(None), async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            peer.send_json(&json!({"type": "owned"})).await;
            peer
        });
        let mut owner = owner.expect("owned");
        let (handoff, _) = tokio::join!(owner.prepare_handoff(), peer.read_envelope());
        assert!(matches!(handoff, Err(ClientError::Timeout { .. })), "{handoff:?}");
        // Its answer could still arrive and be taken for the next request's, so nothing more is sent.
        let shutdown = owner.shutdown().await;
        assert!(matches!(shutdown, Err(ClientError::Interrupted)), "{shutdown:?}");
        drop(owner);
        peer.expect_eof().await;
    })
    .await;
}

#[tokio::test]
async fn upgrade_travels_on_the_owner_channel_with_its_program_and_a_refusal_is_a_daemon_error() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (owner, mut peer) = tokio::join!(client.own(None), async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            peer.send_json(&json!({"type": "owned"})).await;
            peer
        });
        let mut owner = owner.expect("owned");

        let (upgraded, ()) = tokio::join!(owner.upgrade(None), async {
            assert_eq!(peer.read_envelope().await, json!({"token": TOKEN, "request": {"op": "upgrade"}}));
            peer.send_json(&json!({"type": "ok"})).await;
        });
        upgraded.expect("ok");

        let program = std::path::Path::new("/opt/opencode/bin/opencode-pty");
        let refusal = "upgrade is not available in this build";
        let (upgraded, ()) = tokio::join!(owner.upgrade(Some(program)), async {
            let request = peer.read_envelope().await["request"].clone();
            assert_eq!(request, json!({"op": "upgrade", "program": "/opt/opencode/bin/opencode-pty"}));
            peer.send_json(&json!({"type": "error", "message": refusal})).await;
        });
        assert!(matches!(&upgraded, Err(ClientError::Daemon { message }) if message == refusal), "{upgraded:?}");

        // A path JSON cannot carry is refused before anything is sent; the channel stays usable.
        use std::os::unix::ffi::OsStrExt;
        let not_utf8 = std::path::Path::new(std::ffi::OsStr::from_bytes(b"/opt/\xff/opencode-pty"));
        let upgraded = owner.upgrade(Some(not_utf8)).await;
        assert!(
            matches!(&upgraded, Err(ClientError::Argument(reason)) if reason.contains("not UTF-8")),
            "{upgraded:?}"
        );
        let (shutdown, ()) = tokio::join!(owner.shutdown(), async {
            assert_eq!(peer.read_envelope().await["request"], json!({"op": "shutdown"}));
            peer.send_json(&json!({"type": "ok"})).await;
        });
        shutdown.expect("ok");
    })
    .await;
}

//! Discovery: the registration file is read, another protocol version is refused before the socket is touched,
//! and the `pong` must come from the daemon the registration describes.

use opencode_pty_client::{Client, ClientError};
use serde_json::{Value, json};

use crate::fake::{FakeDaemon, INSTANCE_ID, PID, TOKEN, bounded};

/// The fake daemon's registration as JSON.
fn registration_json(daemon: &FakeDaemon) -> Value {
    serde_json::to_value(daemon.registration()).expect("encodes")
}

#[tokio::test]
async fn discover_refuses_another_protocol_before_connecting() {
    bounded(async {
        let daemon = FakeDaemon::start();
        // A future daemon's file may look different; only `protocol` is read, and the socket does not exist.
        daemon.write_registration(&json!({"protocol": 9, "socket": "/nonexistent/socket", "endpoint": 3}));
        let error = Client::discover(daemon.dir()).await.unwrap_err();
        assert!(matches!(error, ClientError::VersionMismatch { expected: 8, found: 9 }), "{error:?}");
    })
    .await;
}

#[tokio::test]
async fn discover_refuses_a_missing_or_invalid_registration() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let error = Client::discover(daemon.dir()).await.unwrap_err();
        assert!(matches!(&error, ClientError::Registration { path, .. } if path.ends_with("service.json")));
        let mut registration = registration_json(&daemon);
        registration["pid"] = json!("many");
        daemon.write_registration(&registration);
        let error = Client::discover(daemon.dir()).await.unwrap_err();
        assert!(error.to_string().contains("does not fit the registration schema"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn discover_pings_and_accepts_a_matching_daemon() {
    bounded(async {
        let daemon = FakeDaemon::start();
        daemon.write_registration(&registration_json(&daemon));
        let pong = json!({"type": "pong", "instance_id": INSTANCE_ID, "pid": PID, "protocol": 8, "features": ["x"]});
        let (client, envelope) = tokio::join!(Client::discover(daemon.dir()), daemon.answer(pong));
        let client = client.expect("discovered");
        assert_eq!(envelope, json!({"token": TOKEN, "request": {"op": "ping"}}));
        assert_eq!(client.registration(), &daemon.registration());
    })
    .await;
}

#[tokio::test]
async fn discover_refuses_a_pong_from_another_daemon() {
    bounded(async {
        let daemon = FakeDaemon::start();
        daemon.write_registration(&registration_json(&daemon));
        let pong = json!({"type": "pong", "instance_id": INSTANCE_ID, "pid": PID + 1, "protocol": 8, "features": []});
        let (client, _) = tokio::join!(Client::discover(daemon.dir()), daemon.answer(pong));
        let error = client.unwrap_err();
        assert!(
            matches!(&error, ClientError::IdentityMismatch { field: "pid", registered, answered }
                if *registered == PID.to_string() && *answered == (PID + 1).to_string()),
            "{error:?}"
        );
    })
    .await;
}

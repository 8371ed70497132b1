//! How the client reads frames: a declared length over the limit is refused from the header alone, frames split
//! across writes are reassembled, and broken streams are errors rather than answers.

use opencode_pty_client::ClientError;
use opencode_pty_protocol::{FrameError, MAX_FRAME_BYTES, encode_control};
use serde_json::json;

use crate::fake::{FakeDaemon, bounded};

#[tokio::test]
async fn an_oversized_frame_header_is_refused_before_its_payload() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let declared = u32::try_from(MAX_FRAME_BYTES + 1).expect("fits");
        let send_header_only = async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            // No payload follows: the client must decide from these 4 bytes, then close.
            peer.send_bytes(&declared.to_be_bytes()).await;
            peer.expect_eof().await;
        };
        let (result, ()) = tokio::join!(client.ping(), send_header_only);
        assert!(
            matches!(result, Err(ClientError::Frame(FrameError::FrameTooLarge { declared: d })) if d == declared),
            "{result:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_frame_split_across_writes_is_reassembled() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let Some(answer) = json!({"type": "ok"}).as_object().cloned() else { unreachable!() };
        let frame = encode_control(&answer).expect("encodes");
        let send_in_pieces = async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            for piece in frame.chunks(3) {
                peer.send_bytes(piece).await;
            }
        };
        let (result, ()) = tokio::join!(client.terminate(1), send_in_pieces);
        result.expect("ok");
    })
    .await;
}

#[tokio::test]
async fn a_stream_cut_inside_a_frame_is_a_frame_error() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let cut = async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            peer.send_bytes(&[0, 0, 0, 10, b'{']).await;
        };
        let (result, ()) = tokio::join!(client.terminate(1), cut);
        assert!(
            matches!(result, Err(ClientError::Frame(FrameError::EofInPayload { got: 1, expected: 10 }))),
            "{result:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn an_output_frame_outside_a_subscription_breaks_the_protocol() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let send_output = async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            peer.send_output(0, b"x").await;
        };
        let (result, ()) = tokio::join!(client.terminate(1), send_output);
        assert!(matches!(result, Err(ClientError::Protocol(_))), "{result:?}");
    })
    .await;
}

#[tokio::test]
async fn an_undecodable_answer_breaks_the_protocol() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let answer = json!({"type": "pong", "instance_id": "x", "pid": -1, "protocol": 8, "features": []});
        let (result, _) = tokio::join!(client.ping(), daemon.answer(answer));
        let error = result.unwrap_err();
        assert!(error.to_string().contains("cannot decode a `pong` response"), "{error}");
    })
    .await;
}

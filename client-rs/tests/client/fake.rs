//! A scripted stand-in for the daemon: a Unix listener in a temporary directory whose connections the test
//! drives by hand (read an envelope, answer with chosen frames or bytes, close), plus sample messages and the
//! timeout every test runs under.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use opencode_pty_client::{Client, PROTOCOL_VERSION, Registration};
use opencode_pty_protocol::{FRAME_HEADER_BYTES, encode_control, encode_output};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

/// How long any one test may run before it fails.
pub(crate) const TEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The fake daemon's token.
pub(crate) const TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// The fake daemon's instance id.
pub(crate) const INSTANCE_ID: &str = "fedcba9876543210fedcba9876543210";

/// The fake daemon's pid.
pub(crate) const PID: u32 = 4242;

/// The largest envelope the fake daemon reads; the tests send small ones.
const MAX_ENVELOPE_BYTES: usize = 64 * 1024;

/// Runs a test body, failing it after [`TEST_TIMEOUT`].
pub(crate) async fn bounded<F: Future>(body: F) -> F::Output {
    tokio::time::timeout(TEST_TIMEOUT, body).await.expect("the test timed out")
}

/// A listening fake daemon.
pub(crate) struct FakeDaemon {
    /// The runtime directory holding the socket (and a registration file when a test writes one).
    dir: TempDir,
    /// The listening socket.
    listener: UnixListener,
}

impl FakeDaemon {
    /// Binds a socket in a fresh temporary directory. Needs a tokio runtime.
    pub(crate) fn start() -> FakeDaemon {
        let dir = tempfile::tempdir().expect("tempdir");
        let listener = UnixListener::bind(dir.path().join("socket")).expect("bind");
        FakeDaemon { dir, listener }
    }

    /// The runtime directory.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The registration describing this daemon.
    pub(crate) fn registration(&self) -> Registration {
        Registration {
            features: Vec::new(),
            instance_id: INSTANCE_ID.into(),
            pid: PID,
            protocol: PROTOCOL_VERSION,
            socket: self.dir.path().join("socket").to_str().expect("UTF-8 path").into(),
            token: TOKEN.into(),
        }
    }

    /// A client for this daemon.
    pub(crate) fn client(&self) -> Client {
        Client::from_registration(self.registration())
    }

    /// A client for this daemon announcing the `upgrade` feature, whose lost connections resume.
    pub(crate) fn upgradable_client(&self) -> Client {
        let features = vec![opencode_pty_client::UPGRADE_FEATURE.to_owned()];
        Client::from_registration(Registration { features, ..self.registration() })
    }

    /// Stops listening, as a daemon that crashed: the socket file stays, and connecting to it is refused.
    pub(crate) fn crash(self) -> TempDir {
        drop(self.listener);
        self.dir
    }

    /// Accepts one connection, checks that it is a `ping` and answers it as the daemon `instance_id` would
    /// (protocol `protocol`).
    pub(crate) async fn answer_ping(&self, instance_id: &str, protocol: u32) {
        let envelope = self
            .answer(json!({"type": "pong", "instance_id": instance_id, "pid": PID, "protocol": protocol,
                           "features": [opencode_pty_client::UPGRADE_FEATURE]}))
            .await;
        assert_eq!(envelope, json!({"token": TOKEN, "request": {"op": "ping"}}));
    }

    /// Writes `service.json` into the runtime directory, private as the daemon writes it.
    pub(crate) fn write_registration(&self, registration: &Value) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.path().join("service.json");
        std::fs::write(&path, registration.to_string()).expect("write registration");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod registration");
    }

    /// Accepts the next connection.
    pub(crate) async fn accept(&self) -> Peer {
        let (stream, _) = self.listener.accept().await.expect("accept");
        Peer { stream }
    }

    /// Accepts one connection, reads its envelope, answers with one control frame and closes; returns the
    /// envelope.
    pub(crate) async fn answer(&self, answer: Value) -> Value {
        let mut peer = self.accept().await;
        let envelope = peer.read_envelope().await;
        peer.send_json(&answer).await;
        envelope
    }

    /// Accepts one connection, reads its envelope and closes it without an answer.
    pub(crate) async fn close_after_reading(&self) {
        self.accept().await.read_envelope().await;
    }
}

/// The daemon's end of one connection.
pub(crate) struct Peer {
    /// The accepted socket.
    stream: UnixStream,
}

impl Peer {
    /// Reads one control frame from the client and parses it.
    pub(crate) async fn read_envelope(&mut self) -> Value {
        let mut header = [0; FRAME_HEADER_BYTES];
        self.stream.read_exact(&mut header).await.expect("envelope header");
        let len = usize::try_from(u32::from_be_bytes(header)).expect("fits");
        assert!(len <= MAX_ENVELOPE_BYTES, "envelope of {len} bytes");
        let mut payload = vec![0; len];
        self.stream.read_exact(&mut payload).await.expect("envelope payload");
        serde_json::from_slice(&payload).expect("envelope JSON")
    }

    /// Sends one control frame.
    pub(crate) async fn send_json(&mut self, value: &Value) {
        let Value::Object(map) = value else { panic!("control frames are objects") };
        self.send_bytes(&encode_control(map).expect("encodes")).await;
    }

    /// Sends one output frame.
    pub(crate) async fn send_output(&mut self, start: u64, bytes: &[u8]) {
        self.send_bytes(&encode_output(start, bytes).expect("encodes")).await;
    }

    /// Sends raw bytes.
    pub(crate) async fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("send");
    }

    /// Waits until the client closes its end; fails if it sends anything first.
    pub(crate) async fn expect_eof(&mut self) {
        let mut byte = [0; 1];
        let read = self.stream.read(&mut byte).await.expect("read");
        assert_eq!(read, 0, "the client sent more bytes instead of closing");
    }
}

/// A running PTY's process info as the daemon sends it.
pub(crate) fn pty_process(id: u64) -> Value {
    json!({
        "id": id, "mode": "pty", "pid": 100, "command": ["sh"], "cwd": "/", "group_id": "",
        "lifecycle": {"status": "running"}, "output_head": 0, "output_tail": 0, "started_at": 1,
        "exited_at": null,
        "pty": {"title": "sh", "user_title": null, "foreground_process": null, "cols": 80, "rows": 24}
    })
}

/// An `exited` event.
pub(crate) fn exited(final_offset: u64) -> Value {
    json!({"type": "exited", "exit_code": 0, "final_offset": final_offset, "exited_at": 2})
}

//! What the `measure_*` examples share: finding the daemon binary, one request over a stream, and a started,
//! owned daemon.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use opencode_pty_client::launch::{Launch, LaunchedDaemon};
use opencode_pty_protocol::{Frame, Registration, encode_control, read_frame};
use serde_json::{Value, json};

/// The daemon binary: `OPENCODE_PTY_BIN` (or `OPENCODE_PTY_DAEMON`) when set, else the one of the example's own
/// profile (`target/<profile>/opencode-pty`).
pub(crate) fn daemon_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("OPENCODE_PTY_BIN").or_else(|| std::env::var_os("OPENCODE_PTY_DAEMON")) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().and_then(Path::parent).expect("target/<profile>").join("opencode-pty")
}

/// Sends `request` on `stream` in an envelope with the daemon's token, and reads its answer.
pub(crate) fn send(stream: &mut UnixStream, registration: &Registration, request: Value) -> Value {
    let Value::Object(map) = json!({"token": registration.token, "request": request}) else { unreachable!() };
    stream.write_all(&encode_control(&map).expect("encode")).expect("send");
    match read_frame(stream).expect("frame") {
        Some(Frame::Control(map)) => Value::Object(map),
        other => panic!("unexpected {other:?}"),
    }
}

/// Starts a daemon in `root`, waits for its registration and claims it (dropping the returned stream stops it).
pub(crate) fn start_owned(root: &Path) -> (LaunchedDaemon, Registration, UnixStream) {
    let launch = Launch::new(daemon_binary(), root, "measure").stderr(Stdio::inherit());
    let child = launch
        .start()
        .unwrap_or_else(|e| panic!("{e} (build the daemon with `cargo build --release -p opencode-pty`)"));
    let registration = child.registration().clone();
    let mut owner = UnixStream::connect(&registration.socket).expect("connect");
    let owned = send(&mut owner, &registration, json!({"op": "own", "instance_id": registration.instance_id}));
    assert_eq!(owned["type"], "owned", "{owned}");
    (child, registration, owner)
}

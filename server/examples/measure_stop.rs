//! Measures an orderly stop with many processes: starts N pipe processes (`sleep`; N is the first argument, 1000 by
//! default), then times `shutdown` until the daemon has exited, and reports how often the record of process groups
//! (`service.groups`) was replaced meanwhile. Run: `cargo build --release -p opencode-pty --examples` and then
//! `target/release/examples/measure_stop 1000` (it runs the daemon binary next to its own directory).

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use opencode_pty_protocol::{Frame, Registration, encode_control, read_frame};
use serde_json::{Value, json};

/// The daemon binary of the same profile (`target/<profile>/opencode-pty`).
fn daemon_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().and_then(Path::parent).expect("target/<profile>").join("opencode-pty")
}

fn send(stream: &mut UnixStream, registration: &Registration, request: Value) -> Value {
    let Value::Object(map) = json!({"token": registration.token, "request": request}) else { unreachable!() };
    stream.write_all(&encode_control(&map).expect("encode")).expect("send");
    match read_frame(stream).expect("frame") {
        Some(Frame::Control(map)) => Value::Object(map),
        other => panic!("unexpected {other:?}"),
    }
}

fn request(registration: &Registration, request: Value) -> Value {
    let mut stream = UnixStream::connect(&registration.socket).expect("connect");
    send(&mut stream, registration, request)
}

/// The inode of the record, which each atomic replacement changes; `None` when there is none.
fn record_inode(dir: &Path) -> Option<u64> {
    std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(dir.join("service.groups")).ok()?).into()
}

fn main() {
    let count: usize = std::env::args().nth(1).map_or(1000, |n| n.parse().expect("a number of processes"));
    let root = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(daemon_binary())
        .args(["daemon", "--name", "measure", "--runtime-dir"])
        .arg(root.path())
        .stdin(Stdio::null())
        .spawn()
        .expect("start the daemon (build it first)");
    let dir = root.path().join("measure");
    let deadline = Instant::now() + Duration::from_secs(10);
    let registration: Registration = loop {
        if let Some(found) = std::fs::read(dir.join(opencode_pty_protocol::REGISTRATION_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            break found;
        }
        assert!(Instant::now() < deadline, "no registration");
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut owner = UnixStream::connect(&registration.socket).expect("connect");
    let owned = send(&mut owner, &registration, json!({"op": "own", "instance_id": registration.instance_id}));
    assert_eq!(owned["type"], "owned", "{owned}");

    let out = root.path().join("out.log");
    let started = Instant::now();
    for _ in 0..count {
        let created = request(
            &registration,
            json!({"op": "create_pipe", "program": "/bin/sleep", "args": ["1000"], "cwd": "/", "env": {},
                   "group_id": "measure", "output_path": out, "metadata": {}}),
        );
        assert_eq!(created["type"], "created", "{created}");
    }
    let record_bytes = std::fs::metadata(dir.join("service.groups")).map_or(0, |m| m.len());
    println!("{count} pipe processes started in {:.0} ms; record {record_bytes} bytes", ms(started.elapsed()));

    // Count the record's replacements while stopping by watching its inode change.
    let (mut replaced, mut last) = (0usize, record_inode(&dir));
    let started = Instant::now();
    let answer = send(&mut owner, &registration, json!({"op": "shutdown"}));
    assert_eq!(answer["type"], "ok", "{answer}");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        let now = record_inode(&dir);
        if now.is_some() && now != last {
            replaced += 1;
        }
        last = now;
        std::thread::sleep(Duration::from_micros(200));
    };
    println!(
        "shutdown to exit: {:.0} ms, exit {status}; record replacements seen while stopping: {replaced} (sampled)",
        ms(started.elapsed())
    );
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

//! Measures the daemon over its socket: the round trip of `ping` (connect, authenticate, answer, close) against
//! a bare Unix-socket echo in the same run, and a 256 MiB pipe process into its output file against the same
//! `cat` redirected by the shell, and the daemon's peak memory growth for frames with a wrong token (one, then six at
//! once) against the frames' own size. Run: `just bench-daemon` (it builds the release binary first).

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use opencode_pty_protocol::{Frame, MAX_FRAME_BYTES, Registration, encode_control, read_frame};
use serde_json::{Value, json};

const PINGS: u32 = 2000;
const PIPE_BYTES: u64 = 256 << 20;

/// The release daemon next to this example's directory (`target/release/opencode-pty`).
fn daemon_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let release = exe.parent().and_then(Path::parent).expect("target/release");
    release.join("opencode-pty")
}

fn request(registration: &Registration, request: Value) -> Value {
    let mut stream = UnixStream::connect(&registration.socket).expect("connect");
    let Value::Object(map) = json!({"token": registration.token, "request": request}) else { unreachable!() };
    stream.write_all(&encode_control(&map).expect("encode")).expect("send");
    match read_frame(&mut stream).expect("frame") {
        Some(Frame::Control(map)) => Value::Object(map),
        other => panic!("unexpected {other:?}"),
    }
}

fn start(root: &Path) -> (Child, Registration, UnixStream) {
    let child = Command::new(daemon_binary())
        .args(["daemon", "--name", "measure", "--runtime-dir"])
        .arg(root)
        .stdin(Stdio::null())
        .spawn()
        .expect("start the daemon (build it with `cargo build --release -p opencode-pty`)");
    let path = root.join("measure/service.json");
    let deadline = Instant::now() + Duration::from_secs(10);
    let registration: Registration = loop {
        if let Some(registration) = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
            break registration;
        }
        assert!(Instant::now() < deadline, "no registration");
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut owner = UnixStream::connect(&registration.socket).expect("connect");
    let own = json!({"token": registration.token, "request": {"op": "own", "instance_id": registration.instance_id}});
    let Value::Object(map) = own else { unreachable!() };
    owner.write_all(&encode_control(&map).expect("encode")).expect("own");
    assert!(matches!(read_frame(&mut owner), Ok(Some(Frame::Control(_)))));
    (child, registration, owner)
}

/// Connect, send one byte, read one byte, close: the floor under any one-request-per-connection protocol.
fn echo_round_trips(dir: &Path) -> Duration {
    let path = dir.join("echo.sock");
    let listener = UnixListener::bind(&path).expect("bind");
    let server = std::thread::spawn(move || {
        for _ in 0..PINGS {
            let (mut stream, _) = listener.accept().expect("accept");
            let mut byte = [0u8];
            stream.read_exact(&mut byte).expect("read");
            stream.write_all(&byte).expect("write");
        }
    });
    let started = Instant::now();
    for _ in 0..PINGS {
        let mut stream = UnixStream::connect(&path).expect("connect");
        stream.write_all(b"x").expect("write");
        let mut byte = [0u8];
        stream.read_exact(&mut byte).expect("read");
    }
    let elapsed = started.elapsed();
    server.join().expect("echo server");
    elapsed
}

/// The peak resident memory (`VmHWM`) of process `pid` so far, in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse::<u64>().ok()).expect("a number") * 1024
}

/// Sends `count` frames of `MAX_FRAME_BYTES` with a wrong token and an array of zeros at once, and returns how
/// much the daemon's peak memory grew.
fn unauthenticated_frames(registration: &Registration, pid: u32, count: usize) -> u64 {
    let mut payload = br#"{"token":"wrong","x":[0"#.to_vec();
    while payload.len() + 4 <= MAX_FRAME_BYTES {
        payload.extend_from_slice(b",0");
    }
    payload.extend_from_slice(b"]}");
    let mut frame = u32::try_from(payload.len()).expect("fits").to_be_bytes().to_vec();
    frame.extend_from_slice(&payload);
    let before = peak_memory(pid);
    let senders: Vec<_> = (0..count)
        .map(|_| {
            let mut stream = UnixStream::connect(&registration.socket).expect("connect");
            let frame = frame.clone();
            std::thread::spawn(move || {
                stream.write_all(&frame).expect("send");
                let mut answer = Vec::new();
                stream.read_to_end(&mut answer).expect("answer");
                assert!(String::from_utf8_lossy(&answer).contains("authentication failed"));
            })
        })
        .collect();
    for sender in senders {
        sender.join().expect("sender");
    }
    peak_memory(pid).saturating_sub(before)
}

fn main() {
    let root = tempfile::tempdir().expect("tempdir");
    let (mut child, registration, owner) = start(root.path());

    // First, while the daemon's peak memory is still its start-up figure.
    for count in [1, 6] {
        let grown = unauthenticated_frames(&registration, child.id(), count);
        let frames = (count * MAX_FRAME_BYTES) as f64;
        println!(
            "{count} unauthenticated 8 MiB frame(s) at once: peak memory +{:.1} MiB, {:.2}x their size",
            grown as f64 / f64::from(1 << 20),
            grown as f64 / frames
        );
    }

    let echo = echo_round_trips(root.path());
    let started = Instant::now();
    for _ in 0..PINGS {
        assert_eq!(request(&registration, json!({"op": "ping"}))["type"], "pong");
    }
    let pings = started.elapsed();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(PINGS);
    println!("ping round trip: {:.1} us; bare socket echo: {:.1} us; ratio {:.1}x", per(pings), per(echo), {
        pings.as_secs_f64() / echo.as_secs_f64()
    });

    let source = root.path().join("source");
    let status = Command::new("head")
        .args(["-c", &PIPE_BYTES.to_string(), "/dev/urandom"])
        .stdout(std::fs::File::create(&source).expect("source"))
        .status()
        .expect("head");
    assert!(status.success());
    let direct_out = root.path().join("direct");
    let started = Instant::now();
    let status = Command::new("cat").arg(&source).stdout(std::fs::File::create(&direct_out).unwrap()).status();
    assert!(status.expect("cat").success());
    let direct = started.elapsed();
    let out = root.path().join("piped");
    let started = Instant::now();
    let created = request(
        &registration,
        json!({"op": "create_pipe", "program": "/bin/cat", "args": [source], "cwd": "/", "env": {},
               "group_id": "measure", "output_path": out}),
    );
    let id = created["process"]["id"].as_u64().expect("created");
    let exited = request(&registration, json!({"op": "wait", "id": id}));
    let piped = started.elapsed();
    assert_eq!(exited["final_offset"], PIPE_BYTES);
    let mb = PIPE_BYTES as f64 / 1e6;
    println!(
        "{} MiB pipe process to `exited`: {:.0} ms ({:.0} MB/s); cat > file: {:.0} ms ({:.0} MB/s); ratio {:.2}x",
        PIPE_BYTES >> 20,
        piped.as_secs_f64() * 1e3,
        mb / piped.as_secs_f64(),
        direct.as_secs_f64() * 1e3,
        mb / direct.as_secs_f64(),
        piped.as_secs_f64() / direct.as_secs_f64()
    );

    drop(owner);
    let _ = child.wait();
}

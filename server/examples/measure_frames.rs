//! Measures the daemon's peak memory growth for frames of `MAX_FRAME_BYTES` with a wrong token (one, then six at
//! once) against the frames' own size, over its socket; then, in a fresh daemon each, its peak memory while 300
//! and 400 connections that never authenticate each send all but the last byte of such a frame (SPEC N10), and
//! whether an authenticated `ping` is answered meanwhile. Run: `just bench-frames` (it builds the release binary
//! first; `OPENCODE_PTY_DAEMON=PATH` measures another binary). Throughput and latency figures are the benchmark
//! harness's (`bench/`, `just bench`).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use opencode_pty_protocol::{Frame, MAX_FRAME_BYTES, Registration, encode_control, read_frame};
use serde_json::{Value, json};

mod support;
use support::start_owned;

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

/// How long each unauthenticated sender of [`held_partial_frames`] may take to write its frame.
const SEND_BOUND: Duration = Duration::from_secs(20);

/// The resident memory (`VmRSS`) of process `pid` now, in bytes; 0 once it is gone.
fn resident_memory(pid: u32) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return 0 };
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse::<u64>().ok()).unwrap_or(0) * 1024
}

/// In a fresh daemon, `count` connections send a header of `MAX_FRAME_BYTES` and all of its payload but the
/// last byte, and stay; once every sender is done (written, refused or out of time), prints the daemon's peak
/// memory and whether an authenticated `ping` is answered, then closes them all.
fn held_partial_frames(count: usize) {
    let root = tempfile::tempdir().expect("tempdir");
    let (mut child, registration, owner) = start_owned(root.path());
    let pid = child.pid();
    let mut frame = u32::try_from(MAX_FRAME_BYTES).expect("fits").to_be_bytes().to_vec();
    frame.extend_from_slice(br#"{"token":"wrong","x":""#);
    frame.resize(MAX_FRAME_BYTES + 4 - 1, b'a');
    let frame = std::sync::Arc::new(frame);
    let before = peak_memory(pid);
    let started = Instant::now();
    let senders: Vec<_> = (0..count)
        .map(|_| {
            let mut stream = UnixStream::connect(&registration.socket).expect("connect");
            stream.set_write_timeout(Some(SEND_BOUND)).expect("timeout");
            let frame = frame.clone();
            std::thread::spawn(move || {
                let sent = stream.write_all(&frame).is_ok();
                (stream, sent)
            })
        })
        .collect();
    let streams: Vec<(UnixStream, bool)> = senders.into_iter().map(|s| s.join().expect("sender")).collect();
    let took = started.elapsed();
    let alive = child.try_wait().expect("try_wait").is_none();
    let peak = peak_memory(pid);
    let rss = resident_memory(pid);
    let sent = streams.iter().filter(|(_, sent)| *sent).count();
    let ping = alive && {
        let mut stream = UnixStream::connect(&registration.socket).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        let Value::Object(map) = json!({"token": registration.token, "request": {"op": "ping"}}) else {
            unreachable!()
        };
        stream.write_all(&encode_control(&map).expect("encode")).is_ok()
            && matches!(read_frame(&mut stream), Ok(Some(Frame::Control(answer))) if answer["type"] == "pong")
    };
    println!(
        "{count} unauthenticated connections each holding an 8 MiB frame but its last byte: peak memory {:.1} MiB \
         (+{:.1} MiB, {:.1} MiB resident after {:.1} s), {sent} of them wrote it all, daemon alive: {alive}, \
         authenticated ping answered: {ping}",
        peak as f64 / f64::from(1 << 20),
        peak.saturating_sub(before) as f64 / f64::from(1 << 20),
        rss as f64 / f64::from(1 << 20),
        took.as_secs_f64(),
    );
    drop(streams);
    drop(owner);
    child.kill();
}

fn main() {
    let root = tempfile::tempdir().expect("tempdir");
    let (mut child, registration, owner) = start_owned(root.path());

    // While the daemon's peak memory is still its start-up figure.
    for count in [1, 6] {
        let grown = unauthenticated_frames(&registration, child.pid(), count);
        let frames = (count * MAX_FRAME_BYTES) as f64;
        println!(
            "{count} unauthenticated 8 MiB frame(s) at once: peak memory +{:.1} MiB, {:.2}x their size",
            grown as f64 / f64::from(1 << 20),
            grown as f64 / frames
        );
    }
    drop(owner);
    let _ = child.child_mut().wait();
    for count in [300, 400] {
        held_partial_frames(count);
    }
}

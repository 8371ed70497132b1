//! Measures an orderly stop with many processes: starts N pipe processes (`sleep`; N is the first argument, 1000 by
//! default), then times `shutdown` until the daemon has exited, and reports how often the record of process groups
//! (`service.groups`) was replaced meanwhile. Run: `cargo build --release -p opencode-pty --examples` and then
//! `target/release/examples/measure_stop 1000` (it runs the daemon binary next to its own directory; another one
//! with `OPENCODE_PTY_BIN`).
//!
//! `measure_stop busy PTYS PIPES` (issue 26): PTYS terminals and PIPES pipe processes all printing as fast as they
//! can, each terminal's shell with a background job too; after two seconds of that, `shutdown`: how long until
//! the daemon exited, its exit status (1: the watchdog ended it), how many of the children were still running
//! when it had exited, and whether it left its lock file or socket behind.

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use opencode_pty_client::launch::LaunchedDaemon;
use opencode_pty_protocol::Registration;
use serde_json::{Value, json};

mod support;
use support::{send, start_owned};

fn request(registration: &Registration, request: Value) -> Value {
    let mut stream = UnixStream::connect(&registration.socket).expect("connect");
    send(&mut stream, registration, request)
}

/// The inode of the record, which each atomic replacement changes; `None` when there is none.
fn record_inode(dir: &Path) -> Option<u64> {
    std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(dir.join("service.groups")).ok()?).into()
}

/// Whether process `pid` runs (a zombie does not).
fn runs(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| Some(stat[stat.rfind(')')? + 2..].chars().next()? != 'Z'))
        .unwrap_or(false)
}

/// Every process of the session `session` (a terminal's shell and its jobs).
fn session_members(session: u64) -> Vec<u64> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u64>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().is_some_and(|stat| {
                let fields: Vec<&str> = stat[stat.rfind(')').unwrap_or(0) + 1..].split_whitespace().collect();
                fields.get(3) == Some(&session.to_string().as_str()) && fields.first() != Some(&"Z")
            })
        })
        .collect()
}

fn main() {
    let first = std::env::args().nth(1);
    if first.as_deref() == Some("busy") {
        let number =
            |n: usize, default: usize| std::env::args().nth(n).map_or(default, |v| v.parse().expect("a number"));
        return busy(number(2, 150), number(3, 50));
    }
    let count: usize = first.map_or(1000, |n| n.parse().expect("a number of processes"));
    let (root, mut child, registration, mut owner) = start();
    let dir = root.path().join("measure");
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

/// The busy stop: see the module's documentation.
fn busy(ptys: usize, pipes: usize) {
    let (root, mut child, registration, mut owner) = start();
    let dir = root.path().join("measure");
    let out = root.path().join("out.log");
    let (mut children, mut refused) = (Vec::new(), Vec::new());
    for _ in 0..ptys {
        let created = request(
            &registration,
            json!({"op": "create_pty", "program": "sh", "args": ["-c", "sleep 1000 & yes"], "cwd": "/", "env": {},
                   "group_id": "measure", "title": "busy", "cols": 80, "rows": 24}),
        );
        match created["process"]["pid"].as_u64() {
            Some(pid) => children.push(pid),
            None => refused.push(created["message"].to_string()),
        }
    }
    let started_ptys = children.len();
    for _ in 0..pipes {
        let created = request(
            &registration,
            json!({"op": "create_pipe", "program": "/bin/sh", "args": ["-c", "while :; do echo busy; done"],
                   "cwd": "/", "env": {}, "group_id": "measure", "output_path": out, "metadata": {}}),
        );
        match created["process"]["pid"].as_u64() {
            Some(pid) => children.push(pid),
            None => refused.push(created["message"].to_string()),
        }
    }
    if !refused.is_empty() {
        println!("{} creates refused under the load (the first: {})", refused.len(), refused[0]);
    }
    // Every terminal's session: its shell, `yes` and the background `sleep`.
    let sessions = children[..started_ptys].to_vec();
    std::thread::sleep(Duration::from_secs(2));
    let members: Vec<u64> = sessions.iter().flat_map(|&session| session_members(session)).collect();
    let started = Instant::now();
    let answer = send(&mut owner, &registration, json!({"op": "shutdown"}));
    assert_eq!(answer["type"], "ok", "{answer}");
    let status = child.child_mut().wait().expect("wait");
    let took = started.elapsed();
    let left = children.iter().chain(&members).filter(|&&pid| runs(pid)).count();
    let lock = dir.join(opencode_pty_protocol::LOCK_FILE).exists();
    let socket = Path::new(&registration.socket).exists();
    println!(
        "{ptys} busy PTYs and {pipes} busy pipes ({} processes): shutdown to exit {:.0} ms, exit {status}, \
         {left} still running at the exit, lock file left: {lock}, socket left: {socket}",
        children.len() + members.len(),
        ms(took)
    );
    // Nothing of this run outlives it, whatever the daemon did.
    for pid in children.iter().chain(&members) {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).stderr(Stdio::null()).status();
    }
}

/// Starts a daemon in a new root, waits for its registration and claims it.
fn start() -> (tempfile::TempDir, LaunchedDaemon, Registration, UnixStream) {
    let root = tempfile::tempdir().expect("tempdir");
    let (child, registration, owner) = start_owned(root.path());
    (root, child, registration, owner)
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

//! Measures the terminal runtime: threads and resident memory for 100 idle `sh` terminals, and the time for a
//! 64 MiB `cat` to reach `exited` with one observer draining, against `cat` into /dev/null in the same run.
//! Run: `just bench-terminals` (`cargo run --release -p opencode-pty --example measure_terminals`).

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use opencode_pty::ProcessService;
use opencode_pty::{Event, ExistingController};
use opencode_pty::{PtySpec, TerminalConfig};
use opencode_pty_protocol::{Response, Role};

const IDLE_TERMINALS: usize = 100;
const CAT_BYTES: usize = 64 << 20;

fn status(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with(field)).expect(field);
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number")
}

fn spec(program: &str, args: &[&str]) -> PtySpec {
    PtySpec {
        program: program.into(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        cwd: "/".into(),
        env: HashMap::new(),
        group_id: "measure".into(),
        title: "measure".into(),
        cols: 80,
        rows: 24,
    }
}

fn main() {
    let service = ProcessService::new(TerminalConfig::default());
    let (threads, rss) = (status("Threads:"), status("VmRSS:"));
    let started = Instant::now();
    let ids: Vec<u64> = (0..IDLE_TERMINALS).map(|_| service.create_pty(spec("sh", &[])).expect("sh").id).collect();
    let created = started.elapsed();
    // Let every shell print its prompt, so the emulators hold a screen.
    for id in &ids {
        service.get(*id).expect("get");
    }
    let (threads_after, rss_after) = (status("Threads:"), status("VmRSS:"));
    println!("{IDLE_TERMINALS} idle sh terminals (created in {:.0} ms)", created.as_secs_f64() * 1e3);
    println!(
        "  threads: {threads} -> {threads_after} ({:.1} per terminal)",
        (threads_after - threads) as f64 / IDLE_TERMINALS as f64
    );
    println!(
        "  RSS: {rss} KiB -> {rss_after} KiB ({:.0} KiB per terminal)",
        (rss_after - rss) as f64 / IDLE_TERMINALS as f64
    );
    service.shutdown();

    let path = std::env::temp_dir().join(format!("opencode-pty-measure-{}", std::process::id()));
    let mut file = std::fs::File::create(&path).expect("temp file");
    let line: Vec<u8> = (0..79).map(|i| b'a' + (i % 26) as u8).chain([b'\n']).collect();
    for _ in 0..CAT_BYTES / line.len() {
        file.write_all(&line).expect("write");
    }
    drop(file);
    let file = path.to_str().expect("utf-8 path");

    let baseline = Instant::now();
    let status = std::process::Command::new("cat").arg(file).stdout(std::process::Stdio::null()).status();
    let baseline = baseline.elapsed();
    assert!(status.expect("cat").success());

    // A shut-down service starts nothing more: the cat gets a fresh one.
    let service = ProcessService::new(TerminalConfig::default());
    let started = Instant::now();
    let info = service.create_pty(spec("cat", &[file])).expect("cat");
    let observer = service
        .pty(info.id)
        .expect("handle")
        .subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse)
        .expect("subscribe");
    let (mut bytes, mut first) = (0usize, 0u64);
    loop {
        match observer.recv_timeout(Duration::from_secs(120)).expect("an event") {
            Event::Output(chunk) => bytes += chunk.bytes().len(),
            Event::Message(message) => match message.response() {
                Response::Attached { end_offset, available_offset, .. } => {
                    first = *available_offset;
                    bytes += (end_offset - available_offset) as usize;
                }
                Response::Exited { final_offset, .. } => {
                    assert_eq!(first + bytes as u64, *final_offset, "the observer saw every byte after its replay");
                    break;
                }
                _ => {}
            },
        }
    }
    let elapsed = started.elapsed();
    println!("64 MiB cat through a PTY to `exited`, one observer draining ({bytes} bytes with CRLF line ends):");
    println!(
        "  {:.0} ms ({:.1} MB/s); cat to /dev/null: {:.0} ms; ratio {:.1}x",
        elapsed.as_secs_f64() * 1e3,
        bytes as f64 / 1e6 / elapsed.as_secs_f64(),
        baseline.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() / baseline.as_secs_f64()
    );
    service.shutdown();
    let _ = std::fs::remove_file(&path);
}

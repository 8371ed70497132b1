//! A quiet terminal's memory given back, seen from outside (issue 31): the daemon's resident memory falls once a
//! terminal that printed a full history has been quiet for `--compress-after-ms`, a subscription held across the
//! compression goes on with contiguous output, and the screen reads as before.

use std::time::Instant;

use crate::support;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use opencode_pty_protocol::Frame;
use serde_json::json;
use support::poll::WAIT;
use support::{Daemon, anon_rss_kib as rss_kib, create_sh, recv_frame};

/// What a terminal printing 200,000 log lines keeps: a full history (10,000 lines) and a full replay ring.
const SCRIPT: &str = "seq -f 'log line %g: the daemon keeps this terminal quiet now' 1 200000; echo THE-END; exec cat";

#[test]
fn a_terminal_quiet_for_the_delay_gives_its_memory_back_and_its_subscription_goes_on() {
    // Long enough that the peak is sampled before compression starts, however late this test reads.
    let daemon = Daemon::start_with(&["--compress-after-ms", "3000"]);
    let _owner = daemon.own();
    let baseline = rss_kib(daemon.pid());
    let created = daemon.request(create_sh(SCRIPT));
    let id = created["process"]["id"].as_u64().unwrap_or_else(|| panic!("created: {created}"));
    let (mut stream, attached) = daemon.subscribe(id, "observer", "observer");
    assert_eq!(attached["type"], "attached", "{attached}");
    let mut next = attached["end_offset"].as_u64().unwrap_or_else(|| panic!("attached: {attached}"));

    // Reads the subscription until `marker`, checking that every output frame starts where the last ended.
    let mut follow = |marker: &str, peak: &mut u64| {
        let deadline = Instant::now() + WAIT * 3;
        let mut tail = Vec::new();
        while !String::from_utf8_lossy(&tail).contains(marker) {
            assert!(Instant::now() < deadline, "no {marker} within {:?}", WAIT * 3);
            *peak = (*peak).max(rss_kib(daemon.pid()));
            match recv_frame(&mut stream) {
                Some(Frame::Output { start, bytes }) => {
                    assert_eq!(start, next, "output is contiguous");
                    next = start + bytes.len() as u64;
                    tail.extend_from_slice(&bytes);
                    let keep = tail.len().saturating_sub(64);
                    tail.drain(..keep);
                }
                Some(Frame::Control(_)) => {}
                None => panic!("the subscription ended before {marker}"),
            }
        }
    };
    let mut peak = 0;
    follow("THE-END", &mut peak);
    peak = peak.max(rss_kib(daemon.pid()));
    let grown = peak.saturating_sub(baseline);
    assert!(grown > 6 * 1024, "a full terminal holds several MiB: {baseline} -> {peak} KiB");

    // Quiet now: within the delay and a pass, at least three quarters of what it grew is given back (the
    // emulator's history and the ring, both log text, compress to a few per cent).
    let given_back = support::eventually("the quiet terminal's memory is given back", || {
        let now = rss_kib(daemon.pid());
        (now < peak - grown * 3 / 4).then_some(now)
    });
    eprintln!("daemon anonymous RSS: {baseline} KiB idle, {peak} KiB full, {given_back} KiB quiet");

    // The subscription held across it goes on, contiguous, and the screen shows the new output.
    let written = daemon.request(json!({"op": "write", "id": id, "attachment_id": null,
                                        "data_base64": BASE64.encode("after-the-quiet\n")}));
    assert_eq!(written["type"], "ok", "{written}");
    follow("after-the-quiet", &mut peak);
    let snapshot = daemon.request(json!({"op": "snapshot", "id": id}));
    let text = snapshot["text"].as_str().unwrap_or_else(|| panic!("snapshot: {snapshot}"));
    assert!(text.contains("after-the-quiet") && text.contains("log line 200000"), "{text}");
    let rows = daemon.request(json!({"op": "read_rows", "id": id, "rows": 10_000}));
    let lines = rows["lines"].as_array().unwrap_or_else(|| panic!("rows: {rows}"));
    assert!(lines.len() > 9_000, "the history is all there: {} lines", lines.len());
    daemon.request(json!({"op": "terminate", "id": id}));
}

/// Four terminals of log text, quiet and compressed, attached again and again (a replay from their first byte
/// and a snapshot each time, as a client restoring them does): once quiet again, the daemon's memory comes
/// back down to where it was, every time (the reads' large buffers leave the process when freed,
/// `vt/src/allocator.rs`, and the terminals are compressed again).
#[test]
fn attaching_again_and_again_to_quiet_terminals_leaves_the_memory_where_it_was() {
    let daemon = Daemon::start_with(&["--compress-after-ms", "300"]);
    let _owner = daemon.own();
    let line = |n: u64| format!("line {n}: some words of a log line, with numbers 12345\r\n").len() as u64;
    let printed: u64 = (1..=60_000).map(line).sum();
    let script = "seq -f 'line %g: some words of a log line, with numbers 12345' 1 60000; exec sleep 600";
    let ids: Vec<u64> = (0..4)
        .map(|_| {
            let created = daemon.request(create_sh(script));
            created["process"]["id"].as_u64().unwrap_or_else(|| panic!("created: {created}"))
        })
        .collect();
    for &id in &ids {
        support::eventually("the terminal prints everything", || {
            let got = daemon.request(json!({"op": "get", "id": id}));
            (got["process"]["output_tail"].as_u64() == Some(printed)).then_some(())
        });
    }
    // Quiet: the four compressed, the lowest the memory gets.
    let settled = || {
        let mut last = rss_kib(daemon.pid());
        support::eventually("the memory settles", || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            let now = rss_kib(daemon.pid());
            let settled = now + 64 >= last;
            last = now.min(last);
            settled.then_some(now)
        })
    };
    let quiet = settled();
    for round in 0..4 {
        for &id in &ids {
            let (stream, attached) = daemon.subscribe(id, &format!("again-{round}"), "observer");
            assert_eq!(attached["type"], "attached", "{attached}");
            let snapshot = daemon.request(json!({"op": "snapshot", "id": id}));
            assert_eq!(snapshot["type"], "snapshot", "{snapshot}");
            drop(stream);
        }
        let bound = quiet + 4 * 1024;
        let again = support::eventually("the memory comes back down", || {
            let now = rss_kib(daemon.pid());
            (now <= bound).then_some(now)
        });
        eprintln!("round {round}: quiet {quiet} KiB, quiet again {again} KiB");
    }
    for id in ids {
        daemon.request(json!({"op": "terminate", "id": id}));
    }
}

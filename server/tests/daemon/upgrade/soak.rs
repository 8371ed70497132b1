//! A hundred upgrades in a row with twenty terminals open, through the real binary: the daemon's descriptors,
//! threads and resident memory stay flat (printed with `--nocapture`).

use std::time::Instant;

use serde_json::json;

use super::{create, pids, private_copy, upgrade};
use crate::support::{self, Daemon};

/// The daemon's open descriptors, threads and resident memory (KiB).
fn footprint(pid: u32) -> (usize, usize, u64) {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        let line = status.lines().find(|line| line.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap()
    };
    (fds, field("Threads:") as usize, field("VmRSS:"))
}

/// Descriptors the daemon may hold for a moment beyond its steady state (a connection closing, a screen file
/// whose emulator is still being rebuilt).
const TRANSIENT_DESCRIPTORS: usize = 8;

/// How many upgrades the soak makes.
const SOAK_UPGRADES: usize = 100;

/// (Its figures: `cargo test -p opencode-pty --test daemon upgrade::soak -- --nocapture`.)
#[test]
fn soak_a_hundred_upgrades_with_twenty_terminals_leak_nothing() {
    let daemon = Daemon::start();
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let copy = private_copy(dir.path());
    let terminals: Vec<_> = (0..20).map(|n| create(&daemon, &format!("echo terminal {n}; exec sleep 600"))).collect();
    let pids_before = pids(&daemon);
    let mut figures = Vec::new();
    let since = Instant::now();
    for round in 1..=SOAK_UPGRADES {
        assert_eq!(upgrade(&daemon, &mut owner, Some(&copy)), json!({"type": "ok"}), "upgrade {round}");
        // Every connection of the previous image is gone once a request is answered.
        assert_eq!(daemon.request(json!({"op": "ping"}))["type"], "pong");
        if [1, 10, 25, 50, 75, SOAK_UPGRADES].contains(&round) {
            figures.push((round, footprint(daemon.pid())));
        }
    }
    let per_upgrade = since.elapsed() / SOAK_UPGRADES as u32;
    for (round, (fds, threads, rss)) in &figures {
        println!("after upgrade {round:>3}: {fds} descriptors, {threads} threads, {rss} KiB resident");
    }
    println!("{SOAK_UPGRADES} upgrades with {} terminals, {per_upgrade:?} each", terminals.len());
    assert_eq!(pids(&daemon), pids_before, "every terminal, with the same child");
    // A connection just answered may still be closing, and restored emulators may still be rebuilding (each
    // holds its screen file until then), and a loaded machine may not have started every pooled thread by the
    // first figures: the footprint settles to at most the larger of the first two figures, give or take a few
    // descriptors, where a leak of one descriptor per upgrade would show as ninety.
    let fds = figures[0].1.0.max(figures[1].1.0) + TRANSIENT_DESCRIPTORS;
    let threads = figures[0].1.1.max(figures[1].1.1);
    let rss = figures[0].1.2.max(figures[1].1.2);
    let settled = support::poll_for(std::time::Duration::from_secs(5), || {
        let (now_fds, now_threads, now_rss) = footprint(daemon.pid());
        (now_fds <= fds && now_threads <= threads + 4 && now_rss < rss + rss / 4).then_some(())
    });
    assert!(settled.is_some(), "the footprint grew: {figures:?}, now {:?}", footprint(daemon.pid()));
}

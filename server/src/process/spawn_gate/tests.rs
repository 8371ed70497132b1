//! The spawn gate on gates of the tests' own (the process's gate is the daemon's): a spawn waits while the
//! gate is closed, the close waits for a spawn under way, and a running check is killed and waited for until
//! its thread reaped it.

use std::os::unix::process::CommandExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::process::Command;
use std::time::Duration;

use crossbeam_channel::bounded;

use super::*;

/// The longest any step waits.
const BOUND: Duration = Duration::from_secs(30);

/// A short wait, for what must not happen (a negative can only be checked for a while).
const NOT_YET: Duration = Duration::from_millis(300);

fn gate() -> &'static SpawnGate {
    Box::leak(Box::new(SpawnGate::new()))
}

#[test]
fn a_spawn_waits_while_the_gate_is_closed() {
    let gate = gate();
    let closed = gate.close();
    let (passed, got) = bounded(1);
    let spawner = std::thread::spawn(move || {
        let pass = gate.pass();
        let _ = passed.send(());
        drop(pass);
    });
    assert!(got.recv_timeout(NOT_YET).is_err(), "a pass was given while the gate was closed");
    drop(closed);
    got.recv_timeout(BOUND).expect("the pass, once the gate opened");
    spawner.join().unwrap();
}

#[test]
fn the_close_waits_for_a_spawn_under_way() {
    let gate = gate();
    let pass = gate.pass();
    let (closed_tx, closed) = bounded(1);
    let closer = std::thread::spawn(move || {
        let closed = gate.close();
        let _ = closed_tx.send(());
        drop(closed);
    });
    assert!(closed.recv_timeout(NOT_YET).is_err(), "the gate closed during a spawn");
    drop(pass);
    closed.recv_timeout(BOUND).expect("the close, once the spawn returned");
    closer.join().unwrap();
}

#[test]
fn a_running_check_is_killed_and_reaped_before_the_gate_closes() {
    let gate = gate();
    let pass = gate.pass();
    let mut child = Command::new("sleep").arg("600").process_group(0).spawn().expect("sleep");
    let watched = pass.watch(child.id());
    // The check's own thread reaps it, as the preflight's does.
    let reaper = std::thread::spawn(move || {
        let status = child.wait().expect("reaped");
        let ended = watched.ended_by_upgrade();
        drop(watched);
        (status, ended)
    });
    let closed = gate.close();
    // Returned: the check was reaped (its thread let go of it after the wait).
    let (status, ended) = reaper.join().unwrap();
    assert_eq!(status.signal(), Some(9), "killed: {status}");
    assert!(ended, "the check knows the upgrade ended it");
    drop(closed);
    // Open again: a spawn goes on.
    drop(gate.pass());
}

//! Terminate and shutdown join every thread of a terminal (one test in its binary, so thread counts are
//! stable), and every child is watched by the daemon's one wait thread.

mod support;

use opencode_pty::ExistingController;
use opencode_pty_protocol::Role;
use support::{Seen, read_until, service, sh};

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").expect("/proc/self/task").count()
}

/// The names of this process's threads (the kernel keeps the first 15 bytes).
fn thread_names() -> Vec<String> {
    let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .collect()
}

/// One test, so no other test thread of this binary comes or goes while threads are counted.
#[test]
fn terminate_and_shutdown_join_every_thread() {
    terminate_joins_all_three_threads_of_each_terminal_and_one_wait_thread_serves_all();
    shutdown_joins_every_thread_of_every_terminal_and_their_children_are_gone();
}

fn terminate_joins_all_three_threads_of_each_terminal_and_one_wait_thread_serves_all() {
    let service = service();
    let first = threads();
    let warm = service.create_pty(sh("sleep 30")).expect("create").id;
    assert_eq!(threads(), first + 3 + 1, "actor, reader and writer, and the wait thread the first child starts");
    service.terminate(warm).expect("terminate");
    support::eventually("terminate to join the terminal's threads", || (threads() == first + 1).then_some(()));
    let before = threads();
    let ids: Vec<u64> = (0..3).map(|_| service.create_pty(sh("sleep 30")).expect("create").id).collect();
    assert_eq!(threads(), before + 3 * 3, "actor, reader and writer per terminal; the wait thread is shared");
    // Named opencode-pty-<role>-<id>; the kernel shows 15 bytes, enough to tell the roles apart. A new thread
    // names itself once it runs, so the names are polled (within the usual bound) rather than read once.
    let roles = ["opencode-pty-ac", "opencode-pty-re", "opencode-pty-wr"];
    let named = |names: &[String], role: &str| names.iter().filter(|n| n.as_str() == role).count();
    support::eventually("every thread to name itself", || {
        let names = thread_names();
        (roles.iter().all(|role| named(&names, role) == 3) && named(&names, "opencode-pty-wa") == 1).then_some(())
    });
    // A terminal whose child already exited is joined the same way.
    let exited = service.create_pty(sh("exit 0")).expect("create");
    let subscription =
        service.pty(exited.id).unwrap().subscribe(0, "a".into(), Role::Observer, ExistingController::Refuse).unwrap();
    read_until(&subscription, &mut Seen::default(), |s| s.exited().is_some());
    drop(subscription);
    for id in ids {
        service.terminate(id).expect("terminate");
    }
    service.terminate(exited.id).expect("terminate");
    // A joined thread can linger in /proc for a moment after `join` returns (the kernel wakes the joiner
    // before it removes the task), so the count is polled, within the usual bound.
    support::eventually("terminate to join every thread", || (threads() == before).then_some(()));
}

fn shutdown_joins_every_thread_of_every_terminal_and_their_children_are_gone() {
    let before = threads();
    let service = service();
    let pids: Vec<u32> = (0..3).map(|_| service.create_pty(sh("sleep 30")).expect("create").pid.unwrap()).collect();
    assert_eq!(threads(), before + 3 * 3);
    service.shutdown();
    support::eventually("shutdown to join every thread", || (threads() == before).then_some(()));
    for pid in pids {
        assert!(!support::process_exists(pid), "child {pid} was reaped");
    }
    assert!(service.create_pty(sh("true")).is_err(), "nothing starts after shutdown");
}

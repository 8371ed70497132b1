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
    terminate_joins_every_thread_of_each_terminal_and_one_wait_thread_serves_all();
    the_writer_starts_only_once_input_must_wait_and_is_joined_with_the_rest();
    shutdown_joins_every_thread_of_every_terminal_and_their_children_are_gone();
}

fn terminate_joins_every_thread_of_each_terminal_and_one_wait_thread_serves_all() {
    let service = service();
    let first = threads();
    let warm = service.create_pty(sh("sleep 30")).expect("create").id;
    assert_eq!(threads(), first + 2 + 1, "actor and reader, and the wait thread the first child starts");
    service.terminate(warm).expect("terminate");
    support::eventually("terminate to join the terminal's threads", || (threads() == first + 1).then_some(()));
    let before = threads();
    let ids: Vec<u64> = (0..3).map(|_| service.create_pty(sh("sleep 30")).expect("create").id).collect();
    assert_eq!(threads(), before + 3 * 2, "actor and reader per terminal (no writer yet); one wait thread");
    // Named opencode-pty-<role>-<id>; the kernel shows 15 bytes, enough to tell the roles apart. A new thread
    // names itself once it runs, so the names are polled (within the usual bound) rather than read once.
    let roles = ["opencode-pty-ac", "opencode-pty-re"];
    support::eventually("every thread to name itself", || {
        let names = thread_names();
        (roles.iter().all(|role| named(&names, role) == 3) && named(&names, "opencode-pty-wa") == 1).then_some(())
    });
    assert_eq!(named(&thread_names(), "opencode-pty-wr"), 0, "no writer runs before input has to wait");
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

/// How many of `names` are `role`'s.
fn named(names: &[String], role: &str) -> usize {
    names.iter().filter(|n| n.as_str() == role).count()
}

/// A terminal's writer thread starts the first time the PTY does not take input at once (the child does not
/// read), not before: input the PTY takes is written by the actor itself. Once started it is one of the
/// terminal's threads, joined with them.
fn the_writer_starts_only_once_input_must_wait_and_is_joined_with_the_rest() {
    let service = service();
    // Raw mode, so the line discipline passes bytes on without a line's limit, and a child that never reads.
    let info = service.create_pty(sh("stty raw -echo; printf ready; exec sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let controller = handle.subscribe(0, "c".into(), Role::Controller, ExistingController::Refuse).unwrap();
    read_until(&controller, &mut Seen::default(), |s| s.text().contains("ready"));
    let before = threads();
    // The PTY takes a keystroke at once: written by the actor, no thread started (the answer comes after the
    // actor queued it, so a writer would exist by then).
    handle.write(Some("c".into()), b"x".to_vec()).expect("input");
    assert_eq!(threads(), before, "a keystroke the PTY takes starts no writer");
    assert_eq!(named(&thread_names(), "opencode-pty-wr"), 0);
    // 256 KiB the child never reads: the PTY's input buffer (a few KiB) fills, and the rest waits for a writer.
    for _ in 0..32 {
        handle.write(Some("c".into()), vec![b'y'; 8 * 1024]).expect("input");
    }
    assert_eq!(threads(), before + 1, "the writer started once input had to wait");
    support::eventually("the writer to name itself", || (named(&thread_names(), "opencode-pty-wr") == 1).then_some(()));
    drop(controller);
    service.terminate(info.id).expect("terminate");
    support::eventually("terminate to join the writer with the rest", || {
        (threads() == before - 2 && named(&thread_names(), "opencode-pty-wr") == 0).then_some(())
    });
}

fn shutdown_joins_every_thread_of_every_terminal_and_their_children_are_gone() {
    let before = threads();
    let service = service();
    let pids: Vec<u32> = (0..3).map(|_| service.create_pty(sh("sleep 30")).expect("create").pid.unwrap()).collect();
    assert_eq!(threads(), before + 3 * 2);
    service.shutdown();
    support::eventually("shutdown to join every thread", || (threads() == before).then_some(()));
    for pid in pids {
        assert!(!support::process_exists(pid), "child {pid} was reaped");
    }
    assert!(service.create_pty(sh("true")).is_err(), "nothing starts after shutdown");
}

//! Terminate joins every thread of a terminal (the only test in its binary, so thread counts are stable).

mod support;

use opencode_pty_protocol::Role;
use support::{Seen, read_until, service, sh};

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").expect("/proc/self/task").count()
}

#[test]
fn terminate_joins_all_four_threads_of_each_terminal() {
    let service = service();
    let before = threads();
    let ids: Vec<u64> = (0..3).map(|_| service.create_pty(sh("sleep 30")).expect("create").id).collect();
    assert_eq!(threads(), before + 3 * 4, "actor, reader, writer and wait thread per terminal");
    // A terminal whose child already exited is joined the same way.
    let exited = service.create_pty(sh("exit 0")).expect("create");
    let subscription = service.get_handle(exited.id).unwrap().subscribe(0, "a".into(), Role::Observer, false).unwrap();
    read_until(&subscription, &mut Seen::default(), |s| s.exited().is_some());
    drop(subscription);
    for id in ids {
        service.terminate(id).expect("terminate");
    }
    service.terminate(exited.id).expect("terminate");
    // A joined thread can linger in /proc for a moment after `join` returns (the kernel wakes the joiner
    // before it removes the task), so the count is polled, within the usual bound.
    support::eventually(|| (threads() == before).then_some(()));
}

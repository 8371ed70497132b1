//! Nothing a daemon started outlives it (SPEC X4–X8, L6): against the real binary, a daemon killed with SIGKILL
//! leaves no process of its PTYs or pipe processes behind, whether its guardian ends them or (with the guardian
//! killed too) the next daemon in that runtime directory or a sibling's sweep does; a record whose start time
//! does not match is never signalled; whoever acted on a dead daemon's record removes it, so nobody acts on it
//! again; and the guardian itself holds nothing of the daemon's and goes away with an orderly stop.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use opencode_pty::inspect::parse_stat;
use opencode_pty::inspect::proc_stat;
use opencode_pty::inspect::{GROUPS_FILE, Group, RecordFile};
use opencode_pty_testkit::Sleeper;
use serde_json::{Value, json};
use support::{Daemon, WAIT, create_sh, eventually};

/// The pipe process: a shell whose two children stay in its group.
const PIPE_SCRIPT: &str = "sleep 1014 & sleep 1015; wait";
/// The PTY child: it ignores SIGHUP, SIGTERM and SIGINT, and so do its children.
const PTY_SCRIPT: &str = "trap '' HUP TERM INT; sleep 1016 & sleep 1017; wait";

/// Processes seen running (pid and start time): SIGKILLed on drop if they still are, so nothing outlives a
/// failed test, and never a process that merely reuses a pid.
#[derive(Default)]
pub(crate) struct Leftovers(Vec<(u32, u64)>);

impl Leftovers {
    /// Remembers every current member of group `pgid`, waiting (bounded) until there are `count`.
    fn group(&mut self, pgid: u32, count: usize) -> Vec<(u32, u64)> {
        let members = eventually(&format!("{count} processes in group {pgid}"), || {
            let members = members_of(pgid);
            (members.len() == count).then_some(members)
        });
        self.0.extend(&members);
        members
    }

    /// Whether every remembered process is gone (a zombie is gone: it runs nothing and holds nothing).
    fn all_gone(&self) -> bool {
        self.0.iter().all(|&(pid, start)| !running(pid, start))
    }

    fn none_gone(&self) -> bool {
        self.0.iter().all(|&(pid, start)| running(pid, start))
    }
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        for &(pid, start) in &self.0 {
            if running(pid, start) {
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
        }
    }
}

/// Whether the process `pid` that started at `start` is still there and not a zombie.
fn running(pid: u32, start: u64) -> bool {
    proc_stat(pid).is_some_and(|stat| stat.start == start && stat.state != 'Z')
}

/// The processes (pid, start time) of group `pgid`, zombies left out.
fn members_of(pgid: u32) -> Vec<(u32, u64)> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let Ok(raw) = std::fs::read(entry.path().join("stat")) else { continue };
        let line = String::from_utf8_lossy(&raw);
        if let Some(stat) = parse_stat(&line)
            && stat.pgrp == pgid
            && stat.state != 'Z'
        {
            members.push((pid, stat.start));
        }
    }
    members
}

/// The guardian of the daemon `daemon_pid`: its child running `guard`.
fn guardian_of(daemon_pid: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
        let stat = parse_stat(&std::fs::read_to_string(entry.path().join("stat")).ok()?)?;
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        let is_guard = cmdline.split(|&b| b == 0).nth(1) == Some(b"guard");
        (stat.ppid == daemon_pid && is_guard).then_some(pid)
    })
}

pub(crate) fn pipe_request(out: &Path, script: &str) -> Value {
    json!({"op": "create_pipe", "program": "/bin/sh", "args": ["-c", script], "cwd": "/",
           "env": {"PATH": "/usr/bin:/bin"}, "group_id": "g", "output_path": out.to_str().unwrap(), "metadata": {}})
}

/// The pid of the process a create request started.
pub(crate) fn created_pid(response: &Value) -> u32 {
    response["process"]["pid"].as_u64().unwrap_or_else(|| panic!("not a process: {response}")) as u32
}

/// Starts the pipe process and PTY in `daemon` and waits until all six processes run.
pub(crate) fn start_children(daemon: &Daemon, out: &Path, leftovers: &mut Leftovers) {
    let pipe = created_pid(&daemon.request(pipe_request(out, PIPE_SCRIPT)));
    let pty = created_pid(&daemon.request(create_sh(PTY_SCRIPT)));
    leftovers.group(pipe, 3);
    leftovers.group(pty, 3);
}

/// SIGKILLs the daemon and reaps it.
pub(crate) fn kill_daemon(daemon: &mut Daemon) {
    daemon.child_mut().kill().expect("SIGKILL the daemon");
    daemon.child_mut().wait().expect("reap the daemon");
}

/// Polls until every remembered process is gone, and returns how long that took.
pub(crate) fn wait_all_gone(leftovers: &Leftovers, what: &str) -> Duration {
    let since = Instant::now();
    eventually(what, || leftovers.all_gone().then_some(()));
    since.elapsed()
}

#[test]
fn the_guardian_ends_everything_when_the_daemon_is_killed() {
    let out = tempfile::tempdir().unwrap();
    let mut leftovers = Leftovers::default();
    let mut daemon = Daemon::start();
    let _owner = daemon.own();
    start_children(&daemon, &out.path().join("out.log"), &mut leftovers);
    let guardian = guardian_of(daemon.pid()).expect("the daemon has a guardian");

    kill_daemon(&mut daemon);
    let took = wait_all_gone(&leftovers, "every child and descendant to be gone after kill -9");
    eprintln!("gone {took:?} after the daemon's death");
    eventually("the guardian to exit", || (!Path::new(&format!("/proc/{guardian}")).exists()).then_some(()));
    // Its last act: the record is gone, so neither the next daemon here nor a sweep acts on it again.
    assert!(!daemon.dir().join(GROUPS_FILE).exists(), "the guardian left the dead daemon's record behind");
}

#[test]
fn the_next_daemon_ends_what_a_killed_daemon_and_guardian_left() {
    let out = tempfile::tempdir().unwrap();
    let mut leftovers = Leftovers::default();
    let mut daemon = Daemon::start();
    let _owner = daemon.own();
    start_children(&daemon, &out.path().join("out.log"), &mut leftovers);
    let guardian = guardian_of(daemon.pid()).expect("the daemon has a guardian");
    let guardian_pid = Pid::from_raw(guardian as i32);

    // The daemon, stopped, cannot start a new guardian; the guardian dies first, then the daemon. (A stopped
    // guardian would not do: once the daemon is gone its group is orphaned, and the kernel resumes it.)
    kill(Pid::from_raw(daemon.pid() as i32), Signal::SIGSTOP).unwrap();
    kill(guardian_pid, Signal::SIGKILL).unwrap();
    eventually("the guardian to die", || (!running_any(guardian)).then_some(()));
    kill_daemon(&mut daemon);
    assert!(
        leftovers.none_gone(),
        "with daemon and guardian dead, nothing ended the children yet: {:?}",
        leftovers
            .0
            .iter()
            .map(|&(pid, _)| (pid, proc_stat(pid).map(|stat| (stat.state, stat.start))))
            .collect::<Vec<_>>()
    );

    // A new daemon with the same name, in the same directory; the stale registration goes first, so the
    // launcher waits for the new one.
    let root = std::mem::replace(&mut daemon.root, tempfile::tempdir().unwrap());
    let name = daemon.name.clone();
    drop(daemon);
    std::fs::remove_file(root.path().join(&name).join("service.json")).unwrap();
    let launched = Instant::now();
    let next = Daemon::start_in(root, &name, &[]);
    wait_all_gone(&leftovers, "the next daemon to end what the dead one left");
    eprintln!("gone {:?} after the next daemon was launched", launched.elapsed());
    // The new daemon ends the dead one's groups, then replaces the record with its own: wait for that second
    // step too (the children can be gone before it).
    let record: RecordFile = eventually("the new daemon to write its own record", || {
        let record: RecordFile = serde_json::from_slice(&std::fs::read(next.dir().join(GROUPS_FILE)).ok()?).ok()?;
        (record.instance_id == next.registration.instance_id).then_some(record)
    });
    assert!(record.groups.is_empty());
}

/// The descriptors of process `pid` and what each refers to.
fn fd_targets(pid: u32) -> Vec<(String, String)> {
    let entries = std::fs::read_dir(format!("/proc/{pid}/fd")).expect("the descriptors");
    entries
        .flatten()
        .filter_map(|fd| Some((fd.file_name().into_string().ok()?, std::fs::read_link(fd.path()).ok()?)))
        .map(|(fd, target)| (fd, target.to_string_lossy().into_owned()))
        .collect()
}

/// Whether `pid` exists and is not a zombie.
fn running_any(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|stat| stat.state != 'Z')
}

/// The group a [`Sleeper`] leads, as a record lists it.
fn group(sleeper: &Sleeper) -> Group {
    let stat = proc_stat(sleeper.pid()).unwrap();
    Group { pgid: sleeper.pid(), start: stat.start, session: stat.session }
}

/// Waits (bounded, on its end) for `sleeper` to be killed by someone else.
fn wait_killed(sleeper: &mut Sleeper, what: &str) {
    assert!(sleeper.wait_exit(WAIT).is_some(), "{what}: not within {WAIT:?}");
}

/// A record of a dead daemon listing `groups`.
fn dead_record(groups: Vec<Group>) -> Vec<u8> {
    let mut gone = Command::new("true").spawn().unwrap();
    let daemon_pid = gone.id();
    gone.wait().unwrap();
    let record = RecordFile { instance_id: "0".repeat(32), daemon_pid, daemon_start: 1, groups };
    serde_json::to_vec(&record).unwrap()
}

#[test]
fn a_recorded_group_whose_start_time_does_not_match_is_never_signalled() {
    let (mut recycled, mut control) = (Sleeper::start(), Sleeper::start());
    // Its pid, with the start time of an earlier process that had it: a pid reused since the record was written.
    let wrong = Group { start: group(&recycled).start - 1, ..group(&recycled) };
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("test");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join(GROUPS_FILE), dead_record(vec![wrong, group(&control)])).unwrap();

    let daemon = Daemon::start_in(root, "test", &[]);
    wait_killed(&mut control, "the matching group to be ended");
    // The leftovers are handled before the new record replaces the old one.
    let record: RecordFile = serde_json::from_slice(&std::fs::read(daemon.dir().join(GROUPS_FILE)).unwrap()).unwrap();
    assert_eq!(record.instance_id, daemon.registration.instance_id);
    assert!(recycled.running(), "a process whose start time does not match was signalled");
}

#[test]
fn the_sweep_ends_what_a_stale_siblings_record_lists() {
    let mut sleeper = Sleeper::start();
    let root = tempfile::tempdir().unwrap();
    let stale = root.path().join("stale");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("service.lock"), "").unwrap();
    std::fs::write(stale.join(GROUPS_FILE), dead_record(vec![group(&sleeper)])).unwrap();
    // Old enough to be swept, so the directory goes too once its processes are ended.
    let old = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::open(&stale).unwrap().set_modified(old).unwrap();

    let _daemon = Daemon::start_in(root, "sweeper", &[]);
    wait_killed(&mut sleeper, "the sweep to end the stale record's group");
    eventually("the stale directory to be removed", || (!stale.exists()).then_some(()));
}

#[test]
fn the_sweep_ends_what_a_fresh_siblings_record_lists_and_removes_the_record() {
    let mut sleeper = Sleeper::start();
    let root = tempfile::tempdir().unwrap();
    let fresh = root.path().join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    std::fs::write(fresh.join("service.lock"), "").unwrap();
    std::fs::write(fresh.join(GROUPS_FILE), dead_record(vec![group(&sleeper)])).unwrap();

    let _daemon = Daemon::start_in(root, "sweeper", &[]);
    wait_killed(&mut sleeper, "the sweep to end the fresh record's group");
    // Removed after the groups are ended, so a later sweep or daemon start signals nothing.
    eventually("the record to be removed", || (!fresh.join(GROUPS_FILE).exists()).then_some(()));
    assert!(fresh.join("service.lock").exists(), "a fresh directory is kept");
}

#[test]
fn the_guardian_holds_nothing_of_the_daemon_and_leaves_with_an_orderly_stop() {
    let mut daemon = Daemon::start();
    let pid = daemon.pid();
    // The registration is written just before the guardian starts.
    let guardian = eventually("the guardian", || guardian_of(pid));
    // Beyond its stdin, it holds only what the daemon itself inherited from its launcher (here: this test):
    // nothing the daemon opened, no socket, lock, terminal or output pipe.
    let inherited: Vec<_> = fd_targets(std::process::id()).into_iter().map(|(_, target)| target).collect();
    let held = fd_targets(guardian);
    assert!(held.iter().any(|(fd, target)| fd == "0" && target.starts_with("pipe:") && !inherited.contains(target)));
    for (fd, target) in &held {
        assert!(
            fd == "0" || target == "/dev/null" || inherited.contains(target),
            "the guardian holds {fd} -> {target}"
        );
    }
    let group = |pid: u32| parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap()).unwrap().pgrp;
    assert_eq!(group(guardian), guardian, "it leads its own process group");
    assert_ne!(group(guardian), group(pid));
    // SIGHUP and SIGINT blocked (a terminal's), SIGTERM not (the daemon's mask does not carry over).
    // It sets its mask as it starts: wait for that, not for a particular value.
    let blocked = || {
        let status = std::fs::read_to_string(format!("/proc/{guardian}/status")).ok()?;
        let mask = status.lines().find_map(|line| line.strip_prefix("SigBlk:"))?.trim().to_owned();
        u64::from_str_radix(&mask, 16).ok()
    };
    let wanted = 1 << (Signal::SIGHUP as u64 - 1) | 1 << (Signal::SIGINT as u64 - 1);
    eventually("the guardian to block SIGHUP and SIGINT only", || (blocked() == Some(wanted)).then_some(()));

    kill(Pid::from_raw(pid as i32), Signal::SIGTERM).unwrap();
    assert!(daemon.wait_exit().success());
    // The daemon reaped it before exiting: it is not left as anyone's zombie.
    assert!(!Path::new(&format!("/proc/{guardian}")).exists(), "the guardian outlived an orderly stop");
    assert!(!daemon.dir().exists(), "the record went with the rest of the runtime directory");
}

#[test]
fn a_guardian_that_dies_is_replaced() {
    let out = tempfile::tempdir().unwrap();
    let mut leftovers = Leftovers::default();
    let mut daemon = Daemon::start();
    let _owner = daemon.own();
    start_children(&daemon, &out.path().join("out.log"), &mut leftovers);
    let first = guardian_of(daemon.pid()).expect("the daemon has a guardian");
    kill(Pid::from_raw(first as i32), Signal::SIGKILL).unwrap();
    let second = eventually("a new guardian", || guardian_of(daemon.pid()).filter(|&pid| pid != first));

    kill_daemon(&mut daemon);
    wait_all_gone(&leftovers, "the new guardian to end everything");
    eventually("the new guardian to exit", || (!running_any(second)).then_some(()));
}

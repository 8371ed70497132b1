//! Unit tests of the session look-up and ending: a shell leading its own session with jobs in groups of their
//! own, one of them ignoring SIGHUP, and processes outside the session that must be left alone.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use super::*;

/// How long a test waits for something it caused.
const WAIT: Duration = Duration::from_secs(20);

/// Runs the rest of its command line in a process group of its own.
const OWN_GROUP: &str = "python3 -c 'import os, sys; os.setpgid(0, 0); os.execvp(sys.argv[1], sys.argv[1:])'";

/// A `sh` leading a session of its own (as a PTY child does, without a terminal) that starts `jobs`, each in a
/// group of its own, prints their pids and then waits. Killed on drop, with whatever of its session is left.
struct Leader {
    child: Child,
    jobs: Vec<u32>,
}

impl Leader {
    fn start(jobs: &[&str]) -> Leader {
        // Each job moves to a group of its own first, as a job-control shell would put it.
        let script: String = jobs.iter().map(|job| format!("{OWN_GROUP} {job} & echo $!; ")).collect();
        // `setsid` (not a group leader here, so it does not fork) makes the shell lead a new session.
        let mut child = Command::new("setsid")
            .args(["sh", "-c", &format!("{script} echo end; read _")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("setsid sh");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut jobs = Vec::new();
        for line in &mut lines {
            let line = line.expect("a line");
            if line == "end" {
                break;
            }
            jobs.push(line.trim().parse().expect("a pid"));
        }
        let leader = Leader { child, jobs };
        // Each job has left the shell's group once its `python3` has run.
        let deadline = Instant::now() + WAIT;
        while !leader.jobs.iter().all(|&job| proc_stat(job).is_some_and(|stat| stat.pgrp == job)) {
            assert!(Instant::now() < deadline, "the jobs never moved to groups of their own");
            std::thread::sleep(Duration::from_millis(5));
        }
        leader
    }

    fn reach(&self) -> Reach {
        let stat = proc_stat(self.child.id()).expect("the leader runs");
        Reach { pgid: self.child.id(), session: stat.session, start: stat.start }
    }
}

impl Drop for Leader {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for pid in &self.jobs {
            let _ = kill(Pid::from_raw(*pid as i32), Signal::SIGKILL);
        }
    }
}

/// Whether `pid` still runs (a zombie does not).
fn runs(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|stat| !stat.is_dead())
}

/// Waits (bounded) until none of `pids` runs.
fn wait_gone(pids: &[u32]) {
    let deadline = Instant::now() + WAIT;
    while pids.iter().any(|&pid| runs(pid)) {
        assert!(
            Instant::now() < deadline,
            "still running: {:?}",
            pids.iter().filter(|&&p| runs(p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_session_is_found_whole_and_its_jobs_in_other_groups_are_ended() {
    let leader = Leader::start(&["sleep 1001", "sh -c 'trap \"\" HUP; sleep 1002; :'"]);
    let reach = leader.reach();
    assert!(reach.leads_session(), "setsid made the shell a session leader");
    for &job in &leader.jobs {
        assert_ne!(proc_stat(job).unwrap().pgrp, reach.pgid, "each job is in a group of its own");
    }
    let found: Vec<u32> = find(&[reach]).into_iter().map(|(pid, _, _)| pid).collect();
    for pid in leader.jobs.iter().chain([&leader.child.id()]) {
        assert!(found.contains(pid), "{pid} is in the session: {found:?}");
    }
    assert!(!found.contains(&std::process::id()), "the test itself is in another session");
    // A group-only reach (a pipe child's) finds the leader's group and none of the jobs.
    let group_only = Reach { session: reach.session.wrapping_add(1), ..reach };
    let found: Vec<u32> = find(&[group_only]).into_iter().map(|(pid, _, _)| pid).collect();
    assert_eq!(found, [leader.child.id()]);

    let members = end_members(&[reach]);
    assert!(members.killed >= 3, "the leader and both jobs (and the jobs' own children): {members:?}");
    wait_gone(&leader.jobs);
}

#[test]
fn the_members_it_killed_are_dead_when_it_returns() {
    // A job holding 1 GiB it has written takes a while to die after its SIGKILL (the kernel frees its memory
    // first, tens of milliseconds at least; longer on a loaded machine), so a look right after the signal would
    // still see it running.
    let job = "python3 -c 'import sys, time; b = b\"x\" * (1 << 30); time.sleep(600)'";
    let leader = Leader::start(&[job]);
    let pid = leader.jobs[0];
    let deadline = Instant::now() + WAIT;
    // Resident once the bytes are written (the 1 GiB shows in its VmRSS).
    let resident_kib = || {
        let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    };
    while resident_kib().unwrap_or(0) < 1 << 20 {
        assert!(Instant::now() < deadline, "the job never held its 1 GiB");
        std::thread::sleep(Duration::from_millis(5));
    }
    let members = end_members(&[leader.reach()]);
    assert!(members.killed >= 2, "the leader and the job: {members:?}");
    assert!(!runs(pid), "the job is dead (a zombie or gone) when end_members returns");
    assert!(!runs(leader.child.id()), "so is the leader");
}

#[test]
fn processes_older_than_the_recorded_leader_are_spared() {
    let leader = Leader::start(&["sleep 1003"]);
    let later = Reach { start: leader.reach().start + 1_000_000, ..leader.reach() };
    let members = end_members(&[later]);
    assert_eq!(members.killed, 0);
    assert!(members.spared >= 2, "{members:?}");
    assert!(leader.jobs.iter().all(|&pid| runs(pid)), "nothing was signalled");
}

#[test]
fn the_wait_for_exits_ends_with_the_leaders_and_is_bounded_by_its_deadline() {
    let mut quick = Command::new("sh").args(["-c", "read _"]).stdin(Stdio::piped()).spawn().unwrap();
    let mut stays = Command::new("sleep").arg("1004").process_group(0).spawn().unwrap();
    // A leader that exits: the wait ends with it, long before a far deadline.
    drop(quick.stdin.take());
    let began = Instant::now();
    wait_for_exits(&[quick.id()], began + WAIT);
    assert!(began.elapsed() < WAIT, "the wait ended at the exit");
    assert!(proc_stat(quick.id()).is_some_and(|stat| stat.is_dead()), "exited, not reaped");
    quick.wait().unwrap();
    // One that stays: the wait ends at the deadline, and not before it.
    let began = Instant::now();
    wait_for_exits(&[stays.id()], began + Duration::from_millis(100));
    assert!(began.elapsed() >= Duration::from_millis(100));
    assert!(runs(stays.id()));
    let _ = stays.kill();
    let _ = stays.wait();
}

/// A session leader that dies of the hangup without passing it on, with one job in a group of its own whose
/// SIGHUP handler writes `argv[1]` and exits; the job prints its pid once the handler is in place.
const SILENT_LEADER: &str = "import os, signal, sys, time
signal.signal(signal.SIGHUP, signal.SIG_DFL)
if os.fork() == 0:
    os.setpgid(0, 0)
    def hup(*_):
        with open(sys.argv[1], 'w') as said:
            said.write('hup\\n')
        os._exit(0)
    signal.signal(signal.SIGHUP, hup)
    print(os.getpid(), flush=True)
    while True:
        time.sleep(1000)
sys.stdin.read()
";

/// A leader that exits on the hangup without passing it on (as bash does when the hangup comes while it runs a
/// command): the job left in its session is hung up by the stop itself, and its handler runs before any SIGKILL.
#[test]
fn jobs_a_leader_did_not_hang_up_are_hung_up_before_the_kill() {
    let dir = tempfile::tempdir().unwrap();
    let said = dir.path().join("hup");
    // `setsid` (not a group leader here, so it does not fork) makes the leader lead a new session.
    let mut leader = Command::new("setsid")
        .args(["python3", "-c", SILENT_LEADER])
        .arg(&said)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("setsid python3");
    let mut line = String::new();
    BufReader::new(leader.stdout.take().unwrap()).read_line(&mut line).expect("the job's pid");
    let job: u32 = line.trim().parse().expect("a pid");
    let stat = proc_stat(leader.id()).expect("the leader runs");
    let reach = Reach { pgid: leader.id(), session: stat.session, start: stat.start };
    assert!(reach.leads_session());
    hang_up(leader.id());
    let began = Instant::now();
    end_sessions(&[reach], began + WAIT);
    let took = began.elapsed();
    let _ = kill(Pid::from_raw(job as i32), Signal::SIGKILL);
    let _ = leader.kill();
    let _ = leader.wait();
    assert_eq!(std::fs::read_to_string(&said).unwrap_or_default(), "hup\n", "the job's handler ran first");
    assert!(took < WAIT, "the stop ended once the session was empty, not at its deadline");
    wait_gone(&[job]);
}

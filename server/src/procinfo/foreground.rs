//! The foreground process of a PTY: the deepest TTY-attached process of its foreground process group, read from
//! `/proc` on Linux (other platforms always report none).
//!
//! [`foreground_group`] costs one `tcgetpgrp`, a walk of the terminal's own process tree (each process's
//! `stat` and its tasks' `children` lists, the task list itself read only for a process of several threads)
//! and up to three `readlink`s per member of the foreground group (the name comes from the stat line already
//! read): for an idle shell, two small reads and one `readlink`, so it is cheap enough to run on every `list`
//! and `get` however many processes the machine runs (`list` asks every terminal; issue 31 halved its system
//! calls). Only when the tree holds no member of the group on the terminal (a member whose parent exited was
//! reparented out of it) or cannot be walked does it fall back to one pass over all of `/proc/*/stat`.
//! Processes come and go meanwhile; any file that cannot be read is skipped, and the function
//! never panics.

#[cfg(unix)]
use std::os::fd::AsFd;
#[cfg(unix)]
use std::path::Path;

use crate::procinfo::stat::ProcStat;

/// The most processes the walk of a terminal's process tree reads (4096): a larger tree is searched by the one
/// pass over all of `/proc` instead, which then costs about as much.
pub const MAX_WALKED_PROCESSES: usize = 4096;

/// The foreground process group of a PTY as one search found it: its members, the foreground process first.
#[derive(Debug, Clone)]
pub(crate) struct ForegroundGroup {
    /// Every member the search saw (those of the terminal's process tree, or of all of `/proc` when the tree
    /// held no member on the terminal), the foreground process first.
    pub(crate) members: Vec<ProcStat>,
}

impl ForegroundGroup {
    /// The name (`/proc/<pid>/comm`) of the foreground process: the deepest TTY-attached process of the group
    /// (see [`foreground_group`]), or `None` when it cannot be read.
    pub(crate) fn name(&self) -> Option<String> {
        #[cfg(target_os = "linux")]
        return linux::name(self.members.first()?);
        #[cfg(not(target_os = "linux"))]
        return None;
    }
}

/// The PTY's foreground process group, its foreground process first: the deepest TTY-attached process of the
/// group. `None` when there is no foreground group or no member of it can be read.
///
/// `root` is the terminal's child, whose process tree is searched first (see the module documentation).
/// `master` must be the PTY's **master** descriptor (any duplicate of it works). On Linux, `tcgetpgrp` on the
/// slave side succeeds only in a process whose controlling terminal it is, which the daemon never is, so a
/// slave descriptor yields `None`. `tty` is the slave's path (`/dev/pts/N`): processes whose fd 0, 1 or 2 is
/// open on it are preferred; when none is (or `tty` is `None`), the whole group is considered. Among the
/// candidates the one with the longest parent chain wins, then the highest pid.
#[cfg(target_os = "linux")]
pub(crate) fn foreground_group(master: impl AsFd, tty: Option<&Path>, root: u32) -> Option<ForegroundGroup> {
    let group = nix::unistd::tcgetpgrp(master).ok()?.as_raw();
    // With no session attached the kernel reports 0, which is the group of the kernel's own threads.
    let group = u32::try_from(group).ok().filter(|&group| group > 0)?;
    let attached = |pid| tty.is_some_and(|tty| linux::is_attached(pid, tty));
    let tree = linux::subtree(root, MAX_WALKED_PROCESSES).unwrap_or_default();
    // The tree answers when a member there is on the terminal (or, with no terminal path, when it has any).
    if let Some((chosen, on_tty)) = linux::choose(&tree, group, attached)
        && (on_tty || tty.is_none())
    {
        return Some(linux::group_of(&tree, group, chosen.pid));
    }
    let processes = linux::scan();
    let chosen = linux::choose(&processes, group, attached)?.0.pid;
    Some(linux::group_of(&processes, group, chosen))
}

/// The foreground group of a PTY; always `None` outside Linux, where `/proc` is not available.
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) fn foreground_group(_master: impl AsFd, _tty: Option<&Path>, _root: u32) -> Option<ForegroundGroup> {
    None
}

/// The foreground process's name ([`ForegroundGroup::name`] of [`foreground_group`]), for tests.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn foreground_process(master: impl AsFd, tty: Option<&Path>, root: u32) -> Option<String> {
    foreground_group(master, tty, root)?.name()
}

/// Every process `/proc` lists now (for tests).
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn linux_scan() -> Vec<ProcStat> {
    linux::scan()
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::path::Path;

    use crate::procinfo::stat::{ProcStat, proc_stat, read_proc};

    /// Every process `/proc` lists now; entries that vanish or do not parse are skipped.
    pub(super) fn scan() -> Vec<ProcStat> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(proc_stat)
            .collect()
    }

    /// The member of `group` with the greatest (parent-chain depth, pid), among those `attached` accepts if
    /// there are any (then the flag is true), else among all members.
    pub(super) fn choose(
        processes: &[ProcStat],
        group: u32,
        attached: impl Fn(u32) -> bool,
    ) -> Option<(&ProcStat, bool)> {
        let members: Vec<&ProcStat> = processes.iter().filter(|p| p.pgrp == group).collect();
        let on_tty: Vec<&ProcStat> = members.iter().copied().filter(|p| attached(p.pid)).collect();
        let any_on_tty = !on_tty.is_empty();
        let candidates = if any_on_tty { on_tty } else { members };
        let parents: HashMap<u32, u32> = processes.iter().map(|p| (p.pid, p.ppid)).collect();
        candidates.into_iter().max_by_key(|p| (depth(p.pid, &parents), p.pid)).map(|p| (p, any_on_tty))
    }

    /// `root` and every process below it, found through each task's `children` list (a thread's children are
    /// listed under that thread), at most `limit` ([`MAX_WALKED_PROCESSES`](super::MAX_WALKED_PROCESSES) outside
    /// tests) found or waiting to be read. `None` when `root` is gone or the kernel keeps no such lists
    /// (`CONFIG_PROC_CHILDREN`), or past the bound.
    pub(super) fn subtree(root: u32, limit: usize) -> Option<Vec<ProcStat>> {
        let mut found = Vec::new();
        let mut next = vec![root];
        while let Some(pid) = next.pop() {
            if found.len() + next.len() >= limit {
                return None;
            }
            // A process that exited meanwhile is skipped, unless it is the root.
            let Some(fields) = proc_stat(pid) else {
                if pid == root {
                    return None;
                }
                continue;
            };
            // A process of one thread (a shell, most often) has one task, its own: no need to list them.
            let tasks: Vec<String> = if fields.threads == 1 {
                vec![format!("/proc/{pid}/task/{pid}/children")]
            } else {
                let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
                    found.push(fields);
                    continue;
                };
                tasks.filter_map(Result::ok).map(|task| task.path().join("children").display().to_string()).collect()
            };
            found.push(fields);
            for children in tasks {
                match read_proc(&children) {
                    Ok(children) => next.extend(
                        String::from_utf8_lossy(&children)
                            .split_ascii_whitespace()
                            .filter_map(|c| c.parse::<u32>().ok()),
                    ),
                    // Without children lists the walk would miss every child: not a tree to trust.
                    Err(error) if pid == root && error.kind() == std::io::ErrorKind::NotFound => return None,
                    Err(_) => {}
                }
            }
        }
        Some(found)
    }

    /// How many ancestors `pid` has below pid 1, following the snapshot's parent links. A snapshot taken while
    /// pids are reused can contain a cycle, so the walk takes at most one step per known process.
    fn depth(pid: u32, parents: &HashMap<u32, u32>) -> usize {
        let mut depth = 0;
        let mut current = pid;
        while depth < parents.len() {
            match parents.get(&current) {
                Some(&parent) if parent > 1 => {
                    depth += 1;
                    current = parent;
                }
                _ => break,
            }
        }
        depth
    }

    /// The members of `group` among `processes`, `chosen` first.
    pub(super) fn group_of(processes: &[ProcStat], group: u32, chosen: u32) -> super::ForegroundGroup {
        let mut members: Vec<ProcStat> = processes.iter().filter(|p| p.pgrp == group).cloned().collect();
        members.sort_by_key(|p| p.pid != chosen);
        super::ForegroundGroup { members }
    }

    /// Whether fd 0, 1 or 2 of `pid` is open on `tty`.
    pub(super) fn is_attached(pid: u32, tty: &Path) -> bool {
        (0..=2).any(|fd| std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|target| target == tty))
    }

    /// The process's name as its stat line, read in this same search, gave it (the kernel's `comm`, what
    /// `/proc/<pid>/comm` holds too); `None` when empty.
    pub(super) fn name(process: &ProcStat) -> Option<String> {
        (!process.comm.is_empty()).then(|| process.comm.clone())
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    mod linux {
        use std::os::unix::process::CommandExt;
        use std::process::Command;
        use std::time::{Duration, Instant};

        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;

        use super::super::linux::{choose, scan, subtree};
        use super::super::{MAX_WALKED_PROCESSES, foreground_process};
        use crate::procinfo::stat::ProcStat;
        use crate::procinfo::test_pty::Session;

        fn stat(pid: u32, ppid: u32, pgrp: u32) -> ProcStat {
            ProcStat { pid, comm: format!("p{pid}"), state: 'S', ppid, pgrp, session: pgrp, threads: 1, start: 1 }
        }

        fn chosen(processes: &[ProcStat], group: u32, attached: &[u32]) -> Option<u32> {
            choose(processes, group, |pid| attached.contains(&pid)).map(|(p, _)| p.pid)
        }

        #[test]
        fn the_deepest_attached_member_of_the_group_wins() {
            // 10 leads group 10; 11 and 12 are its children; 13 is 12's child in another group.
            let table = [stat(1, 0, 1), stat(10, 5, 10), stat(11, 10, 10), stat(12, 10, 10), stat(13, 12, 99)];
            assert_eq!(chosen(&table, 10, &[10, 11, 12]), Some(12), "equal depth: the higher pid");
            // A grandchild with a lower pid (pids wrap): depth decides before pid.
            let mut deeper = table.to_vec();
            deeper.push(stat(8, 11, 10));
            assert_eq!(chosen(&deeper, 10, &[8, 10, 11, 12]), Some(8), "the deepest");
            assert_eq!(chosen(&deeper, 10, &[10, 11]), Some(11), "only attached ones when some are");
            assert_eq!(chosen(&deeper, 10, &[]), Some(8), "the whole group when none is attached");
            assert_eq!(chosen(&deeper, 10, &[13]), Some(8), "attachment outside the group does not count");
            assert_eq!(chosen(&deeper, 77, &[]), None, "an empty group");
        }

        #[test]
        fn a_parent_cycle_in_the_snapshot_terminates() {
            let table = [stat(30, 31, 30), stat(31, 30, 30)];
            assert_eq!(chosen(&table, 30, &[]), Some(31));
        }

        #[test]
        fn scan_finds_this_process() {
            let me = std::process::id();
            let found = scan().into_iter().find(|p| p.pid == me).expect("this process is in /proc");
            assert_eq!(found.pgrp, nix::unistd::getpgrp().as_raw().unsigned_abs());
            assert_eq!(found.ppid, nix::unistd::getppid().as_raw().unsigned_abs());
        }

        #[test]
        fn the_walk_finds_a_process_tree_and_nothing_outside_it() {
            // A group of its own, so that the kill at the end reaches `sleep` too.
            let mut child =
                Command::new("sh").args(["-c", "sleep 30 & wait"]).process_group(0).spawn().expect("spawn sh");
            let root = child.id();
            let deadline = Instant::now() + Duration::from_secs(5);
            let tree = loop {
                let tree = subtree(root, MAX_WALKED_PROCESSES).expect("this kernel keeps children lists");
                // (The forked child is `sh` until it has run `exec`.)
                if tree.len() == 2 && tree[1].comm == "sleep" || Instant::now() > deadline {
                    break tree;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            // The bound counts the processes found and those still to read: a tree of two fits in two, not one
            // (`foreground_process` then searches all of /proc, as when the tree does not hold the answer).
            let cut = subtree(root, 1);
            let fits = subtree(root, 2).map(|tree| tree.len());
            let _ = child.kill();
            let _ = killpg(Pid::from_raw(i32::try_from(root).expect("pid fits")), Signal::SIGKILL);
            let _ = child.wait();
            assert_eq!(tree.len(), 2, "{tree:?}");
            assert_eq!((tree[0].pid, tree[0].comm.as_str()), (root, "sh"));
            assert_eq!((tree[1].ppid, tree[1].comm.as_str()), (root, "sleep"));
            let me = std::process::id();
            assert!(tree.iter().all(|p| p.pid != me), "the walk goes down, never up");
            assert!(cut.is_none(), "past the bound");
            assert_eq!(fits, Some(2));
            assert!(subtree(root, MAX_WALKED_PROCESSES).is_none(), "a root that is gone");
        }

        #[test]
        fn reports_the_deepest_process_of_a_real_pty() {
            let session = Session::start("tail -f /dev/null & sleep 30");
            let found = session.wait_for(|s| s.foreground().as_deref() == Some("sleep"));
            assert!(found, "foreground was {:?}, group {:?}", session.foreground(), session.group_names());
        }

        #[test]
        fn prefers_processes_attached_to_the_tty() {
            // The inner shell and its `tail` are deeper than `sleep` but have no descriptor on the terminal.
            let session =
                Session::start("sh -c 'tail -f /dev/null; exit 0' </dev/null >/dev/null 2>&1 & sleep 30; exit 0");
            let ready = session.wait_for(|s| {
                let names = s.group_names();
                names.iter().any(|n| n == "tail") && names.iter().any(|n| n == "sleep")
            });
            assert!(ready, "group {:?}", session.group_names());
            assert_eq!(session.foreground().as_deref(), Some("sleep"), "group {:?}", session.group_names());
        }

        #[test]
        fn a_member_outside_the_tree_is_found_by_the_scan() {
            // The inner shell starts `sleep` and exits at once: `sleep`, still in the group and on the terminal,
            // is reparented out of the session leader's tree, and the leader becomes `tail`, which is not on the
            // terminal. The tree alone would answer `tail`.
            let session = Session::start("sh -c 'sleep 30 &'; exec tail -f /dev/null </dev/null >/dev/null 2>&1");
            let ready = session.wait_for(|s| {
                let names = s.group_names();
                names.iter().any(|n| n == "tail") && names.iter().any(|n| n == "sleep") && names.len() == 2
            });
            assert!(ready, "group {:?}", session.group_names());
            assert_eq!(session.foreground().as_deref(), Some("sleep"), "group {:?}", session.group_names());
        }

        #[test]
        fn a_pty_without_a_session_has_no_foreground_process() {
            let pty = nix::pty::openpty(None, None).expect("openpty");
            let tty = nix::unistd::ttyname(&pty.slave).expect("the slave's path");
            assert_eq!(foreground_process(&pty.master, Some(&tty), std::process::id()), None);
            assert_eq!(foreground_process(&pty.master, None, std::process::id()), None);
        }
    }
}

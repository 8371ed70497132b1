//! The one parser of `/proc/<pid>/stat` in the crate: the fields of a process that the daemon reads (its pid,
//! name, state, parent, group, session and start time), for the foreground search, ending a child's session,
//! the record of process groups and the guardian.
//!
//! The command name (field 2) sits between the first `(` and the last `)` of the line and may itself contain
//! spaces and `)`, so the fields after it are read only after the last `)`.

/// The fields of one `/proc/<pid>/stat` line that the daemon reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// The process id (field 1).
    pub pid: u32,
    /// The command name as the kernel reports it (field 2, without its parentheses); it may contain spaces and
    /// parentheses.
    pub comm: String,
    /// The state letter (field 3).
    pub state: char,
    /// The parent's process id (field 4; 0 for a process the kernel started).
    pub ppid: u32,
    /// The process group id (field 5).
    pub pgrp: u32,
    /// The session id (field 6).
    pub session: u32,
    /// How many threads it has (field 20).
    pub threads: u32,
    /// The start time, in clock ticks since boot (field 22). It tells a process apart from a later one that
    /// reuses its pid: the kernel hands a pid out again only after the first process is gone, so the two never
    /// share a start time unless both started within the same clock tick.
    pub start: u64,
}

impl ProcStat {
    /// Whether it is a zombie (or dead): it runs nothing and cannot be signalled into doing anything.
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// Parses one `/proc/<pid>/stat` line, or returns `None` when it is malformed (a field missing or not a
/// number).
pub fn parse_stat(line: &str) -> Option<ProcStat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    if close < open {
        return None;
    }
    // `(` and `)` are ASCII, so both indices are character boundaries.
    let pid = line[..open].trim().parse().ok()?;
    let comm = line[open + 1..close].to_owned();
    let mut rest = line[close + 1..].split_ascii_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgrp = rest.next()?.parse().ok()?;
    let session = rest.next()?.parse().ok()?;
    // Fields 7 to 19 come between the session and the thread count, field 21 before the start time.
    let threads = rest.nth(13)?.parse().ok()?;
    let start = rest.nth(1)?.parse().ok()?;
    Some(ProcStat { pid, comm, state, ppid, pgrp, session, threads, start })
}

/// The [`ProcStat`] of process `pid`, or `None` when there is no such process (or `/proc` cannot be read, as
/// outside Linux).
pub fn proc_stat(pid: u32) -> Option<ProcStat> {
    // The command name is arbitrary bytes; a lossy read keeps the numeric fields intact.
    let raw = read_proc(&format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&String::from_utf8_lossy(&raw))
}

/// The room a read of a small `/proc` file starts with: a `stat` line or a `children` list of a few dozen
/// pids fits, so the file is read in one call (and one more that finds its end).
const PROC_READ_BYTES: usize = 512;

/// A small `/proc` file whole: opened and read to its end, without asking its size first (`/proc` reports 0,
/// so the size `std::fs::read` asks for costs a system call and tells nothing). `list` reads a few of these per
/// terminal (issue 31).
pub(crate) fn read_proc(path: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(PROC_READ_BYTES);
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of the kernel's shape with these fields (and plausible ones between them, up to field 24).
    fn line(pid: u32, comm: &str, state: char, ppid: u32, pgrp: u32, session: u32, start: u64) -> String {
        format!(
            "{pid} ({comm}) {state} {ppid} {pgrp} {session} 34816 -1 4194560 107 0 0 0 0 0 0 0 20 0 1 0 {start} 2 3\n"
        )
    }

    #[test]
    fn the_fields_are_read_after_the_last_parenthesis() {
        let fields = parse_stat(&line(1234, "a) b) c", 'S', 1, 1234, 1200, 98765)).expect("a valid stat line");
        let expected = ProcStat {
            pid: 1234,
            comm: "a) b) c".into(),
            state: 'S',
            ppid: 1,
            pgrp: 1234,
            session: 1200,
            threads: 1,
            start: 98765,
        };
        assert_eq!(fields, expected);
        let plain = parse_stat(&line(42, "sleep", 'Z', 7, 40, 39, 19)).expect("a valid stat line");
        assert_eq!(
            (plain.comm.as_str(), plain.state, plain.ppid, plain.pgrp, plain.session),
            ("sleep", 'Z', 7, 40, 39)
        );
        assert!(plain.is_dead());
        let kernel = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0";
        assert_eq!(parse_stat(kernel).map(|stat| (stat.ppid, stat.pgrp, stat.start)), Some((0, 0, 5)));
        let threaded = "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 12 0 99";
        assert_eq!(parse_stat(threaded).map(|stat| (stat.threads, stat.start)), Some((12, 99)));
    }

    #[test]
    fn malformed_lines_are_refused() {
        let full = line(12, "sh", 'S', 1, 2, 3, 4);
        let lines = [
            "",
            "1234",
            "1234 (sh",
            "1234 sh) S 1 2",
            ") 12 (x",
            "x (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
            "12 (sh) S",
            "12 (sh) S 1",
            "12 (sh) S 1 2 3",
            "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18",
            "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 y",
            "12 (sh) S one 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
            "12 (sh) S 1 two 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
            "12 (sh) S 1 2 three 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
        ];
        for line in lines {
            assert_eq!(parse_stat(line), None, "{line:?}");
        }
        assert!(parse_stat(&full).is_some(), "{full:?}");
        assert!(parse_stat(&full.replace("(sh)", "(sh")).is_none(), "no closing parenthesis");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_start_time_tells_processes_apart() {
        let own = proc_stat(std::process::id()).expect("this process");
        assert_eq!(own.pid, std::process::id());
        let tasks = std::fs::read_dir("/proc/self/task").expect("tasks").count();
        assert!(own.threads >= 1 && own.threads as usize <= tasks + 64, "{} threads, {tasks} tasks", own.threads);
        assert_eq!(proc_stat(std::process::id()).map(|stat| stat.start), Some(own.start), "stable");
        assert_eq!(own.pgrp, nix::unistd::getpgrp().as_raw().unsigned_abs());
        assert_eq!(own.session, nix::unistd::getsid(None).expect("the session").as_raw().unsigned_abs());
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert_eq!(proc_stat(pid), None, "a reaped child");
    }
}

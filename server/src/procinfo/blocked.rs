//! What one task (a thread of a process) is blocked in, from `/proc/PID/task/TID/syscall`, and whether that
//! wait is for input from a given terminal: a `read` or `readv` of it, a `select`/`pselect6` whose read set
//! holds it, a `poll`/`ppoll` asking it for input, or an `epoll_wait` on an epoll instance that watches it for
//! input.
//!
//! `syscall` names the system call a sleeping task is in and its six arguments (or says `running`). For the
//! waits on many descriptors, the descriptors are read where the kernel reads them: the `pollfd` array and the
//! `fd_set` from the task's memory (`/proc/PID/task/TID/mem`, at most [`MAX_POLLED_FDS`] of them), an epoll
//! instance's watch list from its `fdinfo`. Reading `syscall` and `mem` takes the same right as attaching a
//! debugger (the same user and a dumpable process, or `CAP_SYS_PTRACE`); a task the daemon may not look at is
//! not known to wait. The system call numbers are those of x86-64 and AArch64; elsewhere, and for a task in a
//! 32-bit compatibility process, nothing is known to wait.

use std::os::unix::fs::FileExt;

/// The most descriptors of one `poll` or `select` that are looked at (4096): a wait on more is read only up to
/// there, so a terminal past them is not seen.
pub const MAX_POLLED_FDS: usize = 4096;

/// The most bytes of an epoll instance's `fdinfo` that are read (64 KiB, about 800 watched descriptors).
pub const MAX_FDINFO_BYTES: usize = 64 * 1024;

/// The bytes of a `/proc/PID/task/TID/syscall` line that are read: 9 numbers of at most 18 characters.
const MAX_SYSCALL_LINE_BYTES: usize = 256;

/// What a task is doing, as far as waiting for input goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// `read`/`readv` of one descriptor.
    Read { fd: u64 },
    /// `select`/`pselect6`: the read set (an `fd_set` at `readfds`, `nfds` bits; 0 is none).
    Select { nfds: u64, readfds: u64 },
    /// `poll`/`ppoll`: `nfds` `struct pollfd`s at `fds`.
    Poll { fds: u64, nfds: u64 },
    /// `epoll_wait`/`epoll_pwait`/`epoll_pwait2` on the epoll instance `epfd`.
    Epoll { epfd: u64 },
    /// Running, in another system call, or not readable.
    Other,
}

/// The system call numbers that can wait for input, for the architecture the daemon was built for.
mod numbers {
    #[cfg(target_arch = "x86_64")]
    pub(super) const READ: &[u64] = &[0, 19]; // read, readv
    #[cfg(target_arch = "x86_64")]
    pub(super) const SELECT: &[u64] = &[23, 270]; // select, pselect6
    #[cfg(target_arch = "x86_64")]
    pub(super) const POLL: &[u64] = &[7, 271]; // poll, ppoll
    #[cfg(target_arch = "x86_64")]
    pub(super) const EPOLL: &[u64] = &[232, 281, 441]; // epoll_wait, epoll_pwait, epoll_pwait2

    #[cfg(target_arch = "aarch64")]
    pub(super) const READ: &[u64] = &[63, 65]; // read, readv
    #[cfg(target_arch = "aarch64")]
    pub(super) const SELECT: &[u64] = &[72]; // pselect6
    #[cfg(target_arch = "aarch64")]
    pub(super) const POLL: &[u64] = &[73]; // ppoll
    #[cfg(target_arch = "aarch64")]
    pub(super) const EPOLL: &[u64] = &[22, 441]; // epoll_pwait, epoll_pwait2

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) const READ: &[u64] = &[];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) const SELECT: &[u64] = &[];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) const POLL: &[u64] = &[];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) const EPOLL: &[u64] = &[];
}

/// `poll` events that ask for input: `POLLIN`, `POLLPRI`, `POLLRDNORM`, `POLLRDBAND`.
const POLL_INPUT: u16 = 0x1 | 0x2 | 0x40 | 0x80;

/// epoll events that ask for input: `EPOLLIN`, `EPOLLPRI`, `EPOLLRDNORM`, `EPOLLRDBAND`.
const EPOLL_INPUT: u64 = 0x1 | 0x2 | 0x40 | 0x80;

/// Reads a `syscall` line: the number (decimal) and six arguments (hexadecimal), then the stack and program
/// counters; `running`, or `-1` with two counters for a task blocked outside a system call.
pub(crate) fn parse_syscall(line: &str) -> Wait {
    let mut fields = line.split_ascii_whitespace();
    let Some(Ok(number)) = fields.next().map(str::parse::<u64>) else { return Wait::Other };
    let mut args = [0_u64; 6];
    for arg in &mut args {
        let Some(Ok(value)) = fields.next().map(|f| u64::from_str_radix(f.trim_start_matches("0x"), 16)) else {
            return Wait::Other;
        };
        *arg = value;
    }
    if numbers::READ.contains(&number) {
        Wait::Read { fd: args[0] }
    } else if numbers::SELECT.contains(&number) {
        Wait::Select { nfds: args[0], readfds: args[1] }
    } else if numbers::POLL.contains(&number) {
        Wait::Poll { fds: args[0], nfds: args[1] }
    } else if numbers::EPOLL.contains(&number) {
        Wait::Epoll { epfd: args[0] }
    } else {
        Wait::Other
    }
}

/// Whether task `tid` of process `pid` is blocked waiting for input from a descriptor `is_terminal` accepts
/// (it is given the descriptor number). False when the task runs, waits on something else, or cannot be read.
pub(crate) fn waits_for_input(pid: u32, tid: u32, is_terminal: impl Fn(u64) -> bool) -> bool {
    let task = format!("/proc/{pid}/task/{tid}");
    let Some(line) = read_bounded(&format!("{task}/syscall"), MAX_SYSCALL_LINE_BYTES) else { return false };
    match parse_syscall(&line) {
        Wait::Read { fd } => is_terminal(fd),
        Wait::Select { nfds, readfds } => readfds != 0 && read_set(&task, nfds, readfds).into_iter().any(&is_terminal),
        Wait::Poll { fds, nfds } => polled_for_input(&task, fds, nfds).into_iter().any(&is_terminal),
        Wait::Epoll { epfd } => epoll_input_fds(&task, epfd).into_iter().any(&is_terminal),
        Wait::Other => false,
    }
}

/// At most `limit` bytes of a (`/proc`) text file, or `None` when it cannot be read.
fn read_bounded(path: &str, limit: usize) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    let file = std::fs::File::open(path).ok()?;
    file.take(u64::try_from(limit).ok()?).read_to_string(&mut text).ok()?;
    Some(text)
}

/// `len` bytes of the task's memory at `address`, or `None` when they cannot be read.
fn read_memory(task: &str, address: u64, len: usize) -> Option<Vec<u8>> {
    let file = std::fs::File::open(format!("{task}/mem")).ok()?;
    let mut bytes = vec![0; len];
    file.read_exact_at(&mut bytes, address).ok()?;
    Some(bytes)
}

/// The descriptors of a `select` read set (`nfds` bits at `address`, at most [`MAX_POLLED_FDS`]).
fn read_set(task: &str, nfds: u64, address: u64) -> Vec<u64> {
    let bits = usize::try_from(nfds).unwrap_or(usize::MAX).min(MAX_POLLED_FDS);
    // An `fd_set` is an array of `long`s: bit `fd % 64` of word `fd / 64`, little-endian on both architectures.
    let Some(bytes) = read_memory(task, address, bits.div_ceil(64) * 8) else { return Vec::new() };
    set_bits(&bytes, bits)
}

/// The descriptors whose bit is set among the first `bits` of a little-endian bit array.
fn set_bits(bytes: &[u8], bits: usize) -> Vec<u64> {
    (0..bits)
        .filter(|&fd| bytes.get(fd / 8).is_some_and(|byte| byte & (1 << (fd % 8)) != 0))
        .map(|fd| fd as u64)
        .collect()
}

/// The descriptors a `poll` asks for input (`nfds` `struct pollfd`s at `address`, at most [`MAX_POLLED_FDS`]).
fn polled_for_input(task: &str, address: u64, nfds: u64) -> Vec<u64> {
    let count = usize::try_from(nfds).unwrap_or(usize::MAX).min(MAX_POLLED_FDS);
    let Some(bytes) = read_memory(task, address, count * 8) else { return Vec::new() };
    pollfds_for_input(&bytes)
}

/// The descriptors asked for input in an array of `struct pollfd { int fd; short events; short revents; }`
/// (native-endian; a negative descriptor is ignored, as `poll` ignores it).
fn pollfds_for_input(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .filter_map(|entry| {
            let fd = i32::from_ne_bytes([entry[0], entry[1], entry[2], entry[3]]);
            let events = u16::from_ne_bytes([entry[4], entry[5]]);
            (events & POLL_INPUT != 0).then(|| u64::try_from(fd).ok()).flatten()
        })
        .collect()
}

/// The descriptors an epoll instance watches for input, from its `fdinfo` (at most [`MAX_FDINFO_BYTES`]).
fn epoll_input_fds(task: &str, epfd: u64) -> Vec<u64> {
    read_bounded(&format!("{task}/fdinfo/{epfd}"), MAX_FDINFO_BYTES)
        .map(|info| epoll_watches(&info))
        .unwrap_or_default()
}

/// The target descriptors of an epoll `fdinfo`'s `tfd: N events: HEX ...` lines whose events ask for input.
fn epoll_watches(info: &str) -> Vec<u64> {
    info.lines()
        .filter_map(|line| {
            let mut fields = line.split_ascii_whitespace();
            (fields.next()? == "tfd:").then_some(())?;
            let fd = fields.next()?.parse::<u64>().ok()?;
            (fields.next()? == "events:").then_some(())?;
            let events = u64::from_str_radix(fields.next()?, 16).ok()?;
            (events & EPOLL_INPUT != 0).then_some(fd)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn syscall_lines_name_the_waits() {
        let read = "0 0x3 0x7ffd 0x1 0x24 0x5566 0x7ffd 0x7ffed1ffb8d8 0x7f0e";
        assert_eq!(parse_syscall(read), Wait::Read { fd: 3 });
        let pselect = "270 0x1 0x5584d3c69600 0x5584d3c69580 0x5584d3c69500 0x7ffc 0x0 0x7ffc 0x7f41";
        assert_eq!(parse_syscall(pselect), Wait::Select { nfds: 1, readfds: 0x5584d3c69600 });
        assert_eq!(parse_syscall("7 0x10 0x2 0xffffffff 0x0 0x0 0x0 0x1 0x2"), Wait::Poll { fds: 0x10, nfds: 2 });
        assert_eq!(parse_syscall("232 0x5 0x10 0x1 0x0 0x0 0x0 0x1 0x2"), Wait::Epoll { epfd: 5 });
        assert_eq!(parse_syscall("230 0x0 0x0 0x7fff 0x7fff 0x0 0x0 0x7fff 0x7f"), Wait::Other, "nanosleep");
        assert_eq!(parse_syscall("running"), Wait::Other);
        assert_eq!(parse_syscall("-1 0x7ffd 0x7f0e"), Wait::Other, "blocked outside a system call");
        assert_eq!(parse_syscall("0 0x3 0x7ffd"), Wait::Other, "cut short");
        assert_eq!(parse_syscall("0 0x3 zz 0x1 0x0 0x0 0x0 0x1 0x2"), Wait::Other, "not hexadecimal");
        assert_eq!(parse_syscall(""), Wait::Other);
    }

    #[test]
    fn the_read_set_is_a_bit_array() {
        assert_eq!(set_bits(&[0b0000_0101, 0, 0b1000_0000], 24), vec![0, 2, 23]);
        assert_eq!(set_bits(&[0b0000_0101], 2), vec![0], "only the first nfds bits");
        assert_eq!(set_bits(&[], 64), Vec::<u64>::new());
    }

    #[test]
    fn poll_entries_that_ask_for_input() {
        let entry = |fd: i32, events: u16| {
            let mut bytes = fd.to_ne_bytes().to_vec();
            bytes.extend(events.to_ne_bytes());
            bytes.extend(0_u16.to_ne_bytes());
            bytes
        };
        let bytes: Vec<u8> = [entry(0, 0x1), entry(1, 0x4), entry(-1, 0x1), entry(7, 0x2), entry(9, 0x40)].concat();
        assert_eq!(pollfds_for_input(&bytes), vec![0, 7, 9], "POLLOUT alone and negative descriptors are not");
    }

    #[test]
    fn epoll_watches_that_ask_for_input() {
        let info = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n\
                    tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:18\n\
                    tfd:        4 events:        4 data:                4  pos:0 ino:5 sdev:e\n\
                    tfd:       12 events: 80000001 data:                c  pos:0 ino:6 sdev:e\n";
        assert_eq!(epoll_watches(info), vec![0, 12], "EPOLLOUT alone is not");
        assert_eq!(epoll_watches("tfd: x events: 1"), Vec::<u64>::new());
    }
}

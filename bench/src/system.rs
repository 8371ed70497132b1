//! What the system tells about processes and the machine: a process's resident memory and thread count from
//! `/proc`, the machine a run happened on (CPU, cores, kernel, tool versions) for the report, and running a
//! helper command within a bound.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// A process's memory and threads at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStatus {
    /// Resident set size (`VmRSS`), in KiB.
    pub rss_kib: u64,
    /// The anonymous part of it (`RssAnon`: heap, stacks, the emulators' pages; not the binary's and the
    /// libraries' pages, which the first use of a code path brings in and the page cache shares), in KiB.
    pub anon_kib: u64,
    /// Threads (`Threads`).
    pub threads: u64,
}

/// Reads `/proc/PID/status`.
pub fn status(pid: u32) -> Result<ProcStatus> {
    let text = proc_status(pid)?;
    Ok(ProcStatus {
        rss_kib: status_field(&text, "VmRSS:")?,
        anon_kib: status_field(&text, "RssAnon:")?,
        threads: status_field(&text, "Threads:")?,
    })
}

/// The highest resident memory the process `pid` has had (`VmHWM`), in KiB.
pub fn peak_rss_kib(pid: u32) -> Result<u64> {
    status_field(&proc_status(pid)?, "VmHWM:")
}

/// The text of `/proc/PID/status`.
fn proc_status(pid: u32) -> Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status")).with_context(|| format!("/proc/{pid}"))
}

/// The number after `name` in the text of `/proc/PID/status`.
fn status_field(text: &str, name: &str) -> Result<u64> {
    let line = text.lines().find(|line| line.starts_with(name)).with_context(|| format!("no {name}"))?;
    line.split_whitespace().nth(1).and_then(|value| value.parse().ok()).with_context(|| format!("bad {name}"))
}

/// How many descriptors the process `pid` has open (`/proc/PID/fd`).
pub fn open_fds(pid: u32) -> Result<usize> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/fd")).with_context(|| format!("/proc/{pid}/fd"))?.count())
}

/// The process ids whose parent is `pid` (from `/proc/*/stat`; a process that ends meanwhile is skipped).
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| {
            let child: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // The parent is the second field after the command, which is in parentheses and may hold spaces.
            let parent: u32 = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            (parent == pid).then_some(child)
        })
        .collect()
}

/// The daemon's thread stacks as `/proc/PID/smaps` shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadStacks {
    /// Stacks found: writable anonymous mappings of at least 256 KiB right above a one-page guard (`---p`),
    /// which is how the C library lays out a thread's stack (the main thread's `[stack]` is not counted, nor
    /// the smaller signal stacks laid out the same way).
    pub count: u64,
    /// Their resident memory together, in KiB.
    pub resident_kib: u64,
}

/// The least size of a mapping taken for a thread stack (Rust's threads get 2 MiB).
const MIN_STACK_BYTES: u64 = 256 * 1024;

/// The thread stacks of process `pid` (see [`ThreadStacks`]).
pub fn thread_stacks(pid: u32) -> Result<ThreadStacks> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps")).with_context(|| format!("/proc/{pid}/smaps"))?;
    let page_kib = 4;
    let mut stacks = ThreadStacks { count: 0, resident_kib: 0 };
    // The previous mapping's end and whether it was a one-page guard, and whether the current one is a stack.
    let (mut guard_end, mut in_stack) = (None::<u64>, false);
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if let Some((start, end)) = first.split_once('-')
            && let (Ok(start), Ok(end)) = (u64::from_str_radix(start, 16), u64::from_str_radix(end, 16))
        {
            let perms = fields.next().unwrap_or_default();
            // Anonymous: offset, device, inode 0 and no path.
            let anonymous = fields.nth(2) == Some("0") && fields.next().is_none();
            // Larger than a signal stack, which the runtime lays out the same way (one per thread, tens of KiB).
            in_stack = anonymous && perms == "rw-p" && guard_end == Some(start) && end - start >= MIN_STACK_BYTES;
            if in_stack {
                stacks.count += 1;
            }
            let is_guard = anonymous && perms == "---p" && end - start == page_kib * 1024;
            guard_end = is_guard.then_some(end);
        } else if in_stack && first == "Rss:" {
            stacks.resident_kib += fields.next().and_then(|kib| kib.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    Ok(stacks)
}

/// The memory mappings of process `pid` (lines of `/proc/PID/maps`; the kernel allows `vm.max_map_count`,
/// 65530 by default) and its address space (`VmSize`), in KiB.
pub fn address_space(pid: u32) -> Result<(u64, u64)> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).with_context(|| format!("/proc/{pid}/maps"))?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).with_context(|| format!("/proc/{pid}"))?;
    let size = status
        .lines()
        .find(|line| line.starts_with("VmSize:"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kib| kib.parse().ok())
        .context("no VmSize")?;
    Ok((maps.lines().count() as u64, size))
}

/// The machine's kernel stacks (`KernelStack` of `/proc/meminfo`), in KiB: what threads cost outside any
/// process's RSS (16 KiB each on x86-64). Machine-wide, so other processes' threads count too.
pub fn kernel_stacks_kib() -> Result<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").context("/proc/meminfo")?;
    text.lines()
        .find(|line| line.starts_with("KernelStack:"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kib| kib.parse().ok())
        .context("no KernelStack")
}

/// The context switches of every thread of process `pid` so far (voluntary and not): how often it woke.
pub fn context_switches(pid: u32) -> Result<u64> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).with_context(|| format!("/proc/{pid}/task"))? {
        // A thread that ended meanwhile is skipped.
        let Ok(text) = std::fs::read_to_string(task?.path().join("status")) else { continue };
        for line in text.lines() {
            if line.starts_with("voluntary_ctxt_switches:") || line.starts_with("nonvoluntary_ctxt_switches:") {
                total += line.split_whitespace().nth(1).and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
            }
        }
    }
    Ok(total)
}

/// The machine and the tools of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// The CPU model (`/proc/cpuinfo`).
    pub cpu: String,
    /// Cores available to the harness.
    pub cores: usize,
    /// The kernel release.
    pub kernel: String,
    /// `rustc --version`.
    pub rustc: String,
    /// `tmux -V`, or why there is none.
    pub tmux: String,
    /// The libghostty-vt version the harness links (the daemon's is the same build).
    pub libghostty_vt: String,
    /// The commit of the repository (with `-dirty` when it has changes), if known.
    pub commit: String,
    /// Total memory, in MiB.
    pub memory_mib: u64,
}

impl Machine {
    /// Describes this machine; what cannot be read is reported as `unknown`.
    pub fn describe(tmux: Option<&str>) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find(|line| line.starts_with("model name"))
            .and_then(|line| line.split_once(':'))
            .map_or_else(|| "unknown".to_owned(), |(_, model)| model.trim().to_owned());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib = meminfo
            .lines()
            .find(|line| line.starts_with("MemTotal:"))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|kib| kib.parse::<u64>().ok())
            .unwrap_or(0);
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new("."));
        let commit = first_line(Command::new("git").arg("-C").arg(root).args(["describe", "--always", "--dirty"]));
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map_or_else(|_| "unknown".to_owned(), |text| text.trim().to_owned()),
            rustc: first_line(Command::new("rustc").arg("--version")),
            tmux: tmux.map_or_else(|| "tmux not installed".to_owned(), str::to_owned),
            libghostty_vt: opencode_pty_vt::library_version(),
            commit,
            memory_mib: memory_kib / 1024,
        }
    }
}

/// The first line of a command's standard output, or `unknown`.
fn first_line(command: &mut Command) -> String {
    run(command, Duration::from_secs(10))
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8_lossy(&output.stdout).lines().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Runs a helper command with captured output (small: it is read once the command has exited), killing it
/// when it takes longer than `limit`.
pub fn run(command: &mut Command, limit: Duration) -> Result<Output> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {command:?}"))?;
    let deadline = Instant::now() + limit;
    while child.try_wait()?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{command:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(child.wait_with_output()?)
}

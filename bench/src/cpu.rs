//! CPU time read from `/proc`: the whole machine's busy time, a process's own (with the children it has
//! reaped) and the harness's own, so a run can say where its CPU went per megabyte and how many MB/s every
//! core of the machine could carry at that cost.

use anyhow::{Context, Result};

/// Clock ticks per second of the times in `/proc/stat` and `/proc/PID/stat`: `USER_HZ`, which Linux fixes at
/// 100 for user space whatever the kernel's own tick.
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU seconds used so far, from one reading, or between two ([`CpuTimes::since`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CpuTimes {
    /// The machine's CPUs.
    pub cpus: usize,
    /// Busy (user, nice, system, irq, softirq), summed over the machine's CPUs ...
    pub machine_busy: f64,
    /// ... and everything (busy, idle, I/O wait, stolen).
    pub machine_all: f64,
    /// By the measured process and the children it has reaped.
    pub process: f64,
    /// By the harness itself (not its children).
    pub harness: f64,
}

impl CpuTimes {
    /// Reads the machine's, process `pid`'s and the harness's CPU time now.
    pub(crate) fn read(pid: u32) -> Result<CpuTimes> {
        let stat = std::fs::read_to_string("/proc/stat").context("/proc/stat")?;
        let (cpus, machine_busy, machine_all) = machine(&stat).context("cannot read /proc/stat")?;
        let own = |path: &str, with_children: bool| -> Result<f64> {
            let text = std::fs::read_to_string(path).with_context(|| path.to_owned())?;
            process(&text, with_children).with_context(|| format!("cannot read {path}"))
        };
        Ok(CpuTimes {
            cpus,
            machine_busy,
            machine_all,
            process: own(&format!("/proc/{pid}/stat"), true)?,
            harness: own("/proc/self/stat", false)?,
        })
    }

    /// What was used from `earlier` until this reading (the same fields, as differences).
    pub(crate) fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            cpus: self.cpus,
            machine_busy: self.machine_busy - earlier.machine_busy,
            machine_all: self.machine_all - earlier.machine_all,
            process: self.process - earlier.process,
            harness: self.harness - earlier.harness,
        }
    }

    /// How many CPUs were busy on average (between two readings).
    pub(crate) fn busy_cpus(&self) -> f64 {
        self.machine_busy / self.machine_all.max(f64::MIN_POSITIVE) * self.cpus as f64
    }

    /// What the rest of the machine used: kernel threads, interrupts, and any other process.
    pub(crate) fn rest(&self) -> f64 {
        (self.machine_busy - self.process - self.harness).max(0.0)
    }

    /// The MB/s every CPU of the machine could carry, all of them busy, at the machine's cost per MB of this
    /// run (`bytes` moved): the ceiling of a throughput that costs this much.
    pub(crate) fn ceiling_mb_per_s(&self, bytes: u64) -> f64 {
        self.cpus as f64 * 1e3 / per_mb(self.machine_busy, bytes).max(f64::MIN_POSITIVE)
    }
}

/// Milliseconds of CPU per megabyte (10^6 bytes) of `bytes`, for `seconds` of CPU.
pub(crate) fn per_mb(seconds: f64, bytes: u64) -> f64 {
    seconds * 1e3 / (bytes as f64 / 1e6).max(f64::MIN_POSITIVE)
}

/// The CPUs, busy seconds and all seconds from `/proc/stat`'s text.
fn machine(stat: &str) -> Option<(usize, f64, f64)> {
    let mut lines = stat.lines();
    let total = lines.next()?.strip_prefix("cpu ")?;
    let ticks: Vec<f64> = total.split_whitespace().map(|field| field.parse().ok()).collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user and nice.
    let field = |index: usize| ticks.get(index).copied().unwrap_or(0.0);
    let busy = field(0) + field(1) + field(2) + field(5) + field(6);
    let all = busy + field(3) + field(4) + field(7);
    let cpus = lines.filter(|line| line.starts_with("cpu") && line.as_bytes().get(3).is_some_and(u8::is_ascii_digit));
    Some((cpus.count().max(1), busy / TICKS_PER_SECOND, all / TICKS_PER_SECOND))
}

/// A process's CPU seconds from its `/proc/PID/stat` text: its own user and system time, plus its reaped
/// children's when `with_children`.
fn process(stat: &str, with_children: bool) -> Option<f64> {
    // The command, in parentheses, may hold spaces and parentheses: the fields start after the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After the command: state (0), ..., utime (11), stime (12), cutime (13), cstime (14).
    let tick = |index: usize| fields.get(index).and_then(|field| field.parse::<f64>().ok());
    let own = tick(11)? + tick(12)?;
    let children = if with_children { tick(13)? + tick(14)? } else { 0.0 };
    Some((own + children) / TICKS_PER_SECOND)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_line_splits_into_busy_and_all_over_every_cpu() {
        let stat = "cpu  100 10 50 800 20 5 15 30 7 0\ncpu0 50 5 25 400 10 3 7 15 0 0\ncpu1 50 5 25 400 10 2 8 15 0 0\n\
                    intr 1 2 3\n";
        let (cpus, busy, all) = machine(stat).expect("parsed");
        assert_eq!(cpus, 2);
        // user + nice + system + irq + softirq; idle, iowait and steal only count in all.
        assert!((busy - 1.8).abs() < 1e-9, "{busy}");
        assert!((all - 10.3).abs() < 1e-9, "{all}");
        assert_eq!(machine("intr 1 2 3\n"), None);
    }

    #[test]
    fn a_process_line_is_read_after_its_command_whatever_the_command_holds() {
        let stat = "4242 (odd) name (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 4 0 1 2 3";
        assert_eq!(process(stat, false), Some(3.0));
        assert_eq!(process(stat, true), Some(3.5));
        assert_eq!(process("4242 (short) S 1", true), None);
    }

    #[test]
    fn a_run_says_its_busy_cpus_its_rest_and_its_ceiling() {
        let before = CpuTimes { cpus: 2, machine_busy: 10.0, machine_all: 20.0, process: 3.0, harness: 1.0 };
        let after = CpuTimes { cpus: 2, machine_busy: 13.0, machine_all: 24.0, process: 5.0, harness: 1.5 };
        let used = after.since(&before);
        assert!((used.busy_cpus() - 1.5).abs() < 1e-9);
        assert!((used.rest() - 0.5).abs() < 1e-9);
        // 3 CPU seconds for 100 MB: 30 ms per MB, so two CPUs carry at most 2000 / 30 MB/s.
        assert!((per_mb(used.machine_busy, 100_000_000) - 30.0).abs() < 1e-9);
        assert!((used.ceiling_mb_per_s(100_000_000) - 2000.0 / 30.0).abs() < 1e-9);
    }

    #[test]
    fn this_process_can_be_read() {
        let times = CpuTimes::read(std::process::id()).expect("read");
        assert!(times.cpus >= 1 && times.machine_busy > 0.0 && times.machine_all >= times.machine_busy);
    }
}

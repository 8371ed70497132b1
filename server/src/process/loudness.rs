//! Which output threads yield the CPU: a process that prints flat out (more than [`LOUD_BYTES`] within one
//! [`LOUD_WINDOW`]) has the threads that carry its output (a terminal's reader and actor, a pipe process's reader)
//! lowered to nice [`LOUD_OUTPUT_NICE`] for the rest of its life, so that requests, and quiet terminals whose echo
//! someone is waiting for, win the CPU over hundreds of busy terminals. A quiet process keeps the daemon's
//! priority, so a terminal being typed in does not lose the CPU to ordinary load beside the daemon (a build in
//! another terminal). The lowering is for good: an unprivileged thread may raise its nice value but never take
//! it back down (`RLIMIT_NICE`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Output within one [`LOUD_WINDOW`] past which a process counts as loud: 1 MiB in a second is far more than a
/// person reads, and far less than a program printing flat out (hundreds of MB/s).
pub const LOUD_BYTES: usize = 1024 * 1024;

/// The window [`LOUD_BYTES`] is counted in.
pub const LOUD_WINDOW: Duration = Duration::from_secs(1);

/// The nice value a loud process's output threads take (the least CPU share Linux gives a normal thread).
pub const LOUD_OUTPUT_NICE: i32 = 19;

/// Counted by the thread that reads a process's output; shares the verdict with the process's other output
/// threads ([`Follower`]).
#[derive(Debug)]
pub(crate) struct Loudness {
    window_start: Instant,
    bytes: usize,
    loud: Arc<AtomicBool>,
}

impl Loudness {
    /// A new count for the reader; `loud` is shared with the process's followers.
    pub(crate) fn new(loud: Arc<AtomicBool>) -> Loudness {
        Loudness { window_start: Instant::now(), bytes: 0, loud }
    }

    /// Counts `bytes` just read at `now`; the read that makes the process loud lowers the calling thread's
    /// priority and tells the followers.
    pub(crate) fn read(&mut self, bytes: usize, now: Instant) {
        if self.loud.load(Ordering::Relaxed) {
            return;
        }
        if now.saturating_duration_since(self.window_start) >= LOUD_WINDOW {
            self.window_start = now;
            self.bytes = 0;
        }
        self.bytes += bytes;
        if self.bytes > LOUD_BYTES {
            self.loud.store(true, Ordering::Relaxed);
            yield_cpu();
        }
    }
}

/// Another output thread of a process: lowers its own priority once the process is loud.
#[derive(Debug)]
pub(crate) struct Follower {
    loud: Arc<AtomicBool>,
    lowered: bool,
}

impl Follower {
    /// A follower of the verdict in `loud`.
    pub(crate) fn new(loud: Arc<AtomicBool>) -> Follower {
        Follower { loud, lowered: false }
    }

    /// Called by the follower's thread as output passes: lowers its priority once, when the process is loud.
    pub(crate) fn check(&mut self) {
        if !self.lowered && self.loud.load(Ordering::Relaxed) {
            self.lowered = true;
            yield_cpu();
        }
    }
}

/// Gives the calling thread [`LOUD_OUTPUT_NICE`]; a refusal only leaves its priority as it was.
fn yield_cpu() {
    if let Err(error) = super::sys::set_thread_nice(LOUD_OUTPUT_NICE) {
        tracing::debug!(%error, "a loud process's output thread keeps its priority");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's nice value (field 19 of `/proc/thread-self/stat`).
    fn own_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        stat[stat.rfind(')').unwrap() + 1..].split_whitespace().nth(16).unwrap().parse().unwrap()
    }

    #[test]
    fn quiet_output_keeps_the_priority_and_flat_out_output_lowers_every_output_thread() {
        let loud = Arc::new(AtomicBool::new(false));
        let (reader_loud, follower_loud) = (loud.clone(), loud.clone());
        let reader = std::thread::spawn(move || {
            let mut loudness = Loudness::new(reader_loud);
            let start = Instant::now();
            // A person's pace: under the bound in every window, however long it goes on.
            for second in 0..10u32 {
                loudness.read(LOUD_BYTES / 2, start + LOUD_WINDOW * second + Duration::from_millis(1));
                loudness.read(LOUD_BYTES / 2 - 1, start + LOUD_WINDOW * second + Duration::from_millis(900));
            }
            let quiet = own_nice();
            // Flat out: past the bound within one window.
            let later = start + LOUD_WINDOW * 20;
            loudness.read(LOUD_BYTES, later);
            loudness.read(1, later + Duration::from_millis(1));
            (quiet, own_nice())
        });
        let (quiet, loud_nice) = reader.join().unwrap();
        assert_eq!(quiet, 0, "quiet output kept the daemon's priority");
        assert_eq!(loud_nice, LOUD_OUTPUT_NICE, "the reader of a loud process yields");
        assert!(loud.load(Ordering::Relaxed));
        let follower = std::thread::spawn(move || {
            let mut follower = Follower::new(follower_loud);
            let before = own_nice();
            follower.check();
            (before, own_nice())
        });
        assert_eq!(follower.join().unwrap(), (0, LOUD_OUTPUT_NICE), "the actor follows the reader");
        assert_eq!(own_nice(), 0, "other threads keep their priority");
    }
}

//! Rate limits for the log lines a client can cause (malformed frames, refused peers, failed accepts): each kind
//! writes at most [`LOG_BURST`] lines per [`LOG_WINDOW`]; what is held back is counted, and the count is written
//! with the next line of that kind (`suppressed = N`) or, at the latest, when the daemon stops.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many lines of one kind may be written per [`LOG_WINDOW`].
pub const LOG_BURST: u32 = 10;

/// The window over which [`LOG_BURST`] counts.
pub(crate) const LOG_WINDOW: Duration = Duration::from_secs(60);

/// The limiter of one kind of log line.
#[derive(Debug)]
pub(crate) struct LogLimit {
    /// The kind, as named in the stop's report.
    kind: &'static str,
    window: Mutex<Window>,
}

#[derive(Debug)]
struct Window {
    /// When the current window began; `None` before the first line.
    start: Option<Instant>,
    /// Lines written in the current window.
    written: u32,
    /// Lines held back and not reported yet.
    suppressed: u64,
}

impl LogLimit {
    /// A limiter for lines of `kind`.
    pub(crate) const fn new(kind: &'static str) -> LogLimit {
        LogLimit { kind, window: Mutex::new(Window { start: None, written: 0, suppressed: 0 }) }
    }

    /// Whether a line may be written now: `Some(n)` when it may, `n` being how many lines of this kind were
    /// held back since the last one written (to be logged with it); `None` when it is held back (and counted).
    pub(crate) fn admit(&self) -> Option<u64> {
        self.admit_at(Instant::now())
    }

    /// [`Self::admit`] at time `now`.
    pub(crate) fn admit_at(&self, now: Instant) -> Option<u64> {
        let mut window = self.window.lock().unwrap_or_else(|e| e.into_inner());
        if window.start.is_none_or(|start| now.saturating_duration_since(start) >= LOG_WINDOW) {
            window.start = Some(now);
            window.written = 0;
        }
        if window.written >= LOG_BURST {
            window.suppressed += 1;
            return None;
        }
        window.written += 1;
        Some(std::mem::take(&mut window.suppressed))
    }

    /// Takes the count of lines held back and not reported yet.
    pub(crate) fn take_suppressed(&self) -> u64 {
        std::mem::take(&mut self.window.lock().unwrap_or_else(|e| e.into_inner()).suppressed)
    }
}

/// Frames that are not a frame at all (closed unanswered, SPEC F11).
pub(crate) static MALFORMED_FRAMES: LogLimit = LogLimit::new("malformed frames");

/// Connections from another user (closed unanswered, SPEC L5).
pub(crate) static FOREIGN_PEERS: LogLimit = LogLimit::new("connections from another user");

/// `accept` failures (out of descriptors, say).
pub(crate) static ACCEPT_FAILURES: LogLimit = LogLimit::new("failed accepts");

/// Connection threads that could not be started.
pub(crate) static CONNECTION_THREADS: LogLimit = LogLimit::new("connection threads not started");

/// Failed rewrites of the record of process groups (its runtime directory deleted, say): one per process a
/// client starts or ends.
pub(crate) static RECORD_WRITES: LogLimit = LogLimit::new("failed record writes");

/// Frames refused because their budget of buffered bytes was spent (SPEC N10).
pub(crate) static SHORT_OF_ROOM: LogLimit = LogLimit::new("frames refused for want of room");

/// Subscriptions and waits refused because the held connections reached their cap (SPEC N11).
pub(crate) static HELD_CAP: LogLimit = LogLimit::new("held connections refused");

/// Every limiter, for [`report_suppressed`].
static ALL: [&LogLimit; 7] = [
    &MALFORMED_FRAMES,
    &FOREIGN_PEERS,
    &ACCEPT_FAILURES,
    &CONNECTION_THREADS,
    &RECORD_WRITES,
    &SHORT_OF_ROOM,
    &HELD_CAP,
];

/// Logs how many lines of each kind were held back and not reported yet (called when the daemon stops).
pub(crate) fn report_suppressed() {
    for limit in ALL {
        let suppressed = limit.take_suppressed();
        if suppressed > 0 {
            tracing::warn!(kind = limit.kind, suppressed, "log lines held back by the rate limit");
        }
    }
}

/// Writes a `tracing::warn!` line through a [`LogLimit`], adding `suppressed = N` (the lines held back since
/// the last one written).
macro_rules! limited_warn {
    ($limit:expr, $($rest:tt)+) => {
        if let Some(suppressed) = $limit.admit() {
            tracing::warn!(suppressed, $($rest)+);
        }
    };
}
pub(crate) use limited_warn;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_written_then_lines_are_counted_until_the_next_window() {
        let limit = LogLimit::new("test");
        let start = Instant::now();
        for _ in 0..LOG_BURST {
            assert_eq!(limit.admit_at(start), Some(0));
        }
        for _ in 0..1000 {
            assert_eq!(limit.admit_at(start + LOG_WINDOW / 2), None);
        }
        // The first line of the next window reports what was held back, once.
        assert_eq!(limit.admit_at(start + LOG_WINDOW), Some(1000));
        assert_eq!(limit.admit_at(start + LOG_WINDOW), Some(0));
        assert_eq!(limit.take_suppressed(), 0);
    }

    #[test]
    fn what_is_held_back_can_be_taken_once() {
        let limit = LogLimit::new("test");
        let start = Instant::now();
        for _ in 0..LOG_BURST + 7 {
            limit.admit_at(start);
        }
        assert_eq!(limit.take_suppressed(), 7);
        assert_eq!(limit.take_suppressed(), 0);
    }
}

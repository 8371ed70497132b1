//! Wall-clock time as the protocol carries it: milliseconds since the Unix epoch (a process's `started_at` and
//! `exited_at`, a handoff ticket's `expires_at`).

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH);
    since.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

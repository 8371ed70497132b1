//! Where the time of an in-place upgrade goes, as the daemon's own log tells it: the timestamps of the lines it
//! writes at each step of the upgrade (`tracing`'s default format, at the default `info` level), and the size
//! of the state the new image took, and the table of them. Only read for the report: a log without these lines
//! leaves the table empty with a note, and the other measurements stand.

use std::path::Path;

use anyhow::{Context as _, Result};

use crate::stats::{Row, Table, Unit};

/// The line the old image writes once the program passed its preflight and the upgrade starts.
const STARTED: &str = "upgrading in place program=";
/// The connections' requests answered, every terminal's screen prepared while it ran on; `bytes=` is their size.
const PREPARED: &str = "screens prepared";
/// Every process captured: the terminals stopped.
const CAPTURED: &str = "processes captured";
/// The subscriptions closed, the state written: the `execve`.
const EXECUTING: &str = "executing the new image in place";
/// The new image read the state; `bytes=` is its size.
const TOOK: &str = "took the upgrade state";
/// The new image restored every process and serves.
const RESUMED: &str = "the daemon resumed after an in-place upgrade";

/// The seconds in a day, for timestamps on both sides of midnight.
const DAY_S: f64 = 86_400.0;

/// One upgrade's steps, in milliseconds, and its state's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Phases {
    /// From the start to every terminal's screen prepared: the requests in flight answered, the snapshots made
    /// while the terminals ran on.
    pub prepare_ms: f64,
    /// From then to every process captured: the terminals stopped and their state taken.
    pub capture_ms: f64,
    /// From the capture to the `execve`: the subscriptions write their last frame and close, the state is
    /// written.
    pub handover_ms: f64,
    /// From the `execve` to the state read by the new image.
    pub exec_ms: f64,
    /// From the state read to the daemon serving again with every process restored.
    pub restore_ms: f64,
    /// The state the new image took, MiB.
    pub state_mib: f64,
    /// The terminals' screen files prepared, MiB.
    pub screens_mib: f64,
}

impl Phases {
    /// From the first terminal stopped to every process restored, its reader reading again: the longest any
    /// terminal's output was not read.
    pub(super) fn unread_ms(&self) -> f64 {
        self.capture_ms + self.handover_ms + self.exec_ms + self.restore_ms
    }

    /// From the start to the daemon serving again.
    pub(super) fn total_ms(&self) -> f64 {
        self.prepare_ms + self.capture_ms + self.handover_ms + self.exec_ms + self.restore_ms
    }
}

/// The table of where the time of an upgrade goes.
pub(super) struct Steps {
    table: Table,
}

/// The rows of one terminal count in [`Steps`]: indexes in its table.
pub(super) struct StepRows {
    total: usize,
    unread: usize,
    prepare: usize,
    capture: usize,
    handover: usize,
    exec: usize,
    restore: usize,
    state: usize,
    screens: usize,
}

impl Steps {
    pub(super) fn new() -> Steps {
        Steps {
            table: Table::new(
                "upgrade_phases",
                "In-place upgrade: where the time goes",
                format!(
                    "The upgrades of the pause table, by the timestamps of the lines the daemon logs at each step \
                     (its log at the default `info` level): from `{}` (the program passed its preflight) to `{}` \
                     (the requests in flight answered, each terminal's snapshot and ring written to its screen \
                     file while it runs on), to `{}` (the terminals stopped, their state taken: the pause starts \
                     here), to `{}` (every subscription wrote its last frame and closed, the state written), to \
                     `{}` (the new image read the state), to `{}` (every process restored, connections accepted \
                     again; the emulators are rebuilt after this, while the terminals serve). Each step is \
                     compared with the whole (its share of the median). Output not read: from the first terminal \
                     stopped to every reader reading again (capture, handover, exec and restore), the longest \
                     time any terminal's output waits in its PTY; the goal (issue 30) is under 100 ms at 16 \
                     terminals. State: the size of what the new image took \
                     beside the screen files. Milliseconds.",
                    STARTED.trim_end_matches(" program="),
                    PREPARED,
                    CAPTURED,
                    EXECUTING,
                    TOOK,
                    RESUMED
                ),
            ),
        }
    }

    /// The rows of `n` terminals.
    pub(super) fn add(&mut self, n: usize) -> StepRows {
        let total = format!("total_{n}");
        let vs = [total.as_str()];
        let mut row = |key: &str, label: &str, unit: Unit, vs: &[&str]| {
            self.table.add(Row::new(format!("{key}_{n}"), format!("{label}, {}", terminals(n)), unit).vs(vs))
        };
        StepRows {
            total: row("total", "whole upgrade", Unit::Milliseconds, &[]),
            unread: row("unread", "output not read (capture to restore)", Unit::Milliseconds, &vs),
            prepare: row("prepare", "requests answered, screens prepared", Unit::Milliseconds, &vs),
            capture: row("capture", "processes captured", Unit::Milliseconds, &vs),
            handover: row("handover", "subscriptions closed, state written", Unit::Milliseconds, &vs),
            exec: row("exec", "execve and state read", Unit::Milliseconds, &vs),
            restore: row("restore", "processes restored", Unit::Milliseconds, &vs),
            state: row("state", "state size", Unit::Mebibytes, &[]),
            screens: row("screens", "screen files", Unit::Mebibytes, &[]),
        }
    }

    /// Records what one daemon's log showed of its `expected` upgrades.
    pub(super) fn push(&mut self, rows: &StepRows, found: &[Phases], expected: usize) {
        for phases in found {
            self.table.push_sample(rows.total, phases.total_ms());
            self.table.push_sample(rows.unread, phases.unread_ms());
            self.table.push_sample(rows.prepare, phases.prepare_ms);
            self.table.push_sample(rows.capture, phases.capture_ms);
            self.table.push_sample(rows.handover, phases.handover_ms);
            self.table.push_sample(rows.exec, phases.exec_ms);
            self.table.push_sample(rows.restore, phases.restore_ms);
            self.table.push_sample(rows.state, phases.state_mib);
            self.table.push_sample(rows.screens, phases.screens_mib);
        }
        if found.len() < expected {
            let note = format!("the daemon's log showed the steps of {} of {expected} upgrades", found.len());
            self.table.note(rows.total, note);
        }
    }

    pub(super) fn finish(self) -> Table {
        self.table.finish()
    }
}

/// `1 terminal`, `16 terminals`.
pub(super) fn terminals(n: usize) -> String {
    if n == 1 { "1 terminal".to_owned() } else { format!("{n} terminals") }
}

/// Every complete upgrade in the daemon log at `path`, in order.
pub(super) fn read(path: &Path) -> Result<Vec<Phases>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(parse(&text))
}

/// Every complete upgrade in the log `text`, in order; a step whose line is missing drops its upgrade.
fn parse(text: &str) -> Vec<Phases> {
    let mut found = Vec::new();
    // The times of the steps seen of the upgrade under way, and its state's and screens' sizes.
    let mut steps: Vec<f64> = Vec::new();
    let (mut state_bytes, mut screen_bytes) = (None, None);
    for line in text.lines() {
        let Some(at) = line.split_whitespace().next().and_then(seconds_of_day) else { continue };
        let step =
            [STARTED, PREPARED, CAPTURED, EXECUTING, TOOK, RESUMED].iter().position(|marker| line.contains(marker));
        match step {
            Some(0) => {
                steps = vec![at];
                (state_bytes, screen_bytes) = (None, None);
            }
            Some(n) if n == steps.len() => {
                steps.push(at);
                match n {
                    1 => screen_bytes = field(line, "bytes="),
                    4 => state_bytes = field(line, "bytes="),
                    _ => {}
                }
            }
            // A step out of order (an upgrade that fell back): this upgrade is not counted.
            Some(_) => steps.clear(),
            None => {}
        }
        if let ([start, prepared, captured, executing, took, resumed], Some(state), Some(screens)) =
            (steps.as_slice(), state_bytes, screen_bytes)
        {
            let ms = |from: f64, to: f64| (to - from).rem_euclid(DAY_S) * 1e3;
            found.push(Phases {
                prepare_ms: ms(*start, *prepared),
                capture_ms: ms(*prepared, *captured),
                handover_ms: ms(*captured, *executing),
                exec_ms: ms(*executing, *took),
                restore_ms: ms(*took, *resumed),
                state_mib: state / f64::from(1u32 << 20),
                screens_mib: screens / f64::from(1u32 << 20),
            });
            steps.clear();
        }
    }
    found
}

/// The seconds since midnight of an RFC 3339 UTC timestamp (`2026-12-05T08:37:55.635441Z`).
fn seconds_of_day(stamp: &str) -> Option<f64> {
    let (_, time) = stamp.split_once('T')?;
    let mut parts = time.strip_suffix('Z')?.split(':');
    let (hours, minutes, seconds) = (parts.next()?, parts.next()?, parts.next()?);
    let hours: f64 = hours.parse().ok()?;
    let minutes: f64 = minutes.parse().ok()?;
    let seconds: f64 = seconds.parse().ok()?;
    Some(hours * 3600.0 + minutes * 60.0 + seconds)
}

/// The number after `key` in a log line (`bytes=98452763`).
fn field(line: &str, key: &str) -> Option<f64> {
    let (_, rest) = line.split_once(key)?;
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_of_each_complete_upgrade_are_read_from_the_log() {
        let log = "\
2026-12-05T08:37:54.602812Z  INFO the daemon is ready and waits for an owner pid=2912
2026-12-05T08:37:55.635373Z  INFO connection{n=1 op=\"own\"}: upgrade asked for; the program passed its checks
2026-12-05T08:37:55.635441Z  INFO upgrading in place program=/tmp/p/opencode-pty version=0.1.0
2026-12-05T08:37:55.735441Z  INFO screens prepared processes=16 bytes=52428800
2026-12-05T08:37:55.858200Z  INFO processes captured processes=16 failed=0
2026-12-05T08:37:56.007862Z  INFO executing the new image in place program=/tmp/p/opencode-pty kept=20
2026-12-05T08:37:56.040809Z  INFO resuming after an upgrade pid=2912 fallback=true
2026-12-05T08:37:56.107661Z  INFO took the upgrade state format=1 bytes=104857600
2026-12-05T08:37:56.208503Z  INFO processes restored failed=0
2026-12-05T08:37:56.217417Z  INFO the daemon resumed after an in-place upgrade pid=2912 processes=16 restored_ms=47
2026-12-05T23:59:59.900000Z  INFO upgrading in place program=/tmp/p/opencode-pty version=0.1.0
2026-12-05T23:59:59.910000Z  INFO screens prepared processes=1 bytes=0
2026-12-05T23:59:59.950000Z  INFO processes captured processes=1 failed=0
2026-12-06T00:00:00.000000Z  WARN the upgrade did not happen; this image serves on
2026-12-06T00:00:01.000000Z  INFO upgrading in place program=/tmp/p/opencode-pty version=0.1.0
2026-12-06T00:00:01.005000Z  INFO screens prepared processes=1 bytes=0
2026-12-06T00:00:01.010000Z  INFO processes captured processes=1 failed=0
2026-12-06T00:00:01.030000Z  INFO executing the new image in place program=/tmp/p/opencode-pty kept=5
2026-12-06T00:00:01.040000Z  INFO took the upgrade state format=1 bytes=1048576
";
        let found = parse(log);
        assert_eq!(found.len(), 1, "{found:?}");
        let phases = found[0];
        let close = |a: f64, b: f64| (a - b).abs() < 1e-3;
        assert!(close(phases.prepare_ms, 100.0), "{phases:?}");
        assert!(close(phases.capture_ms, 122.759), "{phases:?}");
        assert!(close(phases.screens_mib, 50.0), "{phases:?}");
        assert!(close(phases.handover_ms, 149.662), "{phases:?}");
        assert!(close(phases.exec_ms, 99.799), "{phases:?}");
        assert!(close(phases.restore_ms, 109.756), "{phases:?}");
        assert!(close(phases.state_mib, 100.0), "{phases:?}");
        assert!(close(phases.total_ms(), 581.976), "{phases:?}");
        // Across midnight.
        let log = "\
2026-12-05T23:59:59.900000Z  INFO upgrading in place program=/p version=0.1.0
2026-12-05T23:59:59.940000Z  INFO screens prepared processes=1 bytes=0
2026-12-05T23:59:59.950000Z  INFO processes captured processes=1 failed=0
2026-12-06T00:00:00.000000Z  INFO executing the new image in place program=/p kept=5
2026-12-06T00:00:00.010000Z  INFO took the upgrade state format=1 bytes=1048576
2026-12-06T00:00:00.020000Z  INFO the daemon resumed after an in-place upgrade pid=1 processes=1
";
        let found = parse(log);
        assert_eq!(found.len(), 1);
        assert!(close(found[0].total_ms(), 120.0), "{found:?}");
    }
}

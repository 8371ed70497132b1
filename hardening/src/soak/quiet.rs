//! The soak's terminals that go quiet and wake up again (issue 31): a few `sh` terminals that, cycle after
//! cycle, each print a history that fills their bounds (scrollback and replay ring), then are left alone past
//! the daemon's quiet delay until its RSS stops falling (it compresses quiet terminals, SPEC D18), then wake
//! and print again: half of them by output alone (their observer stays attached all along), half attached
//! afresh first, as a client coming back would be (its checkpoint reads the compressed history). The daemon
//! (theirs alone) is sampled once they have printed and at the end of every quiet phase; the soak fails when a
//! quiet phase does not come back down to within a margin of the first one's, or falls too little from full.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use opencode_pty_bench::daemon::{self, Daemon};
use opencode_pty_client::{CreatePty, Event, Role, Subscription};
use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::load::Holdings;

/// Terminals that go quiet and wake up again.
pub const SLEEPERS: usize = 4;

/// Bytes of the history each of them prints per wake: well over the default 10,000 lines of scrollback
/// (about 1 MiB of this text) and the 2 MiB replay ring, so every wake fills both again.
pub const HISTORY_BYTES: usize = 4 << 20;

/// How far above the first quiet phase's RSS a later one may be: allocator noise, not memory a quiet terminal
/// failed to give back (one sleeper's full history is about 11 MiB, a sixth of the daemon's quiet RSS).
pub const QUIET_MARGIN: f64 = 0.10;

/// How much lower than full every quiet phase's RSS must be: it comes back down at all.
pub const MIN_FALL: f64 = 0.20;

/// How long one wake (an attach and the history printed) may take.
const WAKE_TIMEOUT: Duration = Duration::from_secs(120);

/// What a sleeper prints after its history, and how the soak knows it is done (the shell's echo of the
/// command line shows the `printf` format, not this).
const DONE: &[u8] = b"SOAK-QUIET-DONE";

/// One cycle: the daemon's RSS once the sleepers had printed, and what it held at the end of the quiet phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phase {
    /// Minutes since the soak started, at the end of the quiet phase.
    pub minute: f64,
    /// The daemon's RSS right after every sleeper printed its history, in KiB.
    pub full_kib: u64,
    /// The daemon at the end of the quiet phase.
    pub quiet: Holdings,
    /// Whether its RSS had stopped falling (else the bound of the wait ended the phase).
    pub steady: bool,
}

/// Writes the sleepers' history into `dir`: log lines with SGR colours, seeded, `HISTORY_BYTES` long.
pub(super) fn write_history(dir: &Path) -> Result<PathBuf> {
    const WORDS: [&str; 12] =
        ["INFO", "WARN", "request", "done", "in", "ms", "worker", "cache", "miss", "Compiling", "src/lib.rs:7", "ok"];
    let mut rng = StdRng::seed_from_u64(31);
    let mut text = String::with_capacity(HISTORY_BYTES + 256);
    let mut line = 0u64;
    while text.len() < HISTORY_BYTES {
        line += 1;
        let colour = 31 + rng.random_range(0..7);
        let _ = write!(text, "\x1b[{colour}m{line:>8}\x1b[0m");
        for _ in 0..rng.random_range(4..14) {
            let _ = write!(text, " {}", WORDS[rng.random_range(0..WORDS.len())]);
        }
        let _ = write!(text, " {}\r\n", rng.random::<u32>());
    }
    let path = dir.join("soak-history.log");
    std::fs::File::create(&path)?.write_all(text.as_bytes())?;
    Ok(path)
}

/// Cycles the sleepers of `daemon` until `end`: wake and print, then quiet; returns every cycle's phase.
pub(super) async fn cycles(daemon: &Daemon, root: &Path, end: Instant) -> Result<Vec<Phase>> {
    let started = Instant::now();
    let client = daemon.client();
    let history = write_history(root)?;
    let command = format!("cat '{}'; printf 'SOAK-QUIET-%s\\n' DONE\n", history.display());
    let mut sleepers = Vec::with_capacity(SLEEPERS);
    for n in 0..SLEEPERS {
        let id = client.create_pty(CreatePty::new("sh", root.display().to_string())).await?.id;
        // Half keep one observer for the whole soak; the others are attached afresh at every wake.
        let kept = match n % 2 {
            0 => Some(daemon::subscribe(client, id, 0, "soak-kept", Role::Observer).await?),
            _ => None,
        };
        sleepers.push((id, kept));
    }
    let mut phases = Vec::new();
    while Instant::now() < end {
        let mut waits = tokio::task::JoinSet::new();
        for (n, (id, kept)) in sleepers.iter_mut().enumerate() {
            let subscription = match kept.take() {
                Some(subscription) => subscription,
                None => daemon::subscribe(client, *id, 0, "soak-wake", Role::Observer).await?,
            };
            client.write(*id, None, command.as_bytes()).await?;
            waits.spawn(async move { (n, until_done(subscription).await) });
        }
        while let Some(done) = waits.join_next().await {
            let (n, subscription) = done.context("a sleeper's wait panicked")?;
            let subscription = subscription?;
            if n % 2 == 0 {
                sleepers[n].1 = Some(subscription);
            }
        }
        let full_kib = daemon.status()?.rss_kib;
        let settled = daemon.settled_rss(daemon::QUIET_DELAY, daemon::SETTLE_LIMIT).await?;
        let minute = started.elapsed().as_secs_f64() / 60.0;
        phases.push(Phase { minute, full_kib, quiet: Holdings::of(daemon)?, steady: settled.steady });
    }
    for (id, kept) in sleepers {
        drop(kept);
        client.terminate(id).await?;
    }
    Ok(phases)
}

/// Reads `subscription` until a sleeper's history is printed (its marker), within [`WAKE_TIMEOUT`].
async fn until_done(mut subscription: Subscription) -> Result<Subscription> {
    tokio::time::timeout(WAKE_TIMEOUT, async {
        // The marker may be split across two chunks: keep the end of the last one.
        let mut tail = Vec::new();
        while let Some(event) = subscription.next().await {
            if let Event::Output { bytes, .. } = event.context("a sleeper's subscription ended")? {
                tail.extend_from_slice(&bytes);
                if tail.windows(DONE.len()).any(|window| window == DONE) {
                    return Ok(());
                }
                tail.drain(..tail.len().saturating_sub(DONE.len()));
            }
        }
        bail!("a sleeper's subscription ended before its history was printed")
    })
    .await
    .context("a sleeper did not print its history in time")??;
    Ok(subscription)
}

/// Passes when every quiet phase's RSS is at least [`MIN_FALL`] below its full one's and within
/// [`QUIET_MARGIN`] of the first quiet phase's, and the descriptors stay put; says how far the RSS fell from full
/// to quiet on average.
pub(super) fn judge(phases: &[Phase]) -> Result<String> {
    ensure!(phases.len() >= 2, "too short a soak for the quiet terminals ({} quiet phases; need 2)", phases.len());
    let first = phases[0].quiet.rss_kib as f64;
    let limit = first * (1.0 + QUIET_MARGIN);
    for (n, phase) in phases.iter().enumerate() {
        let (rss, full) = (phase.quiet.rss_kib as f64, phase.full_kib as f64);
        ensure!(
            rss <= full * (1.0 - MIN_FALL),
            "RSS came down too little in quiet phase {} (minute {:.1}): {:.1} MiB full, {:.1} MiB quiet (at least \
             {:.0}% less expected)",
            n + 1,
            phase.minute,
            full / 1024.0,
            rss / 1024.0,
            MIN_FALL * 100.0
        );
        ensure!(
            phase.quiet.fds <= phases[0].quiet.fds,
            "descriptors grew after quiet phase {}: {} then {}",
            n + 1,
            phases[0].quiet.fds,
            phase.quiet.fds
        );
        ensure!(
            rss <= limit,
            "RSS did not come back down after quiet phase {} (minute {:.1}): {:.1} MiB, the first quiet phase \
             {:.1} MiB (margin {:.0}%)",
            n + 1,
            phase.minute,
            rss / 1024.0,
            first / 1024.0,
            QUIET_MARGIN * 100.0
        );
    }
    let mean = |f: fn(&Phase) -> u64| phases.iter().map(|p| f(p) as f64).sum::<f64>() / phases.len() as f64 / 1024.0;
    let unsteady = phases.iter().filter(|phase| !phase.steady).count();
    Ok(format!(
        "{} quiet phases of {SLEEPERS} terminals: RSS {:.1} MiB full -> {:.1} MiB quiet on average, the first quiet \
         {:.1} MiB, the highest {:.1} MiB{}",
        phases.len(),
        mean(|p| p.full_kib),
        mean(|p| p.quiet.rss_kib),
        first / 1024.0,
        phases.iter().map(|p| p.quiet.rss_kib).max().unwrap_or(0) as f64 / 1024.0,
        if unsteady > 0 { format!(" ({unsteady} still falling at the bound of the wait)") } else { String::new() }
    ))
}

/// `soak-quiet.csv` (minute, full RSS KiB, quiet RSS KiB, fds, threads, children: one line per cycle) and
/// `soak-quiet.svg` (full and quiet RSS over time, on one scale).
pub(super) fn write_phases(out: &Path, phases: &[Phase]) -> Result<()> {
    std::fs::create_dir_all(out)?;
    let mut csv = String::from("minute,full_rss_kib,quiet_rss_kib,fds,threads,children\n");
    for Phase { minute, full_kib, quiet: h, .. } in phases {
        writeln!(csv, "{minute:.2},{full_kib},{},{},{},{}", h.rss_kib, h.fds, h.threads, h.children)?;
    }
    std::fs::write(out.join("soak-quiet.csv"), csv).context("writing soak-quiet.csv")?;
    let max = phases.iter().map(|p| p.full_kib.max(p.quiet.rss_kib) as f64).fold(1.0, f64::max);
    let line = |value: fn(&Phase) -> u64| (phases.iter().map(|p| (p.minute, value(p) as f64)).collect(), max);
    let last = phases.last().map_or(0.0, |p| p.minute);
    let svg = super::chart(
        &format!(
            "{SLEEPERS} terminals waking and going quiet ({last:.1} min): RSS full (green) and quiet (blue), to {:.0} MiB",
            max / 1024.0
        ),
        &[("#2ca02c", line(|p| p.full_kib)), ("#1f77b4", line(|p| p.quiet.rss_kib))],
    );
    std::fs::write(out.join("soak-quiet.svg"), svg).context("writing soak-quiet.svg")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(full_kib: u64, quiet_kib: u64) -> Phase {
        let quiet = Holdings { fds: 10, threads: 10, children: 4, rss_kib: quiet_kib };
        Phase { minute: 0.0, full_kib, quiet, steady: true }
    }

    #[test]
    fn quiet_phases_must_come_back_down_to_the_first_ones_within_the_margin() {
        let good = [phase(90_000, 40_000), phase(91_000, 42_000), phase(90_500, 43_900)];
        assert!(judge(&good).is_ok(), "{:?}", judge(&good));
        let creeping = [phase(90_000, 40_000), phase(91_000, 42_000), phase(95_000, 44_100)];
        let error = judge(&creeping).expect_err("44.1 MiB is over 40 MiB + 10%").to_string();
        assert!(error.contains("not come back down after quiet phase 3"), "{error}");
        let stuck = [phase(50_000, 40_000), phase(50_000, 40_500)];
        let error = judge(&stuck).expect_err("40.5 MiB is not 20% below 50 MiB").to_string();
        assert!(error.contains("too little in quiet phase 2"), "{error}");
        assert!(judge(&good[..1]).is_err(), "one quiet phase judges nothing");
    }

    #[test]
    fn the_history_fills_its_bounds_and_is_the_same_every_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = std::fs::read(write_history(dir.path()).expect("history")).expect("read");
        assert!(first.len() >= HISTORY_BYTES);
        assert!(first.iter().filter(|&&b| b == b'\n').count() > 40_000, "several times 10,000 lines");
        assert_eq!(std::fs::read(write_history(dir.path()).expect("again")).expect("read"), first);
        assert!(!first.windows(DONE.len()).any(|window| window == DONE));
    }
}

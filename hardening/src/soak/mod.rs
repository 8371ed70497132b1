//! The soak run (`just soak MINUTES`, a recipe only: an hour by default). A dozen terminals under random
//! input, resizes, attaches and detaches, and now and then one terminated and replaced, while the daemon's
//! resident memory and descriptors are sampled each minute (more often in a soak under 12 minutes); it fails
//! when either trends up. Beside them, in a daemon of their own, terminals that go quiet and wake up again
//! (`quiet`, issue 31); it fails when a quiet phase's RSS does not come back down. Both write their samples as
//! CSV and an SVG chart.

mod quiet;

pub use quiet::{HISTORY_BYTES, MIN_FALL, Phase, QUIET_MARGIN, SLEEPERS};

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use opencode_pty_bench::daemon::{self, Daemon};
use opencode_pty_client::{CreatePty, Role};
use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::load::Holdings;

/// Terminals kept busy.
const TERMINALS: usize = 12;

/// Pause between two random actions.
const STEP: Duration = Duration::from_millis(20);

/// How often the busy daemon is sampled in a soak of 12 minutes or more; a shorter one is sampled 12 times.
const SAMPLE_EVERY: Duration = Duration::from_secs(60);

/// Commands typed into the terminals.
const COMMANDS: [&str; 5] =
    ["echo $RANDOM\n", "ls /\n", "seq 1 2000\n", "printf '\\033[31mred\\033[0m\\n'\n", "clear\n"];

/// How much the last third of the run may exceed the first in RSS (a trend, not allocator noise).
const RSS_GROWTH_TOLERANCE: f64 = 0.10;

/// Runs the soak for `minutes` against `binary`, its daemons under `root`; writes `soak.csv`, `soak.svg`,
/// `soak-quiet.csv` and `soak-quiet.svg` into `out`.
pub async fn soak(binary: &Path, root: &Path, out: &Path, minutes: u64) -> Result<String> {
    // The quiet terminals have a daemon of their own: the busy terminals' churn swings RSS by tens of MiB
    // within a minute, which would drown what a quiet terminal gives back.
    let (busy_root, quiet_root) = (root.join("busy"), root.join("quiet"));
    let busy_daemon = Daemon::start(binary, &busy_root).await?;
    let quiet_daemon = Daemon::start(binary, &quiet_root).await?;
    let started = Instant::now();
    let end = started + Duration::from_secs(minutes * 60);
    let every = sample_every(minutes);
    let (busy, phases) =
        tokio::try_join!(busy(&busy_daemon, &busy_root, end, every), quiet::cycles(&quiet_daemon, &quiet_root, end))?;
    busy_daemon.stop().await?;
    quiet_daemon.stop().await?;
    let (samples, actions) = busy;
    write_samples(out, &samples)?;
    quiet::write_phases(out, &phases)?;
    // Both verdicts, whichever fails.
    match (judge(&samples, actions), quiet::judge(&phases)) {
        (Ok(trend), Ok(quiet)) => Ok(format!("{trend}; {quiet}")),
        (trend, quiet) => {
            let say = |verdict: Result<String>| verdict.unwrap_or_else(|error| format!("FAILED: {error:#}"));
            bail!("the soak failed. Busy terminals: {}. Quiet terminals: {}.", say(trend), say(quiet))
        }
    }
}

/// How often a soak of `minutes` samples the busy daemon: each minute, or 12 times in a shorter one.
fn sample_every(minutes: u64) -> Duration {
    (Duration::from_secs(minutes * 60) / 12).clamp(Duration::from_secs(1), SAMPLE_EVERY)
}

/// The busy terminals of `daemon` until `end`, the daemon sampled every `every`: the samples (minute,
/// holdings) and how many actions were taken.
async fn busy(daemon: &Daemon, root: &Path, end: Instant, every: Duration) -> Result<(Vec<(f64, Holdings)>, u64)> {
    let client = daemon.client();
    let cwd = root.display().to_string();
    let mut ids = Vec::with_capacity(TERMINALS);
    for _ in 0..TERMINALS {
        ids.push(client.create_pty(CreatePty::new("sh", cwd.clone())).await?.id);
    }
    let mut rng = StdRng::seed_from_u64(16);
    let mut samples = vec![(0.0, Holdings::of(daemon)?)];
    let started = Instant::now();
    let mut next_sample = started + every;
    let mut actions = 0u64;
    while Instant::now() < end {
        let slot = rng.random_range(0..ids.len());
        let id = ids[slot];
        match rng.random_range(0..100) {
            0..60 => client.write(id, None, COMMANDS[rng.random_range(0..COMMANDS.len())].as_bytes()).await?,
            60..75 => {
                let (cols, rows) = (rng.random_range(20..=200), rng.random_range(5..=60));
                client.resize(id, None, cols.try_into()?, rows.try_into()?).await?;
            }
            75..97 => {
                let mut subscription = daemon::subscribe(client, id, 0, "soak", Role::Observer).await?;
                let _ = tokio::time::timeout(Duration::from_millis(50), subscription.next()).await;
            }
            _ => {
                client.terminate(id).await?;
                ids[slot] = client.create_pty(CreatePty::new("sh", cwd.clone())).await?.id;
            }
        }
        actions += 1;
        if Instant::now() >= next_sample {
            samples.push((started.elapsed().as_secs_f64() / 60.0, Holdings::of(daemon)?));
            next_sample += every;
        }
        tokio::time::sleep(STEP).await;
    }
    for id in ids {
        client.terminate(id).await?;
    }
    Ok((samples, actions))
}

/// Passes when neither RSS nor descriptors trend up: the last third's mean is compared with the middle third's.
/// The first third is the warm-up: every terminal's replay buffer and scrollback fill up to their bounds then,
/// which is growth by design (SPEC D7), not a leak.
fn judge(samples: &[(f64, Holdings)], actions: u64) -> Result<String> {
    let body = &samples[1.min(samples.len())..];
    ensure!(body.len() >= 6, "too short a soak to judge a trend ({} samples; run at least a minute)", body.len());
    let third = body.len() / 3;
    let mean = |part: &[(f64, Holdings)], f: fn(&Holdings) -> f64| {
        part.iter().map(|(_, h)| f(h)).sum::<f64>() / part.len() as f64
    };
    let (first, last) = (&body[third..2 * third], &body[body.len() - third..]);
    let rss = (mean(first, |h| h.rss_kib as f64), mean(last, |h| h.rss_kib as f64));
    let fds = (mean(first, |h| h.fds as f64), mean(last, |h| h.fds as f64));
    ensure!(rss.1 <= rss.0 * (1.0 + RSS_GROWTH_TOLERANCE), "RSS trends up: {:.0} KiB then {:.0} KiB", rss.0, rss.1);
    ensure!(fds.1 <= fds.0 + 1.0, "descriptors trend up: {:.1} then {:.1}", fds.0, fds.1);
    Ok(format!(
        "{actions} actions over {} samples: RSS {:.1} -> {:.1} MiB, fds {:.1} -> {:.1} (middle third -> last third)",
        samples.len(),
        rss.0 / 1024.0,
        rss.1 / 1024.0,
        fds.0,
        fds.1
    ))
}

/// `soak.csv` (minute, RSS KiB, fds, threads, children) and `soak.svg` (RSS and fds over time, each scaled to
/// its own maximum).
fn write_samples(out: &Path, samples: &[(f64, Holdings)]) -> Result<()> {
    std::fs::create_dir_all(out)?;
    let mut csv = String::from("minute,rss_kib,fds,threads,children\n");
    for (minute, h) in samples {
        writeln!(csv, "{minute:.2},{},{},{},{}", h.rss_kib, h.fds, h.threads, h.children)?;
    }
    std::fs::write(out.join("soak.csv"), csv).context("writing soak.csv")?;
    let line = |value: fn(&Holdings) -> f64| {
        let points: Vec<(f64, f64)> = samples.iter().map(|(minute, h)| (*minute, value(h))).collect();
        let max = points.iter().map(|(_, y)| *y).fold(1.0, f64::max);
        (points, max)
    };
    let last = samples.last().map_or(1.0, |(minute, _)| *minute);
    let svg = chart(
        &format!("daemon over the soak ({last:.1} min): RSS (blue) and descriptors (orange), each to its maximum"),
        &[("#1f77b4", line(|h| h.rss_kib as f64)), ("#ff7f0e", line(|h| h.fds as f64))],
    );
    std::fs::write(out.join("soak.svg"), svg).context("writing soak.svg")?;
    Ok(())
}

/// One line of [`chart`]: its points (minute, value) and the value at the top of the chart.
type Line = (Vec<(f64, f64)>, f64);

/// A small SVG of polylines over minutes, each with its colour.
fn chart(title: &str, lines: &[(&str, Line)]) -> String {
    let (width, height) = (640.0, 240.0);
    let last = lines.iter().flat_map(|(_, (points, _))| points.iter().map(|(x, _)| *x)).fold(1.0 / 60.0, f64::max);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" \
         font-size=\"12\">\n<text x=\"40\" y=\"18\">{title}</text>\n"
    );
    for (colour, (points, max)) in lines {
        let points: Vec<String> = points
            .iter()
            .map(|(x, y)| {
                format!("{:.1},{:.1}", 40.0 + x / last * (width - 60.0), height - 30.0 - y / max * (height - 60.0))
            })
            .collect();
        let _ = writeln!(
            svg,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
            points.join(" ")
        );
    }
    svg.push_str("</svg>\n");
    svg
}

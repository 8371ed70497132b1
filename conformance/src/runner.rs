//! The runner: replays transcripts against a daemon, each on a fresh daemon unless it is shareable, several
//! at once, and prints one line per transcript with what differed when it failed.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::daemon::{Binary, Daemon, DaemonError};
use crate::failure::{Failure, StepError};
use crate::schema::Schema;
use crate::session::Session;
use crate::transcript::{Owner, Step, Transcript, discover};

/// The most transcripts the runner replays at once.
pub(crate) const MAX_JOBS: usize = 64;

/// Where the daemon under test comes from.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A binary the runner starts (and stops) itself.
    Binary(Binary),
    /// A daemon someone else started and owns, found through its registration.
    Registration(PathBuf),
}

/// What the runner is asked to do.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub target: Target,
    pub transcripts: PathBuf,
    pub filter: Option<String>,
    pub jobs: usize,
    pub start_timeout: Duration,
    /// Compare every error message as recorded, not only the texts the protocol fixes.
    pub strict_messages: bool,
}

/// How one transcript went.
#[derive(Debug)]
enum Outcome {
    Pass,
    Skip(String),
    Fail { line: usize, step: String, failure: Failure },
}

/// Loads the transcripts that match the filter.
pub(crate) fn load(dir: &Path, filter: Option<&str>) -> anyhow::Result<Vec<Transcript>> {
    let mut loaded = Vec::new();
    for (id, path) in discover(dir)? {
        if filter.is_none_or(|f| id.contains(f)) {
            loaded.push(Transcript::load(&path, id)?);
        }
    }
    Ok(loaded)
}

/// The total pause a transcript asks for, so the longest ones start first.
fn pauses(transcript: &Transcript) -> u64 {
    transcript
        .steps
        .iter()
        .map(|(_, step)| match step {
            Step::Sleep { ms } | Step::ExpectNone { ms, .. } => *ms,
            _ => 0,
        })
        .sum()
}

/// Runs every transcript; returns whether all passed (skipped ones do not count as failures).
pub(crate) fn run(options: &Options) -> anyhow::Result<bool> {
    let schema = Schema::load()?;
    let mut transcripts = load(&options.transcripts, options.filter.as_deref())?;
    if transcripts.is_empty() {
        anyhow::bail!("no transcript under {} matches", options.transcripts.display());
    }
    transcripts.sort_by_key(|t| std::cmp::Reverse(pauses(t)));
    let started = Instant::now();
    let shared = shared_daemon(options, &transcripts);
    let queue = Mutex::new(transcripts.into_iter().collect::<VecDeque<_>>());
    let totals = Mutex::new((0usize, 0usize, 0usize));
    let jobs = options.jobs.clamp(1, MAX_JOBS);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let Some(transcript) = queue.lock().expect("queue").pop_front() else { break };
                    let begun = Instant::now();
                    let outcome = run_one(options, &schema, shared.as_ref(), &transcript);
                    report(&transcript, &outcome, begun.elapsed());
                    let mut totals = totals.lock().expect("totals");
                    match outcome {
                        Outcome::Pass => totals.0 += 1,
                        Outcome::Fail { .. } => totals.1 += 1,
                        Outcome::Skip(_) => totals.2 += 1,
                    }
                }
            });
        }
    });
    drop(shared);
    let (passed, failed, skipped) = *totals.lock().expect("totals");
    println!(
        "conformance: {passed} passed, {failed} failed, {skipped} skipped in {:.2}s",
        started.elapsed().as_secs_f64()
    );
    if passed == 0 && failed == 0 {
        anyhow::bail!("no transcript ran ({skipped} skipped): nothing was checked");
    }
    Ok(failed == 0)
}

/// The daemon shared by the shareable transcripts: the external one, or one the runner starts.
fn shared_daemon(options: &Options, transcripts: &[Transcript]) -> Option<Result<Daemon, Arc<DaemonError>>> {
    let shared = match &options.target {
        Target::Registration(file) => Daemon::external(file),
        Target::Binary(binary) if transcripts.iter().any(|t| t.header.shareable) => {
            Daemon::start(binary, options.start_timeout, true)
        }
        Target::Binary(_) => return None,
    };
    Some(shared.map_err(Arc::new))
}

fn run_one(
    options: &Options,
    schema: &Schema,
    shared: Option<&Result<Daemon, Arc<DaemonError>>>,
    transcript: &Transcript,
) -> Outcome {
    let fresh;
    let daemon = match (&options.target, transcript.header.shareable, shared) {
        (_, true, Some(Ok(daemon))) => daemon,
        (_, true, Some(Err(error))) => return setup_failure(StepError::SharedDaemon(error.clone())),
        (Target::Registration(_), false, _) => {
            return Outcome::Skip("needs a fresh daemon, and --registration gives one shared daemon".to_owned());
        }
        (Target::Binary(binary), _, _) => {
            let claim = transcript.header.owner == Owner::Runner;
            match Daemon::start(binary, options.start_timeout, claim) {
                Ok(daemon) => {
                    fresh = daemon;
                    &fresh
                }
                Err(error) => return setup_failure(StepError::DaemonStart(error)),
            }
        }
        (Target::Registration(_), true, None) => return setup_failure(StepError::NoSharedDaemon),
    };
    let announced = &daemon.registration.features;
    if let Some(missing) = transcript.header.features.iter().find(|f| !announced.contains(f)) {
        return Outcome::Skip(format!("needs the feature {missing:?}, which the daemon does not announce"));
    }
    let mut session = match Session::new(daemon, schema) {
        Ok(session) => session,
        Err(error) => return setup_failure(error),
    };
    session.strict_messages = options.strict_messages;
    for (line, step) in &transcript.steps {
        if let Err(failure) = session.step(step) {
            return Outcome::Fail { line: *line, step: summary(step), failure };
        }
    }
    Outcome::Pass
}

fn setup_failure(error: StepError) -> Outcome {
    Outcome::Fail { line: 0, step: "setup".to_owned(), failure: Failure { error: Box::new(error), diff: None } }
}

/// A step in a few words, for the failure line.
pub(crate) fn summary(step: &Step) -> String {
    let text = serde_json::to_string(step).unwrap_or_default();
    let mut cut: String = text.chars().take(160).collect();
    if cut.len() < text.len() {
        cut.push_str("...");
    }
    cut
}

fn report(transcript: &Transcript, outcome: &Outcome, took: Duration) {
    let mut out = std::io::stdout().lock();
    let secs = took.as_secs_f64();
    let _ = match outcome {
        Outcome::Pass => writeln!(out, "PASS  {:<40} {secs:6.2}s", transcript.id),
        Outcome::Skip(why) => writeln!(out, "SKIP  {:<40} {secs:6.2}s  {why}", transcript.id),
        Outcome::Fail { line, step, failure } => {
            let _ = writeln!(out, "FAIL  {:<40} {secs:6.2}s", transcript.id);
            let _ = writeln!(out, "      {}:{line}: {step}", transcript.path.display());
            let _ = writeln!(out, "      {}", failure.error);
            if let Some(diff) = &failure.diff {
                for line in diff.lines() {
                    let _ = writeln!(out, "      {line}");
                }
            }
            Ok(())
        }
    };
}

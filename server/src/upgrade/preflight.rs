//! The upgrade's preflight: what `opencode-pty upgrade-check` (a hidden command) prints about this build, and
//! the running daemon's side, which runs `PROGRAM upgrade-check` with a deadline and refuses a program that
//! cannot run, fails, prints something else, or cannot take this daemon's state, quoting the program's own words.

use std::io::{self, Read as _};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use opencode_pty_protocol::PROTOCOL_VERSION;
use serde::{Deserialize, Serialize};

use super::envelope::{STATE_FORMAT, STATE_FORMATS};
use super::program::{Program, ProgramError};

/// The hidden command that prints a build's [`CheckReport`].
pub(crate) const CHECK_COMMAND: &str = "upgrade-check";

/// How long `PROGRAM upgrade-check` may take (a cold start of a large binary on a loaded machine included)
/// before it is killed and the upgrade refused.
pub(crate) const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of the program's stdout, and of its stderr, is kept; the rest is read and dropped.
pub(crate) const MAX_CHECK_OUTPUT_BYTES: usize = 64 * 1024;

/// How much of what the program said an error quotes.
pub(crate) const MAX_QUOTED_BYTES: usize = 1024;

/// How often the preflight looks whether a program that closed its output has exited.
const EXIT_POLL: Duration = Duration::from_millis(5);

/// What a build says of itself to a daemon that would upgrade to it: one JSON line on stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReport {
    /// The build's version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// The protocol it speaks.
    pub protocol: u32,
    /// The upgrade state formats it can take.
    pub state_formats: Vec<u32>,
    /// The Ghostty revision of its libghostty-vt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libghostty_revision: Option<String>,
}

/// This build's report.
pub fn check_report() -> CheckReport {
    CheckReport {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        protocol: PROTOCOL_VERSION,
        state_formats: STATE_FORMATS.to_vec(),
        libghostty_revision: Some(opencode_pty_vt::ffi::GHOSTTY_REVISION.to_owned()),
    }
}

/// Why a program was refused by the preflight. Nothing has changed when one is returned.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// The program could not be started.
    #[error("cannot run `{program} {CHECK_COMMAND}`: {source}")]
    Run {
        /// The program's path.
        program: String,
        /// What the system said.
        source: io::Error,
    },
    /// The program did not finish in time, and was killed.
    #[error("`{program} {CHECK_COMMAND}` did not finish within {} ms, so it was killed; it said: {said}", after.as_millis())]
    TimedOut {
        /// The program's path.
        program: String,
        /// The deadline.
        after: Duration,
        /// Its words (bounded).
        said: String,
    },
    /// The program exited with a failure.
    #[error("`{program} {CHECK_COMMAND}` failed ({status}); it said: {said}")]
    Failed {
        /// The program's path.
        program: String,
        /// How it ended.
        status: ExitStatus,
        /// Its words (bounded).
        said: String,
    },
    /// The program was killed because the daemon upgraded in place meanwhile (another owner's upgrade).
    #[error("`{program} {CHECK_COMMAND}` was ended: the daemon upgraded in place meanwhile")]
    Interrupted {
        /// The program's path.
        program: String,
    },
    /// The program succeeded but did not print a report.
    #[error("`{program} {CHECK_COMMAND}` did not print a version report ({detail}); it said: {said}")]
    Garbage {
        /// The program's path.
        program: String,
        /// Why its output is not a report.
        detail: String,
        /// Its words (bounded).
        said: String,
    },
    /// The program cannot take the state this daemon writes.
    #[error(
        "{program} (version {}, protocol {}) cannot take this daemon's state: it reads state formats {:?}, and \
         this daemon writes format {ours}", report.version, report.protocol, report.state_formats
    )]
    Unsupported {
        /// The program's path.
        program: String,
        /// What it said of itself.
        report: CheckReport,
        /// The format this daemon writes.
        ours: u32,
    },
}

/// Why an upgrade was refused before anything changed: the program, or its preflight.
#[derive(Debug, thiserror::Error)]
pub enum UpgradeRefused {
    /// The program is not one the daemon may become.
    #[error(transparent)]
    Program(#[from] ProgramError),
    /// The program's preflight failed.
    #[error(transparent)]
    Preflight(#[from] PreflightError),
}

/// Every check before an upgrade: `requested` (absent: this daemon's executable as it is on disk now) may be
/// executed, and its preflight says it can take this daemon's state.
pub fn vet(requested: Option<&std::path::Path>) -> Result<(Program, CheckReport), UpgradeRefused> {
    let program = Program::resolve(requested)?;
    let report = preflight(&program)?;
    Ok((program, report))
}

/// Runs `PROGRAM upgrade-check` within [`PREFLIGHT_TIMEOUT`] and returns its report if it can take the state
/// this daemon writes.
pub(crate) fn preflight(program: &Program) -> Result<CheckReport, PreflightError> {
    preflight_within(program, PREFLIGHT_TIMEOUT)
}

/// [`preflight`] with another deadline (tests of a program that hangs).
pub(crate) fn preflight_within(program: &Program, timeout: Duration) -> Result<CheckReport, PreflightError> {
    let name = program.path().display().to_string();
    let ran = run(program, timeout).map_err(|source| PreflightError::Run { program: name.clone(), source })?;
    if ran.interrupted {
        return Err(PreflightError::Interrupted { program: name });
    }
    let said = ran.said();
    let status = match ran.status {
        None => return Err(PreflightError::TimedOut { program: name, after: timeout, said }),
        Some(status) if !status.success() => return Err(PreflightError::Failed { program: name, status, said }),
        Some(status) => status,
    };
    debug_assert!(status.success());
    let garbage = |detail: String| PreflightError::Garbage { program: name.clone(), detail, said: said.clone() };
    if ran.stdout.dropped > 0 {
        return Err(garbage(format!("more than {MAX_CHECK_OUTPUT_BYTES} bytes on stdout")));
    }
    let text = std::str::from_utf8(&ran.stdout.kept).map_err(|_| garbage("stdout is not UTF-8".to_owned()))?;
    let line = text.trim();
    if line.is_empty() {
        return Err(garbage("nothing on stdout".to_owned()));
    }
    if line.contains('\n') {
        return Err(garbage("more than one line on stdout".to_owned()));
    }
    let report: CheckReport = serde_json::from_str(line).map_err(|e| garbage(format!("not its JSON: {e}")))?;
    if !report.state_formats.contains(&STATE_FORMAT) {
        return Err(PreflightError::Unsupported { program: name, report, ours: STATE_FORMAT });
    }
    Ok(report)
}

/// What a run of the program left: its output (bounded) and how it ended (`None`: killed at the deadline),
/// or that an upgrade killed it.
struct Ran {
    stdout: Captured,
    stderr: Captured,
    status: Option<ExitStatus>,
    interrupted: bool,
}

impl Ran {
    /// The program's words for an error: its stderr, then its stdout, each bounded.
    fn said(&self) -> String {
        let parts: Vec<String> = [("stderr", &self.stderr), ("stdout", &self.stdout)]
            .into_iter()
            .filter_map(|(name, captured)| captured.quoted().map(|words| format!("{name}: {words}")))
            .collect();
        if parts.is_empty() { "nothing".to_owned() } else { parts.join("; ") }
    }
}

/// The first [`MAX_CHECK_OUTPUT_BYTES`] of a stream, and how many more were dropped.
#[derive(Default)]
struct Captured {
    kept: Vec<u8>,
    dropped: usize,
}

impl Captured {
    fn push(&mut self, bytes: &[u8]) {
        let room = MAX_CHECK_OUTPUT_BYTES.saturating_sub(self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..room]);
        self.dropped += bytes.len() - room;
    }

    /// The text, trimmed and cut at [`MAX_QUOTED_BYTES`] (on a character boundary), quoted; `None` when empty.
    fn quoted(&self) -> Option<String> {
        let text = String::from_utf8_lossy(&self.kept);
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let mut end = text.len().min(MAX_QUOTED_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = if end < text.len() || self.dropped > 0 { "…" } else { "" };
        Some(format!("{:?}", format!("{}{cut}", &text[..end])))
    }
}

/// Runs the program's check in a process group of its own, reading both streams until they close, then waits
/// for it; at the deadline, kills the group. Started through the spawn gate and watched by it until reaped: an
/// upgrade carried out meanwhile (another owner's) kills it rather than leave it behind.
fn run(program: &Program, timeout: Duration) -> io::Result<Ran> {
    let deadline = Instant::now() + timeout;
    let pass = crate::process::spawn_gate::GATE.pass();
    let mut child = Command::new(program.path())
        .arg(CHECK_COMMAND)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    // Dropped once the child is reaped, whichever way this returns.
    let watched = pass.watch(child.id());
    let (mut stdout, mut stderr) = (Captured::default(), Captured::default());
    let read = read_both(&mut child, &mut stdout, &mut stderr, deadline);
    let status = match read {
        Ok(true) => wait_until(&mut child, deadline).inspect_err(|_| end(&mut child))?,
        Ok(false) => None,
        Err(error) => {
            end(&mut child);
            return Err(error);
        }
    };
    if status.is_none() {
        end(&mut child);
    }
    Ok(Ran { stdout, stderr, status, interrupted: watched.ended_by_upgrade() })
}

/// Reads the child's stdout and stderr into `out` and `err` until both close (`true`) or the deadline (`false`).
fn read_both(child: &mut Child, out: &mut Captured, err: &mut Captured, deadline: Instant) -> io::Result<bool> {
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut buf = [0u8; 4096];
    while stdout.is_some() || stderr.is_some() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let timeout = PollTimeout::try_from(left.as_millis().max(1)).unwrap_or(PollTimeout::MAX);
        let (out_ready, err_ready) = {
            let mut fds = Vec::with_capacity(2);
            if let Some(pipe) = &stdout {
                fds.push(PollFd::new(pipe.as_fd(), PollFlags::POLLIN));
            }
            if let Some(pipe) = &stderr {
                fds.push(PollFd::new(pipe.as_fd(), PollFlags::POLLIN));
            }
            match poll(&mut fds, timeout) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
            let ready = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| !r.is_empty());
            let first = fds.first().is_some_and(ready);
            let second = fds.get(1).is_some_and(ready);
            if stdout.is_some() { (first, second) } else { (false, first) }
        };
        if out_ready && let Some(pipe) = &mut stdout {
            match pipe.read(&mut buf) {
                Ok(0) => stdout = None,
                Ok(n) => out.push(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if err_ready && let Some(pipe) = &mut stderr {
            match pipe.read(&mut buf) {
                Ok(0) => stderr = None,
                Ok(n) => err.push(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(true)
}

/// Waits for the child to exit, until the deadline (`None` then).
fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        std::thread::sleep(left.min(EXIT_POLL));
    }
}

/// Kills the child's process group (what it started too) and reaps the child.
fn end(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests;

//! The daemon under test: started from a binary in a temporary runtime directory (by the client's launcher)
//! and claimed, or found through a registration someone else wrote. Whatever this module starts it also stops,
//! on drop.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use opencode_pty_client::launch::{Launch, LaunchError, LaunchedDaemon};
use opencode_pty_protocol::Registration;
use serde_json::json;

use crate::conn::{Conn, ConnError, Received};

/// The runtime name the runner gives every daemon it starts.
pub(crate) const RUNTIME_NAME: &str = "conformance";
/// How long a daemon sent SIGTERM gets to exit before it is killed.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);
/// The longest the runner waits for the answer to its own `own`.
const CLAIM_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest registration file the runner reads.
const MAX_REGISTRATION_BYTES: u64 = 64 * 1024;

/// Why a daemon to run transcripts against could not be had.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DaemonError {
    /// The registration file could not be read.
    #[error("{}: {cause}", path.display())]
    Unreadable { path: PathBuf, cause: std::io::Error },
    #[error("{} is over {MAX_REGISTRATION_BYTES} bytes", path.display())]
    TooLarge { path: PathBuf },
    #[error("{} is not a registration: {cause}", path.display())]
    NotARegistration { path: PathBuf, cause: serde_json::Error },
    #[error("cannot make a runtime directory: {0}")]
    RuntimeDir(std::io::Error),
    /// Starting the binary, or waiting for its registration, failed.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The runner's own connection failed.
    #[error(transparent)]
    Conn(#[from] ConnError),
    /// The runner's `own` was answered with something other than `owned` (described).
    #[error("the runner's own was answered {answer}")]
    Refused { answer: String },
    #[error("the runner's own got no answer within {CLAIM_TIMEOUT:?}")]
    Unanswered,
}

/// A daemon binary the runner starts itself.
#[derive(Debug, Clone)]
pub(crate) struct Binary {
    /// The binary, bound to `$daemon_binary` in every transcript.
    pub path: PathBuf,
    /// A program run first with the daemon's whole command line, which must `exec` it keeping its pid (an
    /// emulator, such as `packaging/emulate-aarch64.sh`).
    pub exec_through: Option<PathBuf>,
}

/// A daemon to run transcripts against.
#[derive(Debug)]
pub(crate) struct Daemon {
    pub registration: Registration,
    /// The binary the runner started (as an absolute path), bound to `$daemon_binary` in every transcript; none
    /// for a daemon someone else started.
    pub binary: Option<PathBuf>,
    /// The daemon process, when the runner started it: SIGTERM, [`STOP_GRACE`], SIGKILL when dropped.
    process: Option<LaunchedDaemon>,
    /// The owner channel, when the runner claimed it.
    owner: Option<Conn>,
    /// The temporary root holding the runtime directory, removed on drop (after the daemon is stopped).
    _root: Option<tempfile::TempDir>,
}

/// Reads and parses a registration file.
pub(crate) fn read_registration(path: &Path) -> Result<Registration, DaemonError> {
    let unreadable = |cause| DaemonError::Unreadable { path: path.to_owned(), cause };
    let size = std::fs::metadata(path).map_err(unreadable)?.len();
    if size > MAX_REGISTRATION_BYTES {
        return Err(DaemonError::TooLarge { path: path.to_owned() });
    }
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
    serde_json::from_str(&text).map_err(|cause| DaemonError::NotARegistration { path: path.to_owned(), cause })
}

impl Daemon {
    /// Starts `binary daemon --name conformance --runtime-dir <temp>` (through its wrapper, if any), waits at
    /// most `start_timeout` for the registration naming its pid and, when `claim`, sends `own` on a channel it
    /// keeps until the daemon is dropped.
    pub(crate) fn start(binary: &Binary, start_timeout: Duration, claim: bool) -> Result<Daemon, DaemonError> {
        let root =
            tempfile::Builder::new().prefix("opencode-pty-conformance.").tempdir().map_err(DaemonError::RuntimeDir)?;
        let mut launch = Launch::new(&binary.path, root.path(), RUNTIME_NAME);
        if let Some(wrapper) = &binary.exec_through {
            launch = launch.exec_through(wrapper, std::iter::empty::<&str>());
        }
        let process = launch.deadline(start_timeout).stop_grace(STOP_GRACE).start()?;
        let registration = process.registration().clone();
        let binary = std::path::absolute(&binary.path).ok();
        let mut daemon = Daemon { registration, binary, process: Some(process), owner: None, _root: Some(root) };
        if claim {
            daemon.claim()?;
        }
        Ok(daemon)
    }

    /// A daemon someone else started and owns.
    pub(crate) fn external(registration_file: &Path) -> Result<Daemon, DaemonError> {
        let registration = read_registration(registration_file)?;
        Ok(Daemon { registration, binary: None, process: None, owner: None, _root: None })
    }

    fn claim(&mut self) -> Result<(), DaemonError> {
        let mut conn = Conn::connect(&self.registration.socket)?;
        let own = json!({"token": self.registration.token,
                         "request": {"op": "own", "instance_id": self.registration.instance_id}});
        conn.send_json(own.to_string().as_bytes())?;
        match conn.receive(Instant::now() + CLAIM_TIMEOUT)? {
            Some(Received::Control(v)) if v.get("type").and_then(|t| t.as_str()) == Some("owned") => {
                self.owner = Some(conn);
                Ok(())
            }
            Some(Received::Control(v)) => Err(DaemonError::Refused { answer: v.to_string() }),
            Some(other) => Err(DaemonError::Refused { answer: format!("{other:?}") }),
            None => Err(DaemonError::Unanswered),
        }
    }
}

impl Drop for Daemon {
    /// Closes the owner channel (which alone stops the daemon, O5, unless a handoff is pending); then the
    /// launcher sends SIGTERM (X1) and kills a daemon that has not exited within [`STOP_GRACE`].
    fn drop(&mut self) {
        self.owner = None;
        self.process = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A registration that cannot be used is named with what is wrong, as the runner has always said it.
    #[test]
    fn registration_messages_keep_their_wording() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let error = read_registration(&missing).unwrap_err().to_string();
        assert!(error.starts_with(&format!("{}: ", missing.display())), "{error}");
        let junk = dir.path().join("junk.json");
        std::fs::write(&junk, "{").unwrap();
        let error = read_registration(&junk).unwrap_err().to_string();
        assert!(error.starts_with(&format!("{} is not a registration: ", junk.display())), "{error}");
        let large = dir.path().join("large.json");
        std::fs::write(&large, vec![b' '; 64 * 1024 + 1]).unwrap();
        let error = read_registration(&large).unwrap_err().to_string();
        assert_eq!(error, format!("{} is over 65536 bytes", large.display()));
        assert_eq!(DaemonError::Unanswered.to_string(), "the runner's own got no answer within 10s");
    }
}

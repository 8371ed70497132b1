//! The daemon under test: started from a binary in a temporary runtime directory and claimed, or found
//! through a registration someone else wrote. Whatever this module starts it also stops, on drop.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use opencode_pty_protocol::Registration;
use serde_json::json;

use crate::conn::{Conn, Received};

/// The runtime name the runner gives every daemon it starts.
pub const RUNTIME_NAME: &str = "conformance";
/// How long a daemon sent SIGTERM gets to exit before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(10);
/// How often the runner looks for the registration of a daemon it started.
const REGISTRATION_POLL: Duration = Duration::from_millis(10);
/// The longest the runner waits for the answer to its own `own`.
const CLAIM_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest registration file the runner reads.
const MAX_REGISTRATION_BYTES: u64 = 64 * 1024;

/// A daemon to run transcripts against.
#[derive(Debug)]
pub struct Daemon {
    pub registration: Registration,
    /// The daemon process, when the runner started it.
    child: Option<Child>,
    /// The owner channel, when the runner claimed it.
    owner: Option<Conn>,
    /// The temporary root holding the runtime directory, removed on drop.
    _root: Option<tempfile::TempDir>,
}

/// Reads and parses a registration file.
pub fn read_registration(path: &Path) -> Result<Registration, String> {
    let size = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?.len();
    if size > MAX_REGISTRATION_BYTES {
        return Err(format!("{} is over {MAX_REGISTRATION_BYTES} bytes", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not a registration: {e}", path.display()))
}

impl Daemon {
    /// Starts `binary daemon --name conformance --runtime-dir <temp>`, waits at most `start_timeout` for its
    /// registration and, when `claim`, sends `own` on a channel it keeps until the daemon is dropped.
    pub fn start(binary: &Path, start_timeout: Duration, claim: bool) -> Result<Daemon, String> {
        let root = tempfile::Builder::new()
            .prefix("opencode-pty-conformance.")
            .tempdir()
            .map_err(|e| format!("cannot make a runtime directory: {e}"))?;
        let child = Command::new(binary)
            .args(["daemon", "--name", RUNTIME_NAME, "--runtime-dir"])
            .arg(root.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut daemon = Daemon { registration: placeholder(), child: Some(child), owner: None, _root: None };
        let file = root.path().join(RUNTIME_NAME).join(opencode_pty_protocol::REGISTRATION_FILE);
        daemon._root = Some(root);
        match daemon.await_registration(&file, start_timeout) {
            Ok(registration) => daemon.registration = registration,
            Err(message) => {
                daemon.kill();
                return Err(message);
            }
        }
        if claim {
            daemon.claim()?;
        }
        Ok(daemon)
    }

    /// A daemon someone else started and owns.
    pub fn external(registration_file: &Path) -> Result<Daemon, String> {
        let registration = read_registration(registration_file)?;
        Ok(Daemon { registration, child: None, owner: None, _root: None })
    }

    fn await_registration(&mut self, file: &Path, timeout: Duration) -> Result<Registration, String> {
        let deadline = Instant::now() + timeout;
        let pid = self.child.as_ref().map(Child::id).unwrap_or_default();
        loop {
            if let Ok(registration) = read_registration(file)
                && registration.pid == pid
            {
                return Ok(registration);
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(format!("the daemon exited ({status}) before writing its registration"));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "no registration naming the daemon's pid {pid} appeared at {} within {timeout:?}",
                    file.display()
                ));
            }
            std::thread::sleep(REGISTRATION_POLL);
        }
    }

    fn claim(&mut self) -> Result<(), String> {
        let mut conn = Conn::connect(&self.registration.socket)?;
        let own = json!({"token": self.registration.token,
                         "request": {"op": "own", "instance_id": self.registration.instance_id}});
        conn.send_json(own.to_string().as_bytes())?;
        match conn.receive(Instant::now() + CLAIM_TIMEOUT)? {
            Some(Received::Control(v)) if v.get("type").and_then(|t| t.as_str()) == Some("owned") => {
                self.owner = Some(conn);
                Ok(())
            }
            Some(Received::Control(v)) => Err(format!("the runner's own was answered {v}")),
            Some(other) => Err(format!("the runner's own was answered {other:?}")),
            None => Err(format!("the runner's own got no answer within {CLAIM_TIMEOUT:?}")),
        }
    }

    /// Kills a daemon that never became usable, at once.
    fn kill(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Daemon {
    /// Closes the owner channel (which alone stops the daemon, O5, unless a handoff is pending), sends
    /// SIGTERM (X1), and kills a daemon that has not exited within [`STOP_GRACE`].
    fn drop(&mut self) {
        self.owner = None;
        let Some(child) = self.child.as_mut() else { return };
        if matches!(child.try_wait(), Ok(None))
            && let Ok(pid) = i32::try_from(child.id())
        {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGTERM);
        }
        let deadline = Instant::now() + STOP_GRACE;
        while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(REGISTRATION_POLL);
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn placeholder() -> Registration {
    Registration {
        instance_id: String::new(),
        pid: 0,
        protocol: 0,
        features: Vec::new(),
        socket: String::new(),
        token: String::new(),
    }
}

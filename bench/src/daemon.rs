//! A real daemon binary under test: started in its own runtime directory, claimed through the Rust client (it
//! stops when the owner channel closes), reached only through its socket, measured from `/proc`, and stopped
//! with `shutdown`, or killed when that fails or the handle is dropped. Also the one place that calls
//! `subscribe`, and the drain of a subscription up to `exited`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use opencode_pty_client::{Client, Event, Owner, REGISTRATION_FILE, Response, Role, Subscription, Takeover};

use crate::system::{self, ProcStatus};

/// How long a daemon may take to write its registration.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a stopping daemon may take to exit before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// How often the registration file and a stopping daemon are checked (nothing else tells of either).
const POLL: Duration = Duration::from_millis(1);

/// The runtime directory's name under the root.
const NAME: &str = "bench";

/// A daemon process, killed and reaped when dropped unless it has exited.
#[derive(Debug)]
struct Spawned(Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = kill(Pid::from_raw(i32::try_from(self.0.id()).unwrap_or(0)), Signal::SIGKILL);
            let _ = self.0.wait();
        }
    }
}

/// A daemon this harness started and owns; dropping it kills the daemon (its guardian then ends whatever it
/// ran).
#[derive(Debug)]
pub struct Daemon {
    /// The daemon process.
    process: Spawned,
    /// The owner channel; dropping it stops the daemon.
    owner: Option<Owner>,
    /// The client every request goes through.
    client: Client,
    /// From spawning the binary to a readable registration.
    startup: Duration,
}

impl Daemon {
    /// Starts `binary` with a runtime directory under `root` (which must not hold another daemon), waits for its
    /// registration, connects and claims it. Its log goes to `root/daemon.log`.
    pub async fn start(binary: &Path, root: &Path) -> Result<Daemon> {
        std::fs::create_dir_all(root)?;
        let log = std::fs::File::create(root.join("daemon.log"))?;
        let started = Instant::now();
        let child = Command::new(binary)
            .args(["daemon", "--name", NAME, "--runtime-dir"])
            .arg(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting the daemon {}", binary.display()))?;
        let mut process = Spawned(child);
        let registration = root.join(NAME).join(REGISTRATION_FILE);
        loop {
            if let Some(status) = process.0.try_wait()? {
                bail!("the daemon exited during start-up ({status}); see {}", root.join("daemon.log").display());
            }
            if let Ok(text) = std::fs::read_to_string(&registration)
                && serde_json::from_str::<opencode_pty_protocol::Registration>(&text).is_ok()
            {
                break;
            }
            if started.elapsed() > START_TIMEOUT {
                bail!("no registration within {START_TIMEOUT:?}");
            }
            tokio::time::sleep(POLL).await;
        }
        let startup = started.elapsed();
        let client = Client::discover(&root.join(NAME)).await.context("connecting to the daemon")?;
        let owner = client.own(None).await.context("claiming the daemon")?;
        Ok(Daemon { process, owner: Some(owner), client, startup })
    }

    /// The daemon's process id.
    pub fn pid(&self) -> u32 {
        self.process.0.id()
    }

    /// The client for requests.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// From spawning the binary to a registration that parses.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// The daemon's resident memory and thread count now.
    pub fn status(&self) -> Result<ProcStatus> {
        system::status(self.process.0.id())
    }

    /// Stops the daemon through its owner channel and waits for it to exit (killing it after a bound).
    pub async fn stop(mut self) -> Result<()> {
        if let Some(mut owner) = self.owner.take() {
            // A daemon that does not answer is killed below all the same.
            let _ = tokio::time::timeout(STOP_TIMEOUT, owner.shutdown()).await;
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if self.process.0.try_wait()?.is_some() {
                return Ok(());
            }
            tokio::time::sleep(POLL * 10).await;
        }
        bail!("the daemon did not exit within {STOP_TIMEOUT:?} of `shutdown`; it is killed")
    }
}

/// The one call of `Client::subscribe` in this crate: attaches to `id` from `offset` as `role`, never taking a
/// controller's place.
pub async fn subscribe(client: &Client, id: u64, offset: u64, attachment: &str, role: Role) -> Result<Subscription> {
    Ok(client.subscribe(id, offset, attachment, role, Takeover::Refuse).await?)
}

/// What one drained subscription saw.
#[derive(Debug, Clone, Copy)]
pub struct Drained {
    /// Output bytes after `attached` (the replay is not counted).
    pub bytes: u64,
    /// When `exited` arrived.
    pub exited_at: Instant,
}

/// Reads a subscription until `exited`, counting output bytes, within `limit`. An observer the daemon drops
/// for being too slow ends with an error that says so.
pub async fn drain(mut subscription: Subscription, limit: Duration) -> Result<Drained> {
    let mut bytes = 0u64;
    let read = async {
        while let Some(event) = subscription.next().await {
            match event.context("the subscription ended before `exited` (an observer too slow is dropped)")? {
                Event::Output { bytes: chunk, .. } => bytes += chunk.len() as u64,
                Event::Message(message) if matches!(*message, Response::Exited { .. }) => {
                    return Ok(Instant::now());
                }
                Event::Message(_) => {}
            }
        }
        bail!("the subscription ended without `exited`")
    };
    let exited_at = tokio::time::timeout(limit, read).await.context("no `exited` in time")??;
    Ok(Drained { bytes, exited_at })
}

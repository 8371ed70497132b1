//! A real daemon binary under test: started in its own runtime directory, claimed through the Rust client (it
//! stops when the owner channel closes), reached only through its socket, measured from `/proc`, upgraded in
//! place through the owner channel, and stopped with `shutdown`, or killed when that fails or the handle is
//! dropped. Also the one place that calls `subscribe`, and the drain of a subscription up to `exited`.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use opencode_pty_client::launch::{Launch, LaunchedDaemon};
use opencode_pty_client::{Client, Event, Owner, Response, Role, Subscription, Takeover};

use crate::system::{self, ProcStatus};

/// How long a daemon may take to write its registration.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a stopping daemon may take to exit before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// How long an `upgrade` may take to be answered (its preflight runs the program; a loaded machine is slow).
const UPGRADE_TIMEOUT: Duration = Duration::from_secs(60);

/// How often [`Daemon::settled_rss`] reads the daemon's RSS.
pub const SETTLE_POLL: Duration = Duration::from_millis(200);

/// How long the RSS must stay without falling for [`Daemon::settled_rss`] to call it settled.
pub const SETTLE_STEADY: Duration = Duration::from_secs(1);

/// A fall smaller than this (KiB) is noise to [`Daemon::settled_rss`], not the daemon giving memory back.
pub const SETTLE_SLACK_KIB: u64 = 64;

/// The daemon's default quiet delay before it compresses a terminal (`COMPACT_AFTER`, SPEC D18), which
/// [`Daemon::settled_rss`] waits out at least.
pub const QUIET_DELAY: Duration = Duration::from_secs(2);

/// How long [`Daemon::settled_rss`] waits at most after the quiet delay began (the bound).
pub const SETTLE_LIMIT: Duration = Duration::from_secs(10);

/// What [`Daemon::settled_rss`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// The daemon's RSS at the last reading, in KiB.
    pub rss_kib: u64,
    /// Its anonymous part at the last reading, in KiB.
    pub anon_kib: u64,
    /// How long it waited.
    pub waited: Duration,
    /// Whether the RSS stopped falling (`false`: still falling at the limit).
    pub steady: bool,
}

/// The daemon's log (its stderr), in the root it was started with.
pub const LOG_FILE: &str = "daemon.log";

/// The runtime directory's name under the root.
pub const NAME: &str = "bench";

/// A daemon this harness started and owns; dropping it kills the daemon (its guardian then ends whatever it
/// ran).
#[derive(Debug)]
pub struct Daemon {
    /// The daemon process, killed (SIGKILL, no grace) and reaped when dropped unless it has exited.
    process: LaunchedDaemon,
    /// The owner channel; dropping it stops the daemon.
    owner: Option<Owner>,
    /// The client every request goes through.
    client: Client,
    /// From spawning the binary to a readable registration.
    startup: Duration,
}

impl Daemon {
    /// Starts `binary` with a runtime directory under `root` (which must not hold another daemon), waits for its
    /// registration, connects and claims it. Its log goes to `root/`[`LOG_FILE`].
    pub async fn start(binary: &Path, root: &Path) -> Result<Daemon> {
        Daemon::start_with(binary, root, &[]).await
    }

    /// [`Daemon::start`] with `args` added to the daemon's command line.
    pub async fn start_with(binary: &Path, root: &Path, args: &[&str]) -> Result<Daemon> {
        std::fs::create_dir_all(root)?;
        let log_path = root.join(LOG_FILE);
        let log = std::fs::File::create(&log_path)?;
        let launch = Launch::new(binary, root, NAME)
            .args(args)
            .stderr(Stdio::from(log))
            .deadline(START_TIMEOUT)
            .stop_grace(Duration::ZERO);
        let started = Instant::now();
        // The wait blocks on the daemon's events: off the runtime's threads.
        let process = tokio::task::spawn_blocking(move || launch.start())
            .await
            .context("the start-up wait panicked")?
            .with_context(|| format!("starting the daemon {} (its log: {})", binary.display(), log_path.display()))?;
        let startup = started.elapsed();
        let client = Client::discover(&root.join(NAME)).await.context("connecting to the daemon")?;
        let owner = client.own(None).await.context("claiming the daemon")?;
        Ok(Daemon { process, owner: Some(owner), client, startup })
    }

    /// The daemon's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The client for requests.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// From spawning the binary to a registration that parses.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// `upgrade` on the owner channel to `program` (an absolute path; `None`: the daemon's own executable):
    /// the daemon re-executes it in place. Returns the time from the request to `ok`.
    pub async fn upgrade(&mut self, program: Option<&Path>) -> Result<Duration> {
        let owner = self.owner.as_mut().context("the daemon's owner channel is gone")?;
        let started = Instant::now();
        tokio::time::timeout(UPGRADE_TIMEOUT, owner.upgrade(program))
            .await
            .context("no answer to `upgrade` in time")?
            .context("the upgrade")?;
        Ok(started.elapsed())
    }

    /// The daemon's resident memory and thread count now.
    pub fn status(&self) -> Result<ProcStatus> {
        system::status(self.process.pid())
    }

    /// The daemon's RSS once its terminals have gone quiet and it has given back what it gives back: read every
    /// [`SETTLE_POLL`] from now, until at least `delay` (the daemon's quiet delay) and then [`SETTLE_STEADY`]
    /// have passed without a fall of more than [`SETTLE_SLACK_KIB`], or until `limit`. Whatever the daemon does
    /// (compress or not) is what is measured; the caller must leave its terminals alone meanwhile.
    pub async fn settled_rss(&self, delay: Duration, limit: Duration) -> Result<Settled> {
        let started = Instant::now();
        let mut lowest = self.status()?.rss_kib;
        let mut last_fall = started;
        loop {
            tokio::time::sleep(SETTLE_POLL).await;
            let status = self.status()?;
            let (rss_kib, anon_kib) = (status.rss_kib, status.anon_kib);
            let now = Instant::now();
            if rss_kib + SETTLE_SLACK_KIB < lowest {
                last_fall = now;
            }
            lowest = lowest.min(rss_kib);
            let waited = now - started;
            let steady = waited >= delay + SETTLE_STEADY && now - last_fall >= SETTLE_STEADY;
            if steady || waited >= limit {
                return Ok(Settled { rss_kib, anon_kib, waited, steady });
            }
        }
    }

    /// Stops the daemon through its owner channel and waits for it to exit (killing it after a bound).
    pub async fn stop(mut self) -> Result<()> {
        if let Some(mut owner) = self.owner.take() {
            // A daemon that does not answer is killed below all the same.
            let _ = tokio::time::timeout(STOP_TIMEOUT, owner.shutdown()).await;
        }
        let mut process = self.process;
        // The wait blocks on the daemon's exit: off the runtime's threads. Dropped, it is killed if still there.
        let exited = tokio::task::spawn_blocking(move || process.wait_exit(STOP_TIMEOUT))
            .await
            .context("the wait for the daemon's exit panicked")??;
        if exited.is_none() {
            bail!("the daemon did not exit within {STOP_TIMEOUT:?} of `shutdown`; it is killed")
        }
        Ok(())
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
                // Gone on across an in-place upgrade, at the same offset.
                Event::Message(_) | Event::Resumed(_) => {}
            }
        }
        bail!("the subscription ended without `exited`")
    };
    let exited_at = tokio::time::timeout(limit, read).await.context("no `exited` in time")??;
    Ok(Drained { bytes, exited_at })
}

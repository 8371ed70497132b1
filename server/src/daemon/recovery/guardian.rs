//! The guardian: a helper process (this binary, re-executed as the hidden `guard` command) that outlives the
//! daemon and ends what the daemon's record of process groups lists once the daemon is gone.
//!
//! The daemon holds the only write end of a pipe whose read end is the guardian's stdin, and nothing else of
//! the daemon's (every descriptor the daemon opens is close-on-exec). When the daemon dies, however it dies,
//! the kernel closes that write end and the guardian reads end-of-file at once. It then reads the record and,
//! if it is still its daemon's (same instance id), ends its groups (`daemon::recovery::leftovers`) and removes it, holding
//! the directory's lock, so that nobody acts on it again. After an orderly stop the daemon has removed the
//! record before closing the pipe, so there is nothing to end. The guardian leads its own process group, so a
//! signal to the daemon's group (a terminal's Ctrl-C) does not reach it, and it blocks SIGINT and SIGHUP (the
//! kernel sends SIGHUP, then SIGCONT, to a stopped guardian once the daemon's death orphans its group: it
//! resumes and does its work). SIGTERM and SIGKILL end it.
//!
//! In the daemon, a supervisor thread waits for the guardian: it reaps it after the orderly stop, and starts a
//! new one (after [`GUARDIAN_RESTART_DELAY`]) if it exits while the daemon runs, except while an in-place
//! upgrade hands it over. The upgrade passes the pipe's write end and the guardian's pid to the new image,
//! which adopts them ([`Guardian::adopt`]): the pipe never closes, so the guardian never acts, and it stays
//! this process's child, reaped by the image that stops.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

use super::{leftovers, record};
use crate::process::thread::{Parked, join_reporting};

/// How long the supervisor waits before starting a new guardian when one exits while the daemon runs, so a
/// guardian that cannot run does not make it spin.
pub(crate) const GUARDIAN_RESTART_DELAY: Duration = Duration::from_secs(1);

/// The hidden command that runs a guardian.
pub(crate) const GUARD_COMMAND: &str = "guard";

/// The daemon's side: the pipe the guardian watches and the thread that supervises it.
#[derive(Debug)]
pub(crate) struct Guardian {
    watch: Arc<Mutex<Watch>>,
    /// Dropped to wake the supervisor out of its restart delay.
    stop: Sender<()>,
    supervisor: JoinHandle<Option<()>>,
}

/// A supervisor thread, started and waiting for the guardian it is to supervise ([`Guardian::prepare`]).
#[derive(Debug)]
pub(crate) struct Supervisor(Parked<()>);

/// What the supervisor and the stop share.
#[derive(Debug)]
struct Watch {
    /// The write end of the current guardian's pipe; closing it is the guardian's signal.
    pipe: Option<OwnedFd>,
    /// The current guardian's pid.
    pid: Option<u32>,
    stopping: bool,
    /// An in-place upgrade is handing the guardian over: no new one is started meanwhile (it would inherit
    /// the descriptors the upgrade passes).
    handing_over: bool,
}

/// The guardian process the supervisor waits for: one it started, or one an upgrade's predecessor started
/// (still this process's child, across `execve`).
#[derive(Debug)]
enum Guarded {
    Spawned(Child),
    Adopted(u32),
}

impl Guarded {
    /// Waits for the guardian to exit and reaps it; how it ended, for the log.
    fn wait(&mut self) -> String {
        match self {
            Guarded::Spawned(child) => format!("{:?}", child.wait()),
            Guarded::Adopted(pid) => {
                let pid = nix::unistd::Pid::from_raw(i32::try_from(*pid).unwrap_or(i32::MAX));
                loop {
                    match nix::sys::wait::waitpid(pid, None) {
                        Err(nix::errno::Errno::EINTR) => {}
                        // Gone before this image could wait for it (ECHILD): it is not ours to reap any more.
                        ended => return format!("{ended:?}"),
                    }
                }
            }
        }
    }
}

/// How to start a guardian.
#[derive(Debug, Clone)]
struct Launch {
    record: PathBuf,
    instance_id: String,
}

impl Guardian {
    /// Starts a guardian for the record at `record`, written by the daemon `instance_id`, and its supervisor.
    pub(crate) fn start(record: &Path, instance_id: &str) -> std::io::Result<Guardian> {
        // The supervisor first: once the guardian runs, nothing can fail any more.
        let supervisor = Guardian::prepare()?;
        let launch = Launch { record: record.to_owned(), instance_id: instance_id.to_owned() };
        let (child, pipe) = launch.spawn()?;
        let pid = child.id();
        Ok(Guardian::supervised(supervisor, launch, Guarded::Spawned(child), pid, pipe))
    }

    /// Starts the supervisor thread of a guardian to adopt ([`Guardian::adopt`]): the one step that can fail.
    pub(crate) fn prepare() -> std::io::Result<Supervisor> {
        Parked::spawn("opencode-pty-guardian").map(Supervisor)
    }

    /// Supervises, on `supervisor`, the guardian `pid` an upgrade's predecessor started for the record at
    /// `record` (daemon `instance_id`), whose pipe's write end is `pipe`: this process's child still, which
    /// never saw the pipe close. Reaped at the stop like one started here.
    pub(crate) fn adopt(supervisor: Supervisor, record: &Path, instance_id: &str, pid: u32, pipe: OwnedFd) -> Guardian {
        let launch = Launch { record: record.to_owned(), instance_id: instance_id.to_owned() };
        Guardian::supervised(supervisor, launch, Guarded::Adopted(pid), pid, pipe)
    }

    fn supervised(supervisor: Supervisor, launch: Launch, guarded: Guarded, pid: u32, pipe: OwnedFd) -> Guardian {
        let watch =
            Arc::new(Mutex::new(Watch { pipe: Some(pipe), pid: Some(pid), stopping: false, handing_over: false }));
        let (stop, stopped) = bounded::<()>(0);
        let supervised = watch.clone();
        let supervisor = supervisor.0.run(move || supervise(launch, guarded, &supervised, &stopped));
        Guardian { watch, stop, supervisor }
    }

    /// The guardian for an in-place upgrade: its pid and a duplicate of its pipe's write end (for the
    /// successor, which adopts both), while no new guardian is started ([`Self::handed_back`] ends that).
    /// `None` when no guardian runs now.
    pub(crate) fn hand_over(&self) -> Option<(u32, OwnedFd)> {
        let mut watch = lock(&self.watch);
        watch.handing_over = true;
        let pipe = watch.pipe.as_ref()?.try_clone().inspect_err(
            |error| tracing::warn!(%error, "cannot pass the guardian's pipe on; the successor starts a new guardian"),
        );
        Some((watch.pid?, pipe.ok()?))
    }

    /// The upgrade did not happen: the guardian is this image's again (a new one starts if it exited).
    pub(crate) fn handed_back(&self) {
        lock(&self.watch).handing_over = false;
    }

    /// Closes the pipe, so the guardian finds the (removed) record and exits, and waits for the supervisor,
    /// which reaps it. Call it after the record is removed.
    pub(crate) fn stop(self) {
        {
            let mut watch = lock(&self.watch);
            watch.stopping = true;
            watch.pipe = None;
        }
        drop(self.stop);
        join_reporting(self.supervisor);
    }
}

fn lock(watch: &Mutex<Watch>) -> std::sync::MutexGuard<'_, Watch> {
    watch.lock().unwrap_or_else(|e| e.into_inner())
}

impl Launch {
    /// Starts the guardian process with the read end of a new pipe as its stdin; returns it and the write end.
    fn spawn(&self) -> std::io::Result<(Child, OwnedFd)> {
        // Close-on-exec: neither the guardian nor any other child inherits the write end.
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let mut command = Command::new(own_executable());
        command
            .arg(GUARD_COMMAND)
            .arg("--record")
            .arg(&self.record)
            .arg("--instance")
            .arg(&self.instance_id)
            .current_dir("/")
            .stdin(Stdio::from(read))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .process_group(0);
        // Not while an upgrade passes descriptors across `execve` (the supervisor does not even try then).
        let pass = crate::process::spawn_gate::GATE.pass();
        let child = command.spawn();
        drop(pass);
        let child = child?;
        // The command holds the daemon's copy of the read end; only the guardian keeps one.
        drop(command);
        Ok((child, write))
    }
}

/// This binary: `/proc/self/exe` on Linux, which works even when the file was replaced since it started.
fn own_executable() -> PathBuf {
    if cfg!(target_os = "linux") {
        return PathBuf::from("/proc/self/exe");
    }
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("opencode-pty"))
}

/// The supervisor thread: reaps the guardian; while the daemon runs, starts a new one after each exit (not
/// while an upgrade hands the guardian over).
fn supervise(launch: Launch, mut guarded: Guarded, watch: &Mutex<Watch>, stop: &Receiver<()>) {
    loop {
        let status = guarded.wait();
        {
            let mut current = lock(watch);
            if current.stopping {
                return;
            }
            // Reaped: nothing to hand over any more.
            (current.pid, current.pipe) = (None, None);
        }
        tracing::warn!(%status, "the guardian exited while the daemon runs; starting a new one");
        loop {
            if let Err(RecvTimeoutError::Disconnected) = stop.recv_timeout(GUARDIAN_RESTART_DELAY) {
                return;
            }
            let mut current = lock(watch);
            if current.stopping {
                return;
            }
            if current.handing_over {
                continue;
            }
            match launch.spawn() {
                Ok((next, pipe)) => {
                    current.pid = Some(next.id());
                    current.pipe = Some(pipe);
                    guarded = Guarded::Spawned(next);
                    break;
                }
                Err(error) => tracing::warn!(%error, "cannot start a new guardian"),
            }
        }
    }
}

/// Why the guardian itself failed.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// Setting the signal mask failed.
    #[error("cannot set the signal mask to SIGINT and SIGHUP: {0}")]
    Signals(nix::errno::Errno),
}

/// The `guard` command: waits for end-of-file on stdin (the daemon is gone), then ends what the record at
/// `record` lists if daemon `instance_id` wrote it. Logs what it did.
pub fn serve(record: &Path, instance_id: &str) -> Result<(), GuardError> {
    let mut terminal = SigSet::empty();
    terminal.add(Signal::SIGINT);
    terminal.add(Signal::SIGHUP);
    // Set, not added to: the daemon's mask (SIGTERM blocked) survives the exec, and SIGTERM should end a
    // guardian like any other process.
    pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&terminal), None).map_err(GuardError::Signals)?;
    let mut stdin = std::io::stdin().lock();
    let mut buffer = [0u8; 64];
    loop {
        match stdin.read(&mut buffer) {
            // Nobody writes; bytes would mean nothing.
            Ok(n) if n > 0 => {}
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            _ => break,
        }
    }
    match record::read(record) {
        Ok(None) => {}
        Ok(Some(found)) if found.instance_id != instance_id => {
            tracing::debug!(record = %record.display(), "the record belongs to another daemon now");
        }
        Ok(Some(found)) if found.groups.is_empty() => {}
        Ok(Some(found)) => {
            let ended = leftovers::end_groups(&found);
            // Then nobody acts on this record again: a group id, once emptied, may be handed out anew.
            let forgotten = leftovers::forget(record, instance_id)
                .inspect_err(|error| tracing::warn!(%error, "cannot remove the dead daemon's record"));
            tracing::warn!(
                daemon_pid = found.daemon_pid,
                signalled = ended.signalled,
                recycled = ended.recycled,
                members = ended.members,
                spared = ended.spared,
                record_removed = forgotten.unwrap_or(false),
                "the daemon is gone; ended its process groups"
            );
        }
        Err(error) => tracing::warn!(%error, "the daemon is gone, and its record cannot be read"),
    }
    Ok(())
}

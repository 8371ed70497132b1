//! The old image's side of an in-place upgrade. On the owner channel, [`ask`] checks the program and runs its
//! preflight, then hands the upgrade to the main thread and waits for the outcome. On the main thread,
//! [`carry_out`] stops the runtime watch and the accept loop
//! (keeping the listening socket, with the connections waiting in its backlog), let every connection but the
//! owner's finish what it is doing (a request is answered, a subscription writes its last frame), closes the
//! spawn gate (`process::spawn_gate`: no child may inherit what the exec passes), capture every process with
//! the daemon's facts, and execute the new program with exactly the descriptors the state names.
//! When the `execve` does not happen, everything is put back (the processes restored from the same state, the
//! guardian, the accept loop and the watch) and the owner is told why: this image serves on.

use std::collections::BTreeMap;
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Sender, bounded};

use super::{GUARDIAN, LISTENER, LOCK, OWNER};
use crate::daemon::run::CONNECTION_DRAIN;
use crate::daemon::running::{Acceptor, Running};
use crate::daemon::runtime::Checked;
use crate::daemon::serving::state::{DAEMON_STOPPING, DaemonState as Shared};
use crate::process::spawn_gate::{Closed, GATE};
use crate::service::Handover;
use crate::upgrade::exec::{daemon_args, upgrade};
use crate::upgrade::preflight::{CheckReport, vet};
use crate::upgrade::program::Program;
use crate::upgrade::{DaemonState, STATE_FORMAT};

/// How long the test seam `signal_at_exec` waits for the signal thread to take the signal it sent.
const SIGNAL_AT_EXEC_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// An upgrade the owner asked for, checked, on its way to the main thread.
#[derive(Debug)]
pub(crate) struct Pending {
    /// What to execute.
    pub(crate) program: Program,
    /// What its preflight said of it.
    pub(crate) report: CheckReport,
    /// The owner channel that asked: it stays open across the upgrade.
    pub(crate) owner: Arc<UnixStream>,
    /// Where the main thread says why the upgrade did not happen (it says nothing when it did).
    pub(crate) reply: Sender<String>,
}

/// `upgrade` on the owner channel of `generation` (`owner`): checks `program` (absent: the daemon's own
/// executable as it is on disk now) and its preflight, then has the main thread carry it out. Returns only
/// when this image serves on, with why the upgrade was refused or did not happen; nothing was lost then.
pub(crate) fn ask(state: &Shared, owner: &Arc<UnixStream>, generation: u64, program: Option<String>) -> String {
    if let Err(refused) = state.may_upgrade(generation) {
        return refused.to_owned();
    }
    let requested = program.map(PathBuf::from);
    let (program, report) = match vet(requested.as_deref()) {
        Ok(vetted) => vetted,
        Err(refused) => {
            tracing::warn!(%refused, "upgrade refused");
            return refused.to_string();
        }
    };
    tracing::info!(program = %program.path().display(), version = %report.version, protocol = report.protocol,
        "upgrade asked for; the program passed its checks");
    let (reply, replied) = bounded(1);
    if let Err(refused) = state.request_upgrade(generation, Pending { program, report, owner: owner.clone(), reply }) {
        return refused.to_owned();
    }
    // The main thread answers when the upgrade did not happen, or drops the sender when the daemon stops first.
    replied.recv().unwrap_or_else(|_| DAEMON_STOPPING.to_owned())
}

/// Carries out the upgrade `pending` on the main thread of `running`. Returns only when it did not happen,
/// having told the owner why; the daemon then serves on as before (the connections it closed reconnect).
pub(crate) fn carry_out(running: &mut Running, pending: Pending) {
    let Pending { program, report, owner, reply } = pending;
    tracing::info!(program = %program.path().display(), version = %report.version, "upgrading in place");
    // A preflight still running (a superseded owner's) is ended now, so its connection is answered while the
    // connections are quiesced; the gate, closed before the capture, waits until it is reaped.
    GATE.end_checks();
    if let Some(watch) = running.watch.take() {
        watch.stop();
    }
    let refusal = match running.acceptor.take().and_then(Acceptor::stop) {
        Some(listener) => {
            let refusal = hand_over(running, &program, &owner, &listener);
            serve_on(running, listener);
            refusal
        }
        None => {
            // Polling the socket failed before: nothing can connect to this daemon any more.
            running.state.stop();
            "the daemon's listening socket failed, so it cannot be handed over; the daemon stops".to_owned()
        }
    };
    running.watch_runtime();
    running.state.upgrade_fell_back();
    tracing::warn!(%refusal, "the upgrade did not happen; this image serves on");
    let _ = reply.send(refusal);
}

/// Quiesces the connections, captures every process and executes `program`; returns only when the `execve`
/// did not happen, with why, after putting the processes and the guardian back.
fn hand_over(running: &Running, program: &Program, owner: &Arc<UnixStream>, listener: &UnixListener) -> String {
    let state = &running.state;
    if !state.quiesce_requests(owner, CONNECTION_DRAIN) {
        tracing::warn!(bound = ?CONNECTION_DRAIN, "requests in flight did not all end in time; their connections close");
    }
    let mut runtime = crate::daemon::watch::lock(&running.runtime);
    // What the successor takes must be this daemon's: the watch, stopped now, may not have looked for a second.
    match runtime.check() {
        Checked::Intact => {}
        Checked::Repaired(what) => {
            tracing::warn!(what, "the daemon's {what} was removed or replaced; recreated what it owns");
            if let Some(record) = &running.record
                && let Err(error) = record.rewrite()
            {
                tracing::warn!(%error, "cannot write the record of process groups");
            }
        }
        Checked::Lost(error) => {
            state.stop();
            return format!("the runtime directory was taken by another daemon ({error}), so this one stops");
        }
        Checked::Failed(error) => return format!("the runtime directory is not this daemon's now: {error}"),
    }
    let Some(owner_state) = state.ownership().to_upgrade(Instant::now()) else { return DAEMON_STOPPING.to_owned() };
    let lock = match runtime.lock_file().try_clone() {
        Ok(lock) => OwnedFd::from(lock),
        Err(error) => return format!("cannot pass the service lock on: {error}"),
    };
    let guardian = running.guardian.as_ref().and_then(|guardian| guardian.hand_over());
    let mut named = BTreeMap::from([
        (LISTENER.to_owned(), listener.as_raw_fd()),
        (LOCK.to_owned(), lock.as_raw_fd()),
        (OWNER.to_owned(), owner.as_raw_fd()),
    ]);
    if let Some((_, pipe)) = &guardian {
        named.insert(GUARDIAN.to_owned(), pipe.as_raw_fd());
    }
    let daemon = DaemonState {
        next_id: 0,
        owner: Some(owner_state),
        descriptors: named,
        registration: Some(runtime.registration().clone()),
        guardian_pid: guardian.as_ref().map(|(pid, _)| *pid),
    };
    drop(runtime);
    // From here until the processes are back (or for good, at `execve`), no process is started: a child would
    // inherit the descriptors the exec passes. (The guardian's restart already waits: it is handed over.)
    let gate = GATE.close();
    let captured_at = Instant::now();
    let handover = state.service.hand_over(daemon);
    for (id, error) in &handover.failures {
        tracing::error!(id, %error, "a process could not be captured, and was ended");
    }
    // Each subscription ends once the capture let it go and it wrote its last frame; then only the owner's
    // connection is left.
    if !state.wait_connections_but(owner, CONNECTION_DRAIN) {
        state.close_connections_but(Some(owner));
        state.wait_connections_but(owner, CONNECTION_DRAIN);
    }
    // The ownership as it is now, the last moment before the exec: a prepared ticket's time left does not
    // count the capture and the drains, so it expires at its own deadline in the next image.
    let mut handover = handover;
    if let Some(now) = state.ownership().to_upgrade(Instant::now()) {
        handover.state.daemon.owner = Some(now);
    }
    let mut keep: Vec<BorrowedFd<'_>> = vec![listener.as_fd(), lock.as_fd(), owner.as_fd()];
    keep.extend(guardian.as_ref().map(|(_, pipe)| pipe.as_fd()));
    keep.extend(handover.descriptors.values().map(|fd| fd.as_fd()));
    let refusal = exec(running, program, &handover, &keep);
    drop(keep);
    take_back(running, handover, gate);
    tracing::info!(paused_ms = captured_at.elapsed().as_millis(), "the processes are this image's again");
    refusal
}

/// Writes the state and executes `program` keeping `keep`; returns why that did not happen.
fn exec(running: &Running, program: &Program, handover: &Handover, keep: &[BorrowedFd<'_>]) -> String {
    let mut payload = Vec::new();
    if let Err(error) = handover.state.write_to(&mut payload) {
        return format!("cannot write the upgrade's state: {error}");
    }
    let kept: Vec<i32> = keep.iter().map(|fd| fd.as_raw_fd()).collect();
    if let Some(missing) = handover.state.descriptors().into_iter().find(|fd| !kept.contains(fd)) {
        return format!("the state names descriptor {missing}, which the daemon does not hold");
    }
    // From here a termination signal is left pending for the next image (or for this one, if the exec fails).
    let Some(window) = crate::daemon::signals::exec_window(&running.state) else {
        return DAEMON_STOPPING.to_owned();
    };
    if running.options.signal_at_exec {
        window.signal_and_wait(SIGNAL_AT_EXEC_WAIT);
    }
    let error = upgrade(program, STATE_FORMAT, &payload, keep, &daemon_args());
    drop(window);
    format!("the upgrade did not happen: {error}")
}

/// The `execve` did not happen: restores every process from the state in this image, with the descriptors the
/// capture holds, opens the spawn gate again and gives the guardian back.
fn take_back(running: &Running, handover: Handover, gate: Closed) {
    let Handover { state, mut descriptors, .. } = handover;
    let adopt = |fd: i32| descriptors.remove(&fd).ok_or_else(|| format!("descriptor {fd} is not held"));
    match running.state.service.take_over(state, adopt) {
        Ok(failures) => {
            for error in failures {
                tracing::error!(%error, "a process could not be restored after the upgrade fell back");
            }
        }
        Err(error) => tracing::error!(%error, "the processes could not be restored after the upgrade fell back"),
    }
    // Before the guardian: its supervisor may start a new one as soon as it is given back.
    drop(gate);
    if let Some(guardian) = &running.guardian {
        guardian.handed_back();
    }
}

/// Accepts again on `listener` (a failure stops the daemon: nobody could connect to it).
fn serve_on(running: &mut Running, listener: UnixListener) {
    match Acceptor::start(&running.state, listener, running.options.worker_linger) {
        Ok(acceptor) => running.acceptor = Some(acceptor),
        Err(error) => {
            tracing::error!(%error, "cannot accept connections again after the upgrade fell back; stopping");
            running.state.stop();
        }
    }
}

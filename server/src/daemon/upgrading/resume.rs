//! The new image's side of an in-place upgrade (`resume`, after the `execve`), in three steps.
//!
//! 1. **Look** ([`look`]): the state is read, every descriptor it names checked, the daemon's facts found and
//!    its runtime directory planned, touching nothing.
//! 2. **Get ready** ([`get_ready`]): every step that can fail, each one the previous image can take back or
//!    ignores: the signal mask, the descriptors adopted (held by the fallback, which would pass them on again
//!    at the same numbers), the registration written (the previous image writes its own again), the service
//!    lock held through a duplicate (never unlocked if this image goes back), and the threads the daemon needs
//!    started, each waiting for its work. Anything wrong in 1 or 2 hands the state back to the old
//!    executable (`upgrade::resume`), with nothing lost.
//! 3. **Commit and restore** ([`restore`]): nothing can fail any more but a panic. This image rebuilds the
//!    daemon around what it inherited: the listening socket with the connections waiting in its backlog, the
//!    record of process groups (the same file, the same instance) and the guardian (still this process's
//!    child: its pipe never closed), every process, the ownership, and the owner's connection, which is
//!    answered `ok` for its `upgrade` once this image accepts connections. Then it serves as any daemon does.

use std::collections::BTreeMap;
use std::fs::File;
use std::mem::ManuallyDrop;
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use nix::fcntl::{Flock, FlockArg};
use opencode_pty_protocol::Response;

use super::{GUARDIAN, LISTENER, LOCK, OWNER};
use crate::daemon::recovery::guardian::{Guardian, Supervisor};
use crate::daemon::recovery::record::{GROUPS_FILE, GroupRecord};
use crate::daemon::run::{DaemonError, DaemonOptions, prepare_process};
use crate::daemon::running::{Acceptor, PreparedAcceptor, Running};
use crate::daemon::runtime::{ResumedRuntime, Runtime};
use crate::daemon::serving::connection::serve_resumed_owner;
use crate::daemon::serving::ownership::Ownership;
use crate::daemon::serving::state::DaemonState;
use crate::daemon::signals::{Handler, prepare_handler};
use crate::process::thread::Parked;
use crate::service::ProcessHook;
use crate::upgrade::envelope::Handed;
use crate::upgrade::inherited::{check, close_strays};
use crate::upgrade::resume::{Failure, Fallback};
use crate::upgrade::{OwnerState, UpgradeState};

/// What the state says of the daemon, checked before the commit.
struct Facts {
    runtime: ResumedRuntime,
    owner: Option<OwnerState>,
    listener: RawFd,
    lock: RawFd,
    owner_connection: Option<RawFd>,
    guardian: Option<(u32, RawFd)>,
}

/// What this image made ready before it commits.
struct Ready {
    /// The service lock, held through a duplicate of the descriptor passed: never unlocked by this image
    /// unless it commits (a fallback only leaks it, and the exec closes it; the lock stays with the original).
    lock: ManuallyDrop<Flock<File>>,
    signals: Handler,
    acceptor: PreparedAcceptor,
    /// The guardian's supervisor, when a guardian was handed on.
    supervisor: Option<Supervisor>,
    /// The owner connection's thread, when one was handed on.
    owner_thread: Option<Parked<()>>,
}

/// Restores the daemon from the state an upgrade handed this image, then serves it until it stops. The owner
/// is answered `ok`, or, in the previous executable a new image fell back to, that the new image could not
/// take the state (`refused_by_new_image`). `fail_late` (tests) refuses the state at the last step before the
/// commit.
pub(crate) fn restore_and_serve(
    options: DaemonOptions,
    handed: Handed,
    fallback: &mut Fallback,
    refused_by_new_image: Option<String>,
    fail_late: bool,
) -> Result<(), Failure> {
    let state = UpgradeState::read_from(&handed.payload[..]).map_err(|error| Failure::Refused(error.to_string()))?;
    drop(handed);
    let facts = look(&state, &options).map_err(Failure::Refused)?;
    let ready = get_ready(&state, &facts, fallback).map_err(Failure::Refused)?;
    if fail_late {
        return Err(Failure::Refused("told to fail at the last step before the commit (--fail-late)".to_owned()));
    }
    // Everything that can fail was done, and nothing the previous image could not take back: from here on this
    // image owns the daemon.
    let passed = fallback.commit();
    let answer = match refused_by_new_image {
        None => Response::Ok,
        Some(why) => Response::Error { message: fell_back(&why) },
    };
    restore(options, state, facts, ready, passed, answer).map_err(Failure::Failed)
}

/// What the owner is told when the new image could not take the state, and this one resumed with it.
pub(crate) fn fell_back(why: &str) -> String {
    format!(
        "the upgrade did not happen: the new program could not take the daemon's state ({why}), so the previous \
         executable resumed with it, and nothing was lost"
    )
}

/// Everything this image checks before it touches anything: a state of a build it can take, every descriptor
/// it names inherited, the daemon's facts present and this process's, its runtime directory there.
fn look(state: &UpgradeState, options: &DaemonOptions) -> Result<Facts, String> {
    state.check_compatible().map_err(|error| error.to_string())?;
    for fd in state.descriptors() {
        check(fd).map_err(|error| format!("the state's descriptors: {error}"))?;
    }
    let daemon = &state.daemon;
    let registration = daemon.registration.clone().ok_or("the state names no registration")?;
    if registration.pid != std::process::id() {
        return Err(format!("the state is daemon {}'s, not this process's ({})", registration.pid, std::process::id()));
    }
    let named = |name: &str| daemon.descriptors.get(name).copied();
    let needed = |name: &str| named(name).ok_or_else(|| format!("the state names no {name} descriptor"));
    let guardian = match (named(GUARDIAN), daemon.guardian_pid) {
        (Some(pipe), Some(pid)) => Some((pid, pipe)),
        (None, None) => None,
        _ => return Err("the state names the guardian's pipe or its pid without the other".to_owned()),
    };
    let runtime = Runtime::plan_resume(&options.root, &options.name, registration)
        .map_err(|error| format!("the runtime directory: {error}"))?;
    Ok(Facts {
        runtime,
        owner: daemon.owner.clone(),
        listener: needed(LISTENER)?,
        lock: needed(LOCK)?,
        owner_connection: named(OWNER),
        guardian,
    })
}

/// Every step of the restore that can fail, before the commit; each leaves what the previous image takes
/// back as it was (see the module's comment).
fn get_ready(state: &UpgradeState, facts: &Facts, fallback: &mut Fallback) -> Result<Ready, String> {
    prepare_process().map_err(|error| error.to_string())?;
    // What crossed the exec without the state naming it (a script's descriptor) is closed before anything
    // starts; what it names is adopted, close-on-exec from now on.
    let strays = close_strays(&state.descriptors());
    if strays > 0 {
        tracing::debug!(strays, "closed descriptors inherited across the upgrade that the state does not name");
    }
    for fd in state.descriptors() {
        fallback.adopt(fd).map_err(|error| format!("the state's descriptors: {error}"))?;
    }
    facts.runtime.publish().map_err(|error| format!("writing the registration: {error}"))?;
    let failed = |what: &'static str| move |error: std::io::Error| format!("{what}: {error}");
    let lock = fallback.adopted(facts.lock).ok_or("the service lock was not adopted")?;
    let lock = lock.try_clone_to_owned().map_err(failed("duplicating the service lock"))?;
    let lock = Flock::lock(File::from(lock), FlockArg::LockExclusiveNonblock)
        .map_err(|(_, errno)| format!("holding the service lock passed by the upgrade: {errno}"))?;
    let lock = ManuallyDrop::new(lock);
    let signals = prepare_handler().map_err(failed("starting the signal thread"))?;
    let acceptor = Acceptor::prepare().map_err(failed("starting the accept thread"))?;
    let supervisor = facts.guardian.map(|_| Guardian::prepare()).transpose();
    let supervisor = supervisor.map_err(failed("starting the guardian's supervisor"))?;
    let owner_thread = match (facts.owner_connection, &facts.owner) {
        (Some(_), Some(_)) => Some(Parked::spawn(OWNER_THREAD).map_err(failed("starting the owner's thread"))?),
        _ => None,
    };
    Ok(Ready { lock, signals, acceptor, supervisor, owner_thread })
}

/// The name of the owner connection's thread (as every connection thread's).
const OWNER_THREAD: &str = "opencode-pty-conn";

/// The descriptor `fd` the state names as `what`, adopted before the commit.
fn taken(passed: &mut BTreeMap<RawFd, OwnedFd>, what: &str, fd: RawFd) -> Result<OwnedFd, DaemonError> {
    passed.remove(&fd).ok_or_else(|| DaemonError::Start(format!("the {what} passed by the upgrade was not adopted")))
}

/// Rebuilds the daemon from `state`, `facts` and what was made `ready`, with the descriptors `passed` (this
/// image has committed), then serves it.
fn restore(
    options: DaemonOptions,
    state: UpgradeState,
    facts: Facts,
    ready: Ready,
    mut passed: BTreeMap<RawFd, OwnedFd>,
    answer: Response,
) -> Result<(), DaemonError> {
    let since = Instant::now();
    let listener = UnixListener::from(taken(&mut passed, LISTENER, facts.listener)?);
    // The lock is held through its duplicate: the number the state names is closed.
    drop(taken(&mut passed, LOCK, facts.lock)?);
    let owner = facts.owner_connection.map(|fd| taken(&mut passed, OWNER, fd)).transpose()?;
    let guardian = match (facts.guardian, ready.supervisor) {
        (Some((pid, fd)), Some(supervisor)) => Some((pid, taken(&mut passed, GUARDIAN, fd)?, supervisor)),
        _ => None,
    };
    let runtime = facts.runtime.into_runtime(ManuallyDrop::into_inner(ready.lock));
    let instance = runtime.registration().instance_id.clone();
    let (record, guardian) = protect(&runtime, &instance, guardian);
    let hook = record.clone().map(|record| record as Arc<dyn ProcessHook>);
    let service = crate::daemon::run::service(&options, &runtime, hook).protecting(runtime.dir().to_path_buf());
    let now = Instant::now();
    let ownership = match &facts.owner {
        Some(owner) => Ownership::from_upgrade(owner, now, options.handoff_ttl),
        None => Ownership::with_handoff_ttl(now, options.handoff_ttl),
    };
    let state_now =
        DaemonState::with_ownership(service, runtime.registration().clone(), ownership, options.first_request_timeout);
    let processes = state.processes.len();
    // Only the processes' descriptors are left.
    let given = |fd: RawFd| passed.remove(&fd).ok_or_else(|| format!("descriptor {fd} was not passed, or twice"));
    match state_now.service.take_over(state, given) {
        Ok(failures) => {
            for error in failures {
                tracing::error!(%error, "a process could not be restored after the upgrade");
            }
        }
        // Checked before the commit (`look`): a state of a build this one takes, and a new service.
        Err(error) => return Err(DaemonError::Start(format!("restoring the processes: {error}"))),
    }
    if let Some(record) = &record
        && let Err(error) = record.rewrite()
    {
        tracing::warn!(%error, "cannot write the record of process groups; no process can be created until it can");
    }
    ready.signals.start(state_now.clone());
    let acceptor = ready.acceptor.start(&state_now, listener, options.worker_linger);
    match (owner, facts.owner.as_ref().map(|owner| owner.generation), ready.owner_thread) {
        (Some(owner), Some(generation), Some(thread)) => serve_owner(&state_now, thread, owner, generation, answer),
        // No connection to serve the owner on: as if it closed (O5).
        (None, Some(generation), _) => {
            state_now.ownership().disconnect(generation);
            state_now.notify();
        }
        _ => {}
    }
    tracing::info!(
        pid = std::process::id(),
        processes,
        restored_ms = since.elapsed().as_millis(),
        "the daemon resumed after an in-place upgrade"
    );
    let mut running = Running {
        options,
        state: state_now,
        runtime: Arc::new(Mutex::new(runtime)),
        record,
        guardian,
        acceptor: Some(acceptor),
        watch: None,
        sweeper: None,
    };
    running.watch_runtime();
    running.serve()
}

/// The record of process groups on the predecessor's file (left as it is until the restored children are in)
/// and its guardian, adopted on its supervisor (or a new one, when none was handed on; every descriptor the
/// state names is close-on-exec by now, so the new guardian inherits none).
fn protect(
    runtime: &Runtime,
    instance: &str,
    handed: Option<(u32, OwnedFd, Supervisor)>,
) -> (Option<Arc<GroupRecord>>, Option<Guardian>) {
    let record = GroupRecord::resumed(runtime.dir(), instance)
        .inspect_err(
            |error| tracing::warn!(%error, "no record of process groups: they would outlive a daemon that dies"),
        )
        .ok()
        .map(Arc::new);
    let path = runtime.dir().join(GROUPS_FILE);
    let guardian = match handed {
        Some((pid, pipe, supervisor)) => Some(Guardian::adopt(supervisor, &path, instance, pid, pipe)),
        None if record.is_some() => Guardian::start(&path, instance)
            .inspect_err(|error| {
                tracing::warn!(%error, "no guardian: only the next daemon or a sweep would end what a dead daemon left")
            })
            .ok(),
        None => None,
    };
    (record, guardian)
}

/// Serves the owner's connection again, as the owner channel of `generation`, on `thread`; `answer` (to its
/// `upgrade`) first.
fn serve_owner(state: &Arc<DaemonState>, thread: Parked<()>, owner: OwnedFd, generation: u64, answer: Response) {
    let stream = Arc::new(UnixStream::from(owner));
    let served = state.clone();
    // Detached, as every connection thread.
    drop(thread.run(move || {
        // Refused only while the daemon stops: the connection then closes.
        let Ok(_registered) = served.register(&stream) else { return };
        serve_resumed_owner(&served, &stream, generation, &answer);
    }));
}

//! The new image's side of an in-place upgrade (`resume`, after the `execve`): the state is read and every
//! descriptor it names checked before anything is taken (anything wrong hands the state back to the old
//! executable, `upgrade::resume`); then this image commits and rebuilds the daemon around what it inherited:
//! the runtime directory with its lock and registration, the listening socket with the connections waiting in
//! its backlog, the record of process groups (the same file, the same instance) and the guardian (still this
//! process's child: its pipe never closed), every process, the ownership, and the owner's connection, which is
//! answered `ok` for its `upgrade` once this image accepts connections. Then it serves as any daemon does.

use std::fs::File;
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use nix::fcntl::{Flock, FlockArg};
use opencode_pty_protocol::{Registration, Response};

use super::{GUARDIAN, LISTENER, LOCK, OWNER};
use crate::daemon::recovery::guardian::Guardian;
use crate::daemon::recovery::record::{GROUPS_FILE, GroupRecord};
use crate::daemon::run::{DaemonError, DaemonOptions, prepare_process};
use crate::daemon::running::{Acceptor, Running};
use crate::daemon::runtime::Runtime;
use crate::daemon::serving::connection::serve_resumed_owner;
use crate::daemon::serving::ownership::Ownership;
use crate::daemon::serving::state::DaemonState;
use crate::service::ProcessHook;
use crate::upgrade::envelope::Handed;
use crate::upgrade::inherited::{adopt, check};
use crate::upgrade::resume::{Failure, Fallback};
use crate::upgrade::{OwnerState, UpgradeState};

/// What the state says of the daemon, checked before the commit.
struct Facts {
    registration: Registration,
    owner: Option<OwnerState>,
    listener: RawFd,
    lock: RawFd,
    owner_connection: Option<RawFd>,
    guardian: Option<(u32, RawFd)>,
}

/// Restores the daemon from the state an upgrade handed this image, then serves it until it stops. The owner
/// is answered `ok`, or, in the previous executable a new image fell back to, that the new image could not
/// take the state (`refused_by_new_image`).
pub(crate) fn restore_and_serve(
    options: DaemonOptions,
    handed: Handed,
    fallback: &mut Fallback,
    refused_by_new_image: Option<String>,
) -> Result<(), Failure> {
    let state = UpgradeState::read_from(&handed.payload[..]).map_err(|error| Failure::Refused(error.to_string()))?;
    drop(handed);
    let facts = look(&state).map_err(Failure::Refused)?;
    // What crossed the exec without the state naming it (a script's descriptor) is closed before anything starts.
    let strays = crate::upgrade::inherited::close_strays(&state.descriptors());
    if strays > 0 {
        tracing::debug!(strays, "closed descriptors inherited across the upgrade that the state does not name");
    }
    // Nothing was taken yet: from here on this image owns the daemon, and a failure ends it.
    fallback.commit();
    let answer = match refused_by_new_image {
        None => Response::Ok,
        Some(why) => Response::Error { message: fell_back(&why) },
    };
    restore(options, state, facts, answer).map_err(Failure::Failed)
}

/// What the owner is told when the new image could not take the state, and this one resumed with it.
pub(crate) fn fell_back(why: &str) -> String {
    format!(
        "the upgrade did not happen: the new program could not take the daemon's state ({why}), so the previous \
         executable resumed with it, and nothing was lost"
    )
}

/// Everything this image checks before it commits: a state of a build it can take, every descriptor it names
/// inherited, and the daemon's facts present and this process's.
fn look(state: &UpgradeState) -> Result<Facts, String> {
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
    Ok(Facts {
        registration,
        owner: daemon.owner.clone(),
        listener: needed(LISTENER)?,
        lock: needed(LOCK)?,
        owner_connection: named(OWNER),
        guardian,
    })
}

/// Rebuilds the daemon from `state` and `facts` (this image has committed), then serves it.
fn restore(options: DaemonOptions, state: UpgradeState, facts: Facts, answer: Response) -> Result<(), DaemonError> {
    let since = Instant::now();
    prepare_process()?;
    let taken = |what: &str, fd: RawFd| {
        adopt(fd).map_err(|error| DaemonError::Start(format!("taking the {what} passed by the upgrade: {error}")))
    };
    let listener = UnixListener::from(taken(LISTENER, facts.listener)?);
    let lock = Flock::lock(File::from(taken(LOCK, facts.lock)?), FlockArg::LockExclusiveNonblock)
        .map_err(|(_, errno)| DaemonError::Start(format!("holding the service lock passed by the upgrade: {errno}")))?;
    let owner = facts.owner_connection.map(|fd| taken(OWNER, fd)).transpose()?;
    let guardian_pipe = facts.guardian.map(|(pid, fd)| taken(GUARDIAN, fd).map(|pipe| (pid, pipe))).transpose()?;
    // Every process's descriptors are owned (close-on-exec) before anything is started: a guardian started anew
    // below must not inherit a terminal's master or a pipe.
    let named: Vec<RawFd> = state.daemon.descriptors.values().copied().collect();
    let mut inherited = std::collections::BTreeMap::new();
    for fd in state.descriptors().into_iter().filter(|fd| !named.contains(fd)) {
        inherited.insert(fd, taken("process descriptor", fd)?);
    }
    let runtime = Runtime::resumed(&options.root, &options.name, lock, facts.registration)?;
    let instance = runtime.registration().instance_id.clone();
    let (record, guardian) = protect(&runtime, &instance, guardian_pipe);
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
    let passed = |fd: RawFd| inherited.remove(&fd).ok_or_else(|| format!("descriptor {fd} was not passed, or twice"));
    match state_now.service.take_over(state, passed) {
        Ok(failures) => {
            for error in failures {
                tracing::error!(%error, "a process could not be restored after the upgrade");
            }
        }
        Err(error) => return Err(DaemonError::Start(format!("restoring the processes: {error}"))),
    }
    if let Some(record) = &record
        && let Err(error) = record.rewrite()
    {
        tracing::warn!(%error, "cannot write the record of process groups; no process can be created until it can");
    }
    let fail = |what: &str, error: std::io::Error| DaemonError::Start(format!("{what}: {error}"));
    crate::daemon::signals::spawn_handler(state_now.clone()).map_err(|e| fail("starting the signal thread", e))?;
    let acceptor = Acceptor::start(&state_now, listener, options.worker_linger)
        .map_err(|e| fail("starting the accept thread", e))?;
    match (owner, facts.owner.as_ref().map(|owner| owner.generation)) {
        (Some(owner), Some(generation)) => serve_owner(&state_now, owner, generation, answer),
        // No connection to serve the owner on: as if it closed (O5).
        (None, Some(generation)) => {
            state_now.ownership().disconnect(generation);
            state_now.notify();
        }
        (_, None) => {}
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
/// and its guardian, adopted (or a new one, when none was handed on).
fn protect(
    runtime: &Runtime,
    instance: &str,
    handed: Option<(u32, OwnedFd)>,
) -> (Option<Arc<GroupRecord>>, Option<Guardian>) {
    let record = GroupRecord::resumed(runtime.dir(), instance)
        .inspect_err(
            |error| tracing::warn!(%error, "no record of process groups: they would outlive a daemon that dies"),
        )
        .ok()
        .map(Arc::new);
    let path = runtime.dir().join(GROUPS_FILE);
    let guardian = match handed {
        Some((pid, pipe)) => Guardian::adopt(&path, instance, pid, pipe),
        None if record.is_some() => Guardian::start(&path, instance),
        None => return (record, None),
    };
    let guardian = guardian
        .inspect_err(|error| {
            tracing::warn!(%error, "no guardian: only the next daemon or a sweep would end what a dead daemon left")
        })
        .ok();
    (record, guardian)
}

/// Serves the owner's connection again, as the owner channel of `generation`, on a thread of its own; `answer`
/// (to its `upgrade`) first.
fn serve_owner(state: &Arc<DaemonState>, owner: OwnedFd, generation: u64, answer: Response) {
    let stream = Arc::new(UnixStream::from(owner));
    let served = state.clone();
    let thread = std::thread::Builder::new().name("opencode-pty-conn".into()).spawn(move || {
        // Refused only while the daemon stops: the connection then closes.
        let Ok(_registered) = served.register(&stream) else { return };
        serve_resumed_owner(&served, &stream, generation, &answer);
    });
    if let Err(error) = thread {
        tracing::error!(%error, "cannot serve the owner's connection again; it is closed");
        state.ownership().disconnect(generation);
        state.notify();
    }
}

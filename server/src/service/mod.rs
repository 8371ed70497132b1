//! The process service: the registry of PTYs and pipe processes by id, in creation order (one id sequence for
//! both), and the operations that span them (create, list, get, terminate, shutdown). It sits above both
//! kinds and the process layer; what names both kinds (`Process`) is in `kinds`.

mod handover;
mod kinds;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use opencode_pty_protocol::{Mode, ProcessInfo};

use crate::error::ServiceError;
use crate::listing::{self, ListingBudget, Reservation};
use crate::pipe::{MetadataBudget, PipeHandle, PipeSpec};
use crate::process::session;
use crate::process::thread::join_reporting;
use crate::process::{OptIns, StopReason};
use crate::terminal::{INFO_TIMEOUT, PtyHandle, PtySpec, TerminalConfig};
pub(crate) use handover::Handover;
use kinds::InfoAsked;
pub use kinds::Process;

/// A registered process and its share of the listing budget, given back when the entry is dropped (after
/// `terminate` or shutdown has stopped the process).
#[derive(Debug)]
struct Entry {
    process: Process,
    _listing: Reservation,
}

/// Told when a child starts and once it is reaped, so that a daemon can keep a record of its process groups
/// outside itself (`daemon::recovery::record`). In-process users of the service need none.
pub trait ProcessHook: Send + Sync + std::fmt::Debug {
    /// Process `id` started as `pid` (its process group leader); it is not reaped before [`Self::reaped`]. An
    /// error refuses the process: the service stops it at once and answers the error.
    fn started(&self, id: u64, pid: u32) -> Result<(), ServiceError>;
    /// Process `id` was killed and reaped (or never registered): its pid may be reused from now on.
    fn reaped(&self, id: u64);
}

/// Every process of one daemon.
#[derive(Debug)]
pub struct ProcessService {
    config: TerminalConfig,
    next_id: AtomicU64,
    /// What the live pipe processes' metadata holds together (at most `MAX_TOTAL_METADATA_BYTES`).
    metadata: Arc<MetadataBudget>,
    /// What the live terminals' infos may take in `list` together (at most `MAX_PTY_INFO_BYTES`, or the
    /// config's smaller `pty_listing_bytes`).
    pty_listing: Arc<ListingBudget>,
    /// What the live pipe processes' infos may take in `list` together (at most `MAX_PIPE_INFO_BYTES`).
    pipe_listing: Arc<ListingBudget>,
    /// Ordered by id, which is creation order. `None` once shut down: nothing more is created.
    processes: Mutex<Option<BTreeMap<u64, Entry>>>,
    /// Told of every start and reap.
    hook: Option<Arc<dyn ProcessHook>>,
    /// The daemon's runtime directory: no pipe process's output file may be inside it.
    protected: Option<PathBuf>,
}

impl ProcessService {
    /// An empty service whose terminals use `config`.
    pub fn new(config: TerminalConfig) -> ProcessService {
        let pty_listing = Arc::new(ListingBudget::new(config.pty_listing_bytes.min(listing::MAX_PTY_INFO_BYTES)));
        ProcessService {
            config,
            next_id: AtomicU64::new(1),
            metadata: Arc::new(MetadataBudget::new()),
            pty_listing,
            pipe_listing: Arc::new(ListingBudget::new(listing::MAX_PIPE_INFO_BYTES)),
            processes: Mutex::new(Some(BTreeMap::new())),
            hook: None,
            protected: None,
        }
    }

    /// The same, refusing a pipe process's output file inside `dir` (the daemon's runtime directory).
    pub fn protecting(mut self, dir: PathBuf) -> ProcessService {
        self.protected = Some(dir);
        self
    }

    /// The same, telling `hook` of every child started and reaped.
    pub fn with_hook(config: TerminalConfig, hook: Arc<dyn ProcessHook>) -> ProcessService {
        let mut service = ProcessService::new(config);
        service.hook = Some(hook);
        service
    }

    fn started(&self, id: u64, process: &Process) -> Result<(), ServiceError> {
        tracing::debug!(id, pid = process.pid(), mode = ?process.mode(), "process started");
        match &self.hook {
            Some(hook) => hook.started(id, process.pid()),
            None => Ok(()),
        }
    }

    fn reaped(&self, id: u64) {
        if let Some(hook) = &self.hook {
            hook.reaped(id);
        }
    }

    fn processes(&self) -> MutexGuard<'_, Option<BTreeMap<u64, Entry>>> {
        self.processes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a process with the next id and registers it with its listing reservation; ids are assigned in
    /// creation order and never reused.
    fn create(
        &self,
        listing: Reservation,
        opt_ins: OptIns,
        start: impl FnOnce(u64) -> Result<Process, ServiceError>,
    ) -> Result<ProcessInfo, ServiceError> {
        if self.processes().is_none() {
            return Err(ServiceError::ShuttingDown);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // Not while an upgrade passes descriptors across `execve`: the child would inherit them.
        let pass = crate::process::spawn_gate::GATE.pass();
        let process = start(id);
        drop(pass);
        let process = process?;
        if let Err(refused) = self.started(id, &process) {
            // Not recorded: stopped (killed, reaped, its threads joined) before the error is answered.
            process.terminate(StopReason::Terminate);
            self.reaped(id);
            return Err(refused);
        }
        let registered = self.register(id, Entry { process, _listing: listing }, opt_ins);
        if registered.is_err() {
            // The handle was dropped, which killed and reaped the child.
            self.reaped(id);
        }
        registered
    }

    /// Registers a started process, or drops it (stopping it) when it cannot be. Its info is the one published
    /// when it started: registering never waits for the new process (a terminal's actor may not have run yet on
    /// a busy machine), so a process that started is always answered `created`.
    /// `opt_ins`: the features whose members the answer carries.
    fn register(&self, id: u64, entry: Entry, opt_ins: OptIns) -> Result<ProcessInfo, ServiceError> {
        let info = entry.process.last_info_with(opt_ins);
        let mut processes = self.processes();
        let Some(processes) = processes.as_mut() else {
            // Shut down meanwhile: the new process goes with the rest (dropping the handle stops it).
            return Err(ServiceError::ShuttingDown);
        };
        processes.insert(id, entry);
        Ok(info)
    }

    /// Starts a terminal, after checking its spec and reserving its share of `list` (`MAX_PTY_INFO_BYTES`).
    pub fn create_pty(&self, spec: PtySpec) -> Result<ProcessInfo, ServiceError> {
        let command_bytes = crate::terminal::validate(&spec)?;
        let listing = self.pty_listing.reserve(listing::pty_cost(&spec, command_bytes))?;
        let config = self.config.clone();
        // A create that asked for shell integration knows the `commands` feature: its answer has `pty.shell`.
        let opt_ins = OptIns { commands: spec.shell_integration, ..OptIns::NONE };
        self.create(listing, opt_ins, |id| Ok(Process::Pty(Arc::new(PtyHandle::spawn(id, spec, config)?))))
    }

    /// Starts a pipe process. Its metadata must fit in the daemon's total (`MAX_TOTAL_METADATA_BYTES`) with
    /// that of every live pipe process; terminating one releases its share.
    /// Its strings are checked and its share of `list` reserved before anything starts.
    pub fn create_pipe(&self, spec: PipeSpec) -> Result<ProcessInfo, ServiceError> {
        let command_bytes = crate::pipe::check_echoed(&spec)?;
        if let Some(dir) = &self.protected {
            crate::pipe::check_outside(&spec.output_path, dir)?;
        }
        let listing = self.pipe_listing.reserve(listing::pipe_cost(&spec, command_bytes))?;
        let budget = self.metadata.clone();
        self.create(listing, OptIns::NONE, |id| Ok(Process::Pipe(Arc::new(PipeHandle::spawn(id, spec, budget)?))))
    }

    /// The bytes of `list` the live processes of `mode` have reserved together.
    pub fn listing_bytes(&self, mode: Mode) -> usize {
        self.listing(mode).used()
    }

    /// The listing budget of `mode`.
    fn listing(&self, mode: Mode) -> &Arc<ListingBudget> {
        match mode {
            Mode::Pty => &self.pty_listing,
            Mode::Pipe => &self.pipe_listing,
        }
    }

    /// The metadata bytes the live pipe processes hold together.
    pub fn metadata_bytes(&self) -> usize {
        self.metadata.used()
    }

    /// The process with this id, of either kind.
    pub fn process(&self, id: u64) -> Result<Process, ServiceError> {
        let processes = self.processes();
        processes.as_ref().and_then(|p| p.get(&id)).map(|e| e.process.clone()).ok_or(ServiceError::NotFound(id))
    }

    /// The terminal with this id; a pipe process is refused (PTY-only requests).
    pub fn pty(&self, id: u64) -> Result<Arc<PtyHandle>, ServiceError> {
        match self.process(id)? {
            Process::Pty(handle) => Ok(handle),
            Process::Pipe(_) => Err(ServiceError::WrongMode { id, what: "a pipe process", wanted: "PTYs" }),
        }
    }

    /// The pipe process with this id; a PTY is refused (pipe-only requests).
    pub fn pipe(&self, id: u64) -> Result<Arc<PipeHandle>, ServiceError> {
        match self.process(id)? {
            Process::Pipe(handle) => Ok(handle),
            Process::Pty(_) => Err(ServiceError::WrongMode { id, what: "a PTY", wanted: "pipe processes" }),
        }
    }

    /// One process of either kind (a PTY's foreground process refreshed).
    pub fn get(&self, id: u64) -> Result<ProcessInfo, ServiceError> {
        self.get_with(id, OptIns::NONE)
    }

    /// [`Self::get`] with the members of the features `opt_ins` names.
    pub fn get_with(&self, id: u64, opt_ins: OptIns) -> Result<ProcessInfo, ServiceError> {
        Ok(self.process(id)?.info_with(opt_ins))
    }

    /// Every process of `mode` in creation order (PTYs' foreground processes refreshed). Every terminal is
    /// asked at once and all are waited for against one deadline, [`INFO_TIMEOUT`] away, so the answer takes at
    /// most that however many terminals there are; one that has not answered by then is described as it last
    /// published itself.
    pub fn list(&self, mode: Mode) -> Vec<ProcessInfo> {
        self.list_with(mode, OptIns::NONE)
    }

    /// [`Self::list`] with the members of the features `opt_ins` names in each process.
    pub fn list_with(&self, mode: Mode, opt_ins: OptIns) -> Vec<ProcessInfo> {
        self.list_page(mode, opt_ins, None, None).0
    }

    /// One page of [`Self::list_with`] (SPEC D17): the processes of `mode` whose id is greater than `after`
    /// (all without it), at most `limit` of them (all without it), and when more of the mode follow, the id to
    /// ask the next page after (the page's last). Only the page's terminals are asked for their info, all at
    /// once against one [`INFO_TIMEOUT`].
    pub fn list_page(
        &self,
        mode: Mode,
        opt_ins: OptIns,
        after: Option<u64>,
        limit: Option<usize>,
    ) -> (Vec<ProcessInfo>, Option<u64>) {
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        let limit = limit.unwrap_or(usize::MAX);
        let (page, more) = {
            let processes = self.processes();
            let mut of_mode = processes
                .iter()
                .flat_map(|p| p.range((from, Bound::Unbounded)).map(|(_, e)| &e.process).filter(|p| p.mode() == mode));
            let page: Vec<Process> = of_mode.by_ref().take(limit).cloned().collect();
            (page, of_mode.next().is_some())
        };
        let next = if more { page.last().map(Process::id) } else { None };
        let deadline = Instant::now() + INFO_TIMEOUT;
        let asked: Vec<_> = page.iter().map(|p| p.ask_info(deadline, opt_ins)).collect();
        (asked.into_iter().map(InfoAsked::answer).collect(), next)
    }

    /// Removes a process of either kind, kills it (and its process group) and joins its threads; a pipe
    /// process's pending waiters are answered `terminated`. A second call for the same id fails.
    pub fn terminate(&self, id: u64) -> Result<(), ServiceError> {
        let entry = self.processes().as_mut().and_then(|p| p.remove(&id)).ok_or(ServiceError::NotFound(id))?;
        entry.process.terminate(StopReason::Terminate);
        tracing::debug!(id, "process terminated");
        self.reaped(id);
        Ok(())
    }

    /// Stops every process and joins them all; afterwards nothing more can be created. Pending pipe waiters are
    /// disconnected without an answer. Every SIGKILL goes out before anything is joined or reaped, from this
    /// thread, so a stop under load does not wait for hundreds of threads to be scheduled first: pipe processes
    /// are killed and terminals hung up at once, then after at most one hangup grace (`TerminalConfig::hangup_grace`, [`session::HANGUP_GRACE`] by default; less once every
    /// terminal's shell has exited) what is left in the terminals' sessions is killed in one look-up, and only
    /// then are the processes' threads joined and their children reaped, in parallel.
    pub fn shutdown(&self) {
        let entries: Vec<_> = self.processes().take().into_iter().flat_map(|p| p.into_iter()).collect();
        let stopping: Vec<_> =
            entries.iter().filter(|(_, entry)| entry.process.begin_stop(StopReason::Shutdown)).collect();
        let sessions: Vec<_> = stopping.iter().filter_map(|(_, entry)| entry.process.session()).collect();
        session::end_sessions(&sessions, Instant::now() + self.config.hangup_grace);
        let finish = |id: u64, entry: &Entry| {
            entry.process.finish_stop();
            tracing::debug!(id, "process stopped with the daemon");
            self.reaped(id);
        };
        std::thread::scope(|scope| {
            let mut finishing = Vec::new();
            for &(id, entry) in &stopping {
                let thread = std::thread::Builder::new().name(format!("opencode-pty-stop-{id}"));
                match thread.spawn_scoped(scope, move || finish(*id, entry)) {
                    Ok(thread) => finishing.push(thread),
                    // No thread to spare: this one is finished on this thread, in turn.
                    Err(_) => finish(*id, entry),
                }
            }
            for thread in finishing {
                join_reporting(thread);
            }
        });
    }
}

impl Drop for ProcessService {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use opencode_pty_protocol::{Lifecycle, Role};

    use super::*;
    use crate::process::ExistingController;
    use crate::process::ProcessSubscription;
    use crate::terminal::tests::sh;

    /// How long a test waits for a terminal to reach the state it needs.
    const WAIT: Duration = Duration::from_secs(60);

    /// A terminal whose actor takes no request: its controller never reads, so renames are held back until the
    /// actor holds as many as it keeps, then its command queue fills. Its controller.
    fn stalled(service: &ProcessService) -> (u64, ProcessSubscription) {
        // Its child outlives the longest the test can take on a loaded machine (it is ended with the service).
        let id = service.create_pty(sh("sleep 600")).expect("create").id;
        let handle = service.pty(id).expect("pty");
        let controller = handle.subscribe(0, "c".into(), Role::Controller, ExistingController::Refuse).unwrap();
        handle.fill_commands(Instant::now() + WAIT);
        (id, controller)
    }

    /// `list` asks every terminal at once: with many whose actors cannot answer it takes about one
    /// `INFO_TIMEOUT`, not one per terminal, and describes each as it last published itself.
    #[test]
    fn list_of_stalled_terminals_answers_within_one_info_timeout_not_one_per_terminal() {
        const STALLED: usize = 16;
        let service = ProcessService::new(TerminalConfig::default());
        let stalled: Vec<_> = (0..STALLED).map(|_| stalled(&service)).collect();
        let started = Instant::now();
        let listed = service.list(Mode::Pty);
        let took = started.elapsed();
        assert!(took < INFO_TIMEOUT * STALLED as u32, "list took {took:?}");
        assert_eq!(listed.len(), STALLED);
        for (info, (id, _)) in listed.iter().zip(&stalled) {
            assert_eq!(info.id, *id);
            assert_eq!(info.lifecycle, Lifecycle::Running);
            let title = &info.pty.as_ref().expect("pty").title;
            assert!(title.starts_with("title "), "the last published title, not {title:?}");
        }
        // A stalled terminal's `get` answers from the same published info, within the same bound.
        let started = Instant::now();
        assert_eq!(service.get(stalled[0].0).expect("get").id, stalled[0].0);
        assert!(started.elapsed() < INFO_TIMEOUT * STALLED as u32);
        for (id, controller) in stalled {
            service.terminate(id).expect("terminate");
            drop(controller);
        }
    }

    /// Registering a terminal never waits for its actor: with the actor held back at its start, `create_pty`
    /// still answers `created` (before, it asked the actor, timed out and killed the command it had started).
    #[test]
    fn create_answers_created_while_the_new_terminal_s_actor_cannot_answer() {
        const HELD_ID: u64 = 9_000_000_001;
        let service = ProcessService::new(TerminalConfig::default());
        service.next_id.store(HELD_ID, Ordering::Relaxed);
        let open = crate::terminal::actor_gate::hold(HELD_ID);
        let info = service.create_pty(sh("read never")).expect("created although the actor has not run");
        assert_eq!((info.id, info.lifecycle), (HELD_ID, Lifecycle::Running));
        assert_eq!(info.pty.expect("pty").title, "unit");
        drop(open);
        // Once its actor runs, the terminal answers like any other.
        assert!(service.pty(HELD_ID).expect("registered").snapshot().is_ok());
        service.terminate(HELD_ID).expect("terminate");
    }
}

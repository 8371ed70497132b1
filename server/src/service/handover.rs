//! Every process of a daemon handed over by an in-place upgrade (issue 30), and what the upgrade calls:
//! [`ProcessService::hand_over`] takes them all out of the service into a state beside the daemon's own facts,
//! with the descriptors the state names (nothing is killed, reaped or closed), and [`ProcessService::take_over`]
//! puts them back, rebuilt from a state, under their ids: in the successor after `execve`, or in the same
//! daemon when the upgrade falls back.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use opencode_pty_protocol::Mode;

use super::{Entry, Process, ProcessService};
use crate::bounds::json_len;
use crate::error::ServiceError;
use crate::listing::{self, Reservation};
use crate::pipe::{PipeHandle, PipeSpec};
use crate::process::Child;
use crate::procinfo::stat::proc_stat;
use crate::terminal::PtyHandle;
use crate::terminal::handover::PREPARE_TIMEOUT;
use crate::terminal::rebuild::Rebuilder;
use crate::upgrade::{ChildState, DaemonState, ProcessState, UpgradeError, UpgradeState};

/// Every process of a daemon, captured: what the state's `processes` and `next_id` hold, and the descriptors
/// the processes' states name, which must stay open (across `execve`: without close-on-exec, at the same
/// numbers) until [`ProcessService::restore_all`] takes them.
#[derive(Debug, Default)]
pub(crate) struct CapturedProcesses {
    /// The id the next process gets.
    pub(crate) next_id: u64,
    /// Every process captured, in id order.
    pub(crate) processes: Vec<ProcessState>,
    /// The descriptors they name, by number.
    pub(crate) descriptors: BTreeMap<i32, OwnedFd>,
    /// The processes that could not be captured (each was ended: its actor did not answer), with why.
    pub(crate) failures: Vec<(u64, ServiceError)>,
}

/// A daemon's state for its successor and the descriptors it names ([`ProcessService::hand_over`]).
#[derive(Debug)]
pub(crate) struct Handover {
    /// The state: this build, the daemon's facts (its `next_id` is the service's), every process captured.
    pub(crate) state: UpgradeState,
    /// The descriptors the processes' states name, by number: keep them open, without close-on-exec, until
    /// [`ProcessService::take_over`] takes them (`UpgradeState::descriptors` lists them with the daemon's own).
    pub(crate) descriptors: BTreeMap<i32, OwnedFd>,
    /// The processes that could not be captured (each was ended), with why.
    pub(crate) failures: Vec<(u64, ServiceError)>,
}

impl ProcessService {
    /// Captures every process (see [`Self::capture_all`]) into a state with `daemon`'s facts; the service's next
    /// process id replaces `daemon.next_id`.
    pub(crate) fn hand_over(&self, daemon: DaemonState) -> Handover {
        let captured = self.capture_all();
        let daemon = DaemonState { next_id: captured.next_id, ..daemon };
        Handover {
            state: UpgradeState::new(daemon, captured.processes),
            descriptors: captured.descriptors,
            failures: captured.failures,
        }
    }

    /// Rebuilds the processes of `state` (see [`Self::restore_all`]), each taking the descriptors its state
    /// names from `adopt` (which turns a number inherited across `execve`, or one [`Handover::descriptors`]
    /// holds, into its owned descriptor). The daemon's own facts (`state.daemon`: the ownership, its
    /// descriptors) are the caller's to take.
    pub(crate) fn take_over(
        &self,
        state: UpgradeState,
        adopt: impl FnMut(i32) -> Result<OwnedFd, String>,
    ) -> Result<Vec<UpgradeError>, UpgradeError> {
        state.check_compatible()?;
        self.restore_all(state.daemon.next_id, state.processes, adopt)
    }

    /// Captures every process (see `PtyHandle::finish_capture`, `PipeHandle::finish_capture`) and takes them out of the
    /// service, which creates nothing until [`Self::restore_all`] (a create is refused as during a stop). All
    /// terminals are asked at once and then waited for, so the pause is about the slowest one's, not the sum.
    /// Nothing is killed, reaped or closed, and the hook (the record of process groups) is not told of any
    /// reap: the children are still the daemon's.
    pub(crate) fn capture_all(&self) -> CapturedProcesses {
        let entries: Vec<(u64, Entry)> = self.processes().take().into_iter().flat_map(BTreeMap::into_iter).collect();
        let mut captured = CapturedProcesses { next_id: self.next_id.load(Ordering::Relaxed), ..Default::default() };
        // Every terminal prepares its screen while it runs on, all at once; then the captures stop them.
        let preparing: Vec<_> = entries
            .iter()
            .filter_map(|(_, entry)| match &entry.process {
                Process::Pty(handle) => handle.prepare_capture(),
                Process::Pipe(_) => None,
            })
            .collect();
        let deadline = Instant::now() + PREPARE_TIMEOUT;
        let bytes: u64 = preparing.into_iter().filter_map(|prepared| prepared.recv_deadline(deadline).ok()).sum();
        tracing::info!(processes = entries.len(), bytes, "screens prepared");
        let begun: Vec<_> = entries
            .iter()
            .map(|(id, entry)| {
                let begun = match &entry.process {
                    Process::Pty(handle) => handle.begin_capture().map(Some),
                    Process::Pipe(handle) => handle.begin_capture().map(|()| None),
                };
                (*id, entry, begun)
            })
            .collect();
        for (id, entry, begun) in begun {
            let finished = begun.and_then(|capturing| match (&entry.process, capturing) {
                (Process::Pty(handle), Some(capturing)) => handle.finish_capture(capturing).map(|terminal| {
                    captured.descriptors.insert(terminal.state.master_fd, terminal.master);
                    if let (Some(file), Some(screen)) = (terminal.state.screen_file, terminal.screen) {
                        captured.descriptors.insert(file.fd, screen);
                    }
                    ProcessState::Pty(Box::new(terminal.state))
                }),
                (Process::Pipe(handle), _) => {
                    let pipe = handle.finish_capture();
                    for fd in [pipe.pipe, pipe.file].into_iter().flatten() {
                        captured.descriptors.insert(std::os::fd::AsRawFd::as_raw_fd(&fd), fd);
                    }
                    Ok(ProcessState::Pipe(Box::new(pipe.state)))
                }
                (Process::Pty(_), None) => Err(ServiceError::Gone(id)),
            });
            match finished {
                Ok(state) => captured.processes.push(state),
                Err(error) => {
                    // Ended (or already stopped): its child was reaped.
                    self.reaped(id);
                    captured.failures.push((id, error));
                }
            }
        }
        tracing::info!(processes = captured.processes.len(), failed = captured.failures.len(), "processes captured");
        captured
    }

    /// Rebuilds the processes of an upgrade's state and registers them under their ids (the next id is at least
    /// `next_id`), each taking the descriptors its state names from `adopt`, and tells the hook of each child
    /// again (the record of process groups of the image that restores them). A process that cannot be rebuilt
    /// is left out, with its error: its child, when it is still this process's, is killed with its group and
    /// reaped, and the hook is told ([`end_left_out`]); the others run. Refused as a whole, rebuilding nothing,
    /// when the service is stopped or already has a process with one of the ids.
    pub(crate) fn restore_all(
        &self,
        next_id: u64,
        processes: Vec<ProcessState>,
        mut adopt: impl FnMut(i32) -> Result<OwnedFd, String>,
    ) -> Result<Vec<UpgradeError>, UpgradeError> {
        {
            let mut registry = self.processes();
            let registry = registry.get_or_insert_with(BTreeMap::new);
            if let Some(taken) = processes.iter().find(|process| registry.contains_key(&process.id())) {
                return Err(UpgradeError::Mismatch(format!("process {} is running already", taken.id())));
            }
        }
        self.next_id.fetch_max(next_id, Ordering::Relaxed);
        let mut failures = Vec::new();
        let mut rebuilder = Rebuilder::default();
        // The restored terminals start together once every process is restored (the sender's drop).
        let (release, gate) = crossbeam_channel::bounded::<()>(0);
        for state in processes {
            let id = state.id();
            let child = match &state {
                ProcessState::Pty(terminal) => terminal.child,
                ProcessState::Pipe(pipe) => pipe.child,
            };
            match self.restore_one(state, &mut adopt, &mut rebuilder, &gate) {
                Ok(entry) => {
                    if let Err(error) = self.started(id, &entry.process) {
                        // Unrecorded, the process still runs: a guardian that outlives this image may miss it.
                        tracing::warn!(id, %error, "a restored process is not in the record of process groups");
                    }
                    if let Some(registry) = self.processes().as_mut() {
                        registry.insert(id, entry);
                    }
                }
                Err(error) => {
                    if end_left_out(&child) {
                        tracing::warn!(id, pid = child.pid, "a process left out of the restore: its group was ended");
                    }
                    // Off the record (of the image that captured it, when it falls back) either way.
                    self.reaped(id);
                    failures.push(error);
                }
            }
        }
        // The terminals start, and their emulators are made from here on, while they serve (`terminal/rebuild.rs`).
        drop(release);
        rebuilder.start();
        tracing::info!(failed = failures.len(), "processes restored");
        Ok(failures)
    }

    /// One process from its state, with its share of `list` reserved again.
    fn restore_one(
        &self,
        state: ProcessState,
        adopt: &mut impl FnMut(i32) -> Result<OwnedFd, String>,
        rebuilder: &mut Rebuilder,
        gate: &crossbeam_channel::Receiver<()>,
    ) -> Result<Entry, UpgradeError> {
        let id = state.id();
        let mut take = |fd: i32| adopt(fd).map_err(|reason| UpgradeError::Descriptor { id, fd, reason });
        let failed = |source: ServiceError| UpgradeError::Process { id, source };
        match state {
            ProcessState::Pty(terminal) => {
                let master = take(terminal.master_fd)?;
                let screen = terminal.screen_file.map(|file| take(file.fd)).transpose()?;
                let spec = crate::terminal::spec_from_state(&terminal.spec);
                let command = std::iter::once(&spec.program).chain(&spec.args);
                let listing = self.reserve_restored(Mode::Pty, listing::pty_cost(&spec, command_bytes(command)));
                let handle =
                    PtyHandle::restore(*terminal, master, screen, self.config.clone(), rebuilder, Some(gate.clone()))
                        .map_err(failed)?;
                Ok(Entry { process: Process::Pty(Arc::new(handle)), _listing: listing })
            }
            ProcessState::Pipe(pipe) => {
                let fds = (pipe.pipe_fd.map(&mut take).transpose()?, pipe.output_fd.map(&mut take).transpose()?);
                let (program, args) =
                    pipe.command.split_first().map_or((String::new(), Vec::new()), |(p, a)| (p.clone(), a.to_vec()));
                let cost = listing::pipe_cost(
                    &PipeSpec {
                        program,
                        args,
                        cwd: PathBuf::from(&pipe.cwd),
                        env: Default::default(),
                        group_id: pipe.group_id.clone(),
                        output_path: PathBuf::from(&pipe.output_path),
                        metadata: Default::default(),
                    },
                    command_bytes(&pipe.command),
                );
                let listing = self.reserve_restored(Mode::Pipe, cost);
                let handle = PipeHandle::restore(*pipe, fds.0, fds.1, self.metadata.clone()).map_err(failed)?;
                Ok(Entry { process: Process::Pipe(Arc::new(handle)), _listing: listing })
            }
        }
    }

    fn reserve_restored(&self, mode: Mode, bytes: usize) -> Reservation {
        self.listing(mode).reserve_restored(bytes)
    }
}

/// Ends the child of a process the restore left out, if it is still this process's child (not reaped: by the
/// failed restore itself, or by whoever reaped it before the capture) and the one the state names (its start
/// time, when known): SIGKILL to its group and to it, then reaped. Nothing else would ever reap it, and, off
/// the record of process groups, no guardian would end its group. Returns whether it ended one.
fn end_left_out(child: &ChildState) -> bool {
    use nix::sys::wait::{Id, WaitPidFlag, waitid};
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.pid).unwrap_or(i32::MAX));
    // Looks without reaping: ECHILD means it is not (or no longer) this process's child.
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    if waitid(Id::Pid(pid), flags).is_err() {
        return false;
    }
    if let Some(start) = child.start
        && proc_stat(child.pid).is_some_and(|stat| stat.start != start)
    {
        return false;
    }
    Child::new(child.pid).kill_and_reap();
    true
}

/// What a command (program first, then its arguments) takes as the JSON array `command` (see
/// `bounds::check_process`).
fn command_bytes<'a>(command: impl IntoIterator<Item = &'a String>) -> usize {
    let (items, bytes) =
        command.into_iter().fold((0usize, 0usize), |(items, bytes), part| (items + 1, bytes + json_len(part)));
    2 + items.saturating_sub(1) + bytes
}

#[cfg(test)]
mod tests;

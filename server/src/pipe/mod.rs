//! Pipe processes: a command without a terminal whose stdout and stderr go, in order, to an output file. The
//! handle the service holds, and the two threads behind it (the reader and the wait thread).
//!
//! Nothing parses the output and nothing keeps it: the file is the only copy. The daemon only counts it
//! (`output_tail`, and the newlines that reached the file as `output_lines`), and publishes `exited` once both
//! the exit status and the end of the output are known. The child stays a zombie until [`PipeHandle::terminate`],
//! so its pid and process group id stay reserved and signalling them can never reach an unrelated process. If
//! waiting for the child fails (someone else reaped it), that pid is never signalled or waited for again.
//!
//! The metadata of all of a daemon's live pipe processes shares one [`MetadataBudget`].

mod budget;
mod handover;
mod io;
mod spawn;
mod state;

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use nix::errno::Errno;
use nix::sys::signal::{kill, killpg};
use nix::unistd::Pid;
use opencode_pty_protocol::{Mode, PipeInfo, ProcessInfo, Response, Role, Signal};
use serde_json::{Map, Value};

pub use budget::{MAX_TOTAL_METADATA_BYTES, MetadataBudget};
pub use io::{LINGER, stalled_output_error};
pub(crate) use spawn::{check_echoed, check_metadata, check_outside};
pub use state::{MAX_PIPE_WAITERS, PipeWait};

use crate::error::ServiceError;
use crate::process::threads::Threads;
use crate::process::{Child, ProcessSubscription, ReplayRead, StopReason};
use state::{PipeProgress, PipeState};

/// What a pipe process is started with.
#[derive(Debug, Clone, PartialEq)]
pub struct PipeSpec {
    /// The program, found through `env`'s `PATH` (or the system default path when it has none).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The absolute working directory.
    pub cwd: PathBuf,
    /// The child's whole environment: nothing is inherited from the daemon.
    pub env: HashMap<String, String>,
    /// Opaque grouping key.
    pub group_id: String,
    /// The absolute path of the file that receives stdout and stderr.
    pub output_path: PathBuf,
    /// Opaque metadata, at most `MAX_METADATA_BYTES` serialized.
    pub metadata: Map<String, Value>,
}

/// A running (or exited but not yet terminated) pipe process, as the service holds it.
#[derive(Debug)]
pub struct PipeHandle {
    id: u64,
    pid: u32,
    command: Vec<String>,
    cwd: String,
    group_id: String,
    output_path: String,
    started_at: u64,
    state: Arc<PipeState>,
    /// The daemon-wide metadata budget this process's metadata counts against until terminate.
    budget: Arc<MetadataBudget>,
    /// The stop pipe's write end, dropped to stop the reader. `None` once terminated; held while signalling, so
    /// no signal can follow the reaping of the pid.
    stop: Mutex<Option<OwnedFd>>,
    threads: Threads,
    /// What the reader hands back when the process is captured for an upgrade (`handover.rs`).
    handback: Arc<io::Handback>,
}

/// Everything a pipe process needs that can fail, made before it runs.
struct Prepared {
    file: File,
    /// The stop pipe: (read end for the reader, write end for the handle).
    stop: (OwnedFd, OwnedFd),
    /// The exit pipe: (read end for the reader, write end for the wait thread).
    exit: (OwnedFd, OwnedFd),
    spawned: spawn::Spawned,
}

impl Prepared {
    /// In order: the output file, the stop and exit pipes (so running out of descriptors starts nothing), then
    /// the child, which comes last.
    fn new(spec: &PipeSpec) -> Result<Prepared, ServiceError> {
        let file = spawn::open_output(&spec.output_path)?;
        let pipe = || {
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
                .map_err(|e| ServiceError::system("cannot create a pipe", e))
        };
        let (stop, exit) = (pipe()?, pipe()?);
        let spawned = spawn::spawn(spec)?;
        Ok(Prepared { file, stop, exit, spawned })
    }
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl PipeHandle {
    /// Checks the spec, reserves the metadata in `budget`, opens the output file, makes the stop and exit pipes,
    /// starts the child, and starts its two threads, named `opencode-pty-pipe-reader-<id>` and
    /// `opencode-pty-pipe-wait-<id>`. Every failure before the child starts starts nothing and releases the
    /// reservation.
    pub fn spawn(id: u64, spec: PipeSpec, budget: Arc<MetadataBudget>) -> Result<PipeHandle, ServiceError> {
        let metadata_bytes = spawn::validate(&spec)?;
        budget.replace(0, metadata_bytes)?;
        let Prepared { file, stop: (stop_read, stop_write), exit: (exit_read, exit_write), spawned } =
            match Prepared::new(&spec) {
                Ok(prepared) => prepared,
                Err(error) => {
                    let _ = budget.replace(metadata_bytes, 0);
                    return Err(error);
                }
            };
        let started_at = crate::time::now_ms();
        let pid = spawned.pid;
        let PipeSpec { program, args, cwd, group_id, output_path, metadata, .. } = spec;
        let state = Arc::new(PipeState::new(started_at, metadata, metadata_bytes));
        let handle = PipeHandle {
            id,
            pid,
            command: std::iter::once(program).chain(args).collect(),
            cwd: cwd.display().to_string(),
            group_id,
            output_path: output_path.display().to_string(),
            started_at,
            state: state.clone(),
            budget,
            stop: Mutex::new(Some(stop_write)),
            threads: Threads::default(),
            handback: Arc::default(),
        };
        let reader = io::Reader {
            pipe: File::from(spawned.output),
            file: Some(file),
            stop: stop_read,
            exit: exit_read,
            state,
            deadline: None,
            unwritten: Vec::new(),
            handback: handle.handback.clone(),
        };
        handle.start(Some(reader), exit_write, true)
    }

    /// Starts the reader (unless the output has ended: a process handed over after it did) and, when `watch`
    /// (unless waiting for the child failed before a handover), the child's watch. A failure terminates the
    /// process (kills and reaps the child, joins the thread that did start, and releases the metadata).
    fn start(self, reader: Option<io::Reader>, exit_write: OwnedFd, watch: bool) -> Result<PipeHandle, ServiceError> {
        let id = self.id;
        let started = match reader {
            Some(reader) => self.threads.start("pipe-", "reader", id, move || io::reader(reader)),
            None => Ok(()),
        };
        let state = self.state.clone();
        let started = started.and_then(|()| {
            if !watch {
                return Ok(());
            }
            let report = move |end| io::child_ended(end, exit_write, &state);
            Child::new(self.pid).watch(&self.threads, id, report)
        });
        if let Err(error) = started {
            self.terminate(StopReason::Terminate);
            return Err(error);
        }
        Ok(self)
    }

    /// The process id (the service's).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The child's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    fn info_locked(&self, progress: &PipeProgress) -> ProcessInfo {
        ProcessInfo {
            id: self.id,
            mode: Mode::Pipe,
            pid: Some(self.pid),
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            group_id: self.group_id.clone(),
            lifecycle: progress.lifecycle(),
            // No replay is kept: the head is always the tail.
            output_head: progress.tail,
            output_tail: progress.tail,
            started_at: self.started_at,
            exited_at: progress.exited_at,
            pty: None,
            pipe: Some(PipeInfo {
                output_path: self.output_path.clone(),
                output_lines: progress.lines,
                output_error: progress.output_error.clone(),
                metadata: progress.metadata.clone(),
            }),
        }
    }

    /// Describes the process; `output_tail` and `output_lines` are always a matching pair.
    pub fn info(&self) -> ProcessInfo {
        self.info_locked(&self.state.lock())
    }

    /// An empty replay with the offsets a PTY would give: the output is only in the file.
    pub fn replay(&self, offset: u64) -> Result<ReplayRead, ServiceError> {
        empty_replay(offset, self.state.lock().tail)
    }

    /// Attaches an observer: `attached` (with an empty replay), then the final answer when it comes (at once
    /// when it already has): `exited`, or `error` when waiting for the child failed; then the channel
    /// disconnects. No output is ever sent. Refused after terminate. Dropping the subscription detaches it.
    pub fn subscribe(&self, offset: u64) -> Result<ProcessSubscription, ServiceError> {
        state::subscribe(&self.state, self.id, |progress| {
            let read = empty_replay(offset, progress.tail)?;
            Ok(Response::Attached {
                process: self.info_locked(progress),
                role: Role::Observer,
                generation: 0,
                requested_offset: read.requested,
                available_offset: read.available,
                end_offset: read.end,
                truncated: read.truncated,
                replay_base64: String::new(),
            })
        })
    }

    /// A waiter that receives `exited` once the process has exited (at once when it already has),
    /// [`ServiceError::Terminated`] when it is terminated first, or [`ServiceError::WaitFailed`] when waiting
    /// for the child failed. Disconnects without an answer when the process is stopped with the daemon
    /// ([`Self::terminate`] with [`StopReason::Shutdown`], or dropping the handle). Dropping the waiter removes
    /// it.
    pub fn wait(&self) -> PipeWait {
        PipeWait::new(&self.state, self.id)
    }

    /// Sends `signal` to the child's process group and to the child. An empty group is not an error: the
    /// zombie child keeps the group id reserved. Fails after terminate, and once waiting for the child failed
    /// (its pid may belong to another process by then).
    pub fn signal(&self, signal: Signal) -> Result<(), ServiceError> {
        let stop = locked(&self.stop);
        if stop.is_none() {
            return Err(ServiceError::NotFound(self.id));
        }
        if let Some(reason) = self.state.lock().lost() {
            let reason = ServiceError::WaitFailed(reason.to_owned()).to_string();
            return Err(ServiceError::Unsignallable { id: self.id, reason });
        }
        let signal = match signal {
            Signal::Sigterm => nix::sys::signal::Signal::SIGTERM,
            Signal::Sigint => nix::sys::signal::Signal::SIGINT,
            Signal::Sigkill => nix::sys::signal::Signal::SIGKILL,
        };
        let pid = Pid::from_raw(self.pid as i32);
        for result in [killpg(pid, signal), kill(pid, signal)] {
            match result {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => return Err(ServiceError::system(format!("cannot signal process {}", self.id), e)),
            }
        }
        Ok(())
    }

    /// Replaces the metadata (at most `MAX_METADATA_BYTES` serialized, and within the daemon's
    /// [`MAX_TOTAL_METADATA_BYTES`] with everything else). Fails after terminate; a refusal changes nothing.
    pub fn set_metadata(&self, metadata: Map<String, Value>) -> Result<(), ServiceError> {
        let bytes = check_metadata(&metadata)?;
        let mut progress = self.state.lock();
        if progress.terminated {
            return Err(ServiceError::NotFound(self.id));
        }
        self.budget.replace(progress.metadata_bytes, bytes)?;
        progress.metadata = metadata;
        progress.metadata_bytes = bytes;
        Ok(())
    }

    /// Kills the child's process group and the child, stops and joins both threads, reaps the child, and
    /// releases the metadata. Pending waiters are answered [`ServiceError::Terminated`] for
    /// [`StopReason::Terminate`], and disconnected without an answer for [`StopReason::Shutdown`]. Never waits
    /// on a descendant that left the group and still holds the pipe. Returns false when already terminated.
    pub fn terminate(&self, reason: StopReason) -> bool {
        if !self.begin_stop(reason) {
            return false;
        }
        self.finish_stop();
        true
    }

    /// The first step of [`Self::terminate`]: answers the waiters, releases the metadata, ends the threads' work
    /// and kills the child's group. False when already terminated; otherwise [`Self::finish_stop`] must follow.
    pub(crate) fn begin_stop(&self, reason: StopReason) -> bool {
        let stop = locked(&self.stop).take();
        let Some(stop) = stop else { return false };
        // First, so the exit our SIGKILL causes is never published.
        let released = self.state.terminate(reason);
        let _ = self.budget.replace(released, 0);
        // Waiting for the child may have failed (someone else reaped it): then the pid is left alone.
        Child::new(self.pid).begin_stop(stop, || self.lost());
        true
    }

    /// The last step of [`Self::terminate`]: joins both threads and reaps the child (unless it was lost).
    pub(crate) fn finish_stop(&self) {
        Child::new(self.pid).finish_stop(&self.threads, || self.lost());
    }

    /// Whether waiting for the child failed: someone else reaped it, and its pid may be anyone's.
    fn lost(&self) -> bool {
        self.state.lock().lost().is_some()
    }
}

impl Drop for PipeHandle {
    fn drop(&mut self) {
        self.terminate(StopReason::Shutdown);
    }
}

/// The replay of a process that keeps none: nothing, from the tail.
fn empty_replay(offset: u64, tail: u64) -> Result<ReplayRead, ServiceError> {
    if offset > tail {
        return Err(ServiceError::BeyondTail { offset, tail });
    }
    Ok(ReplayRead { requested: offset, available: tail, end: tail, truncated: offset < tail, bytes: Vec::new() })
}

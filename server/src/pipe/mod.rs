//! Pipe processes: a command without a terminal whose stdout and stderr go, in order, to an output file. The
//! handle the service holds, and the two threads behind it (the reader and the wait thread).
//!
//! Nothing parses the output and nothing keeps it: the file is the only copy. The daemon only counts it
//! (`output_tail`, and the newlines that reached the file as `output_lines`), and publishes `exited` once both
//! the exit status and the end of the output are known. The child stays a zombie until [`PipeHandle::terminate`],
//! so its pid and process group id stay reserved and signalling them can never reach an unrelated process.

mod io;
mod spawn;
mod state;

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crossbeam_channel::Receiver;
use nix::errno::Errno;
use nix::sys::signal::{kill, killpg};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;
use opencode_pty_protocol::{Mode, PipeInfo, ProcessInfo, Response, Role, Signal};
use serde_json::{Map, Value};

pub use io::{LINGER, PIPE_READ_CHUNK_BYTES};
pub use spawn::{OUTPUT_FILE_MODE, check_metadata};
pub use state::{MAX_PIPE_WAITERS, PIPE_SUBSCRIPTION_EVENTS, WaitResult};

use crate::error::ServiceError;
use crate::terminal::{Event, ReplayRead};
use state::{Shared, State};

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
    shared: Arc<Shared>,
    /// The stop pipe's write end, dropped to stop the reader. `None` once terminated; held while signalling, so
    /// no signal can follow the reaping of the pid.
    stop: Mutex<Option<OwnedFd>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl PipeHandle {
    /// Checks the spec, opens the output file, starts the child, and starts its two threads, named
    /// `opencode-pty-pipe-reader-<id>` and `opencode-pty-pipe-wait-<id>`.
    pub fn spawn(id: u64, spec: PipeSpec) -> Result<PipeHandle, ServiceError> {
        spawn::validate(&spec)?;
        let file = spawn::open_output(&spec.output_path)?;
        let spawned = spawn::spawn(&spec)?;
        let started_at = crate::now_ms();
        let pid = spawned.pid;
        let pipes = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .and_then(|stop| Ok((stop, nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)));
        let ((stop_read, stop_write), (exit_read, exit_write)) = pipes.map_err(|e| {
            spawn::abandon(pid);
            ServiceError::invalid(format!("cannot create a pipe: {e}"))
        })?;
        let PipeSpec { program, args, cwd, group_id, output_path, metadata, .. } = spec;
        let shared = Arc::new(Shared::new(started_at, metadata));
        let handle = PipeHandle {
            id,
            pid,
            command: std::iter::once(program).chain(args).collect(),
            cwd: cwd.display().to_string(),
            group_id,
            output_path: output_path.display().to_string(),
            started_at,
            shared: shared.clone(),
            stop: Mutex::new(Some(stop_write)),
            threads: Mutex::new(Vec::new()),
        };
        let reader = io::Reader {
            pipe: File::from(spawned.output),
            file: Some(file),
            stop: stop_read,
            exit: exit_read,
            shared: shared.clone(),
        };
        let start = |role: &str, body: Box<dyn FnOnce() + Send>| {
            let thread = std::thread::Builder::new().name(format!("opencode-pty-pipe-{role}-{id}")).spawn(body);
            let thread = thread.map_err(|e| ServiceError::invalid(format!("cannot start the {role} thread: {e}")))?;
            locked(&handle.threads).push(thread);
            Ok::<_, ServiceError>(())
        };
        let started = start("reader", Box::new(move || io::reader(reader)))
            .and_then(|()| start("wait", Box::new(move || io::waiter(pid, exit_write, shared))));
        if let Err(error) = started {
            handle.terminate();
            return Err(error);
        }
        Ok(handle)
    }

    /// The process id (the service's).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The child's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    fn info_locked(&self, state: &State) -> ProcessInfo {
        ProcessInfo {
            id: self.id,
            mode: Mode::Pipe,
            pid: Some(self.pid),
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            group_id: self.group_id.clone(),
            lifecycle: state.lifecycle(),
            // No replay is kept: the head is always the tail.
            output_head: state.tail,
            output_tail: state.tail,
            started_at: self.started_at,
            exited_at: state.exited_at,
            pty: None,
            pipe: Some(PipeInfo {
                output_path: self.output_path.clone(),
                output_lines: state.lines,
                output_error: state.output_error.clone(),
                metadata: state.metadata.clone(),
            }),
        }
    }

    /// Describes the process; `output_tail` and `output_lines` are always a matching pair.
    pub fn info(&self) -> ProcessInfo {
        self.info_locked(&self.shared.lock())
    }

    /// An empty replay with the offsets a PTY would give: the output is only in the file.
    pub fn replay(&self, offset: u64) -> Result<ReplayRead, ServiceError> {
        empty_replay(offset, self.shared.lock().tail)
    }

    /// Attaches an observer: `attached` (with an empty replay), then `exited` when it happens (at once when it
    /// already has), then the channel disconnects. No output is ever sent. Refused after terminate.
    pub fn subscribe(&self, offset: u64) -> Result<Receiver<Event>, ServiceError> {
        let mut state = self.shared.lock();
        let read = empty_replay(offset, state.tail)?;
        let attached = Response::Attached {
            process: self.info_locked(&state),
            role: Role::Observer,
            generation: 0,
            requested_offset: read.requested,
            available_offset: read.available,
            end_offset: read.end,
            truncated: read.truncated,
            replay_base64: String::new(),
        };
        state.add_subscriber(self.id, attached)
    }

    /// Receives `exited` once the process has exited (at once when it already has), or
    /// [`ServiceError::Terminated`] when it is terminated first. Disconnects without an answer when the process
    /// is stopped with the daemon ([`Self::stop`], or dropping the handle).
    pub fn wait(&self) -> Receiver<WaitResult> {
        self.shared.lock().add_waiter(self.id)
    }

    /// Sends `signal` to the child's process group and to the child. An empty group is not an error: the
    /// zombie child keeps the group id reserved. Fails after terminate.
    pub fn signal(&self, signal: Signal) -> Result<(), ServiceError> {
        let stop = locked(&self.stop);
        if stop.is_none() {
            return Err(ServiceError::NotFound(self.id));
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
                Err(e) => return Err(ServiceError::invalid(format!("cannot signal process {}: {e}", self.id))),
            }
        }
        Ok(())
    }

    /// Replaces the metadata (at most `MAX_METADATA_BYTES` serialized). Fails after terminate.
    pub fn set_metadata(&self, metadata: Map<String, Value>) -> Result<(), ServiceError> {
        check_metadata(&metadata)?;
        let mut state = self.shared.lock();
        if state.terminated {
            return Err(ServiceError::NotFound(self.id));
        }
        state.metadata = metadata;
        Ok(())
    }

    /// Kills the child's process group and the child, stops and joins both threads, reaps the child, and
    /// answers pending waiters with [`ServiceError::Terminated`]. Never waits on a descendant that left the
    /// group and still holds the pipe. Returns false when already terminated.
    pub fn terminate(&self) -> bool {
        self.shut(true)
    }

    /// [`Self::terminate`] for a daemon that is stopping: pending waiters are disconnected without an answer.
    pub fn stop(&self) -> bool {
        self.shut(false)
    }

    fn shut(&self, answer_waiters: bool) -> bool {
        let stop = locked(&self.stop).take();
        let Some(stop) = stop else { return false };
        // First, so the exit our SIGKILL causes is never published.
        self.shared.terminate(answer_waiters);
        // The child is not reaped before this point (the wait thread only observes), so its pid is still ours.
        let pid = Pid::from_raw(self.pid as i32);
        let _ = killpg(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = kill(pid, nix::sys::signal::Signal::SIGKILL);
        drop(stop);
        let threads = std::mem::take(&mut *locked(&self.threads));
        for thread in threads {
            let _ = thread.join();
        }
        let _ = waitpid(pid, None);
        true
    }
}

impl Drop for PipeHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The replay of a process that keeps none: nothing, from the tail.
fn empty_replay(offset: u64, tail: u64) -> Result<ReplayRead, ServiceError> {
    if offset > tail {
        return Err(ServiceError::invalid(format!("requested offset {offset} is beyond tail {tail}")));
    }
    Ok(ReplayRead { requested: offset, available: tail, end: tail, truncated: offset < tail, bytes: Vec::new() })
}

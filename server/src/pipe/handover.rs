//! A pipe process handed over by an in-place upgrade (issue 30): [`PipeHandle::begin_capture`] and
//! [`PipeHandle::finish_capture`] stop its reader between two chunks and take its state with the output pipe and the output file (whose position travels
//! with the descriptor), leaving the child running and unreaped; [`PipeHandle::restore`] starts a new reader
//! and watch from that state, in the successor (or in the same daemon, when the upgrade falls back).

use std::fs::File;
use std::io::Seek;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::budget::MetadataBudget;
use super::io::{self, Handback};
use super::state::PipeState;
use super::{PipeHandle, locked};
use crate::error::ServiceError;
use crate::process::StopReason;
use crate::process::threads::Threads;
use crate::procinfo::stat::proc_stat;
use crate::upgrade::{Blob, ChildState, PipeChildEnd, PipeProcessState};

/// A pipe process's state and the descriptors it names, which must stay open (across `execve`, for the
/// successor) until the process is restored: the output pipe and the output file, while its output has not
/// ended.
#[derive(Debug)]
pub(crate) struct CapturedPipe {
    pub(crate) state: PipeProcessState,
    pub(crate) pipe: Option<OwnedFd>,
    pub(crate) file: Option<OwnedFd>,
}

impl PipeHandle {
    /// The first step of a capture: tells the reader to stop. Fails, changing nothing, after terminate;
    /// [`Self::finish_capture`] must follow.
    pub(crate) fn begin_capture(&self) -> Result<(), ServiceError> {
        let Some(stop) = locked(&self.stop).take() else { return Err(ServiceError::NotFound(self.id)) };
        self.handback.capture();
        drop(stop);
        Ok(())
    }

    /// The second step: the state, once the reader has stopped at its next wait (a chunk it read is in the file,
    /// or what the file had not taken is in the state, counted) with the child's watch: counts, metadata,
    /// lifecycle, and the pipe and file the reader left. The child is neither signalled nor reaped (an exit
    /// meanwhile is seen by the successor's watch). Waiters and subscribers are let go without an answer, as at a
    /// shutdown; the metadata's share of the budget is given back. From then on the handle is inert.
    pub(crate) fn finish_capture(&self) -> CapturedPipe {
        self.threads.join_all();
        let left = self.handback.take();
        let mut state = PipeProcessState {
            id: self.id,
            child: ChildState { pid: self.pid, session: None, start: None },
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            group_id: self.group_id.clone(),
            output_path: self.output_path.clone(),
            started_at: self.started_at,
            pipe_fd: None,
            output_fd: None,
            output_position: None,
            linger_left_ms: None,
            unwritten: Blob::default(),
            tail: 0,
            lines: 0,
            output_error: None,
            metadata: serde_json::Map::new(),
            child_end: None,
            output_ended: false,
            exited_at: None,
        };
        self.state.fill(&mut state);
        let released = self.state.terminate(StopReason::Shutdown);
        let _ = self.budget.replace(released, 0);
        // Unless waiting for it failed (its pid may be anyone's), the child is still ours: a zombie at worst.
        if !matches!(state.child_end, Some(PipeChildEnd::Lost(_)))
            && let Some(stat) = proc_stat(self.pid)
        {
            (state.child.session, state.child.start) = (Some(stat.session), Some(stat.start));
        }
        let (mut pipe, mut file) = (None, None);
        if let Some(left) = left {
            state.output_position = left.file.as_ref().and_then(|mut file| file.stream_position().ok());
            state.linger_left_ms = left.linger_left.map(|left| u64::try_from(left.as_millis()).unwrap_or(u64::MAX));
            state.unwritten = Blob(left.unwritten);
            let (pipe_fd, file_fd) = (OwnedFd::from(left.pipe), left.file.map(OwnedFd::from));
            state.pipe_fd = Some(pipe_fd.as_raw_fd());
            state.output_fd = file_fd.as_ref().map(AsRawFd::as_raw_fd);
            (pipe, file) = (Some(pipe_fd), file_fd);
        }
        CapturedPipe { state, pipe, file }
    }

    /// The pipe process `state` describes, with the same child, around `pipe` and `file` (the descriptors the
    /// state names, while its output has not ended): the counts and metadata (taking its share of `budget`
    /// again), the lifecycle (a final answer already published is answered again, the same), and a new reader
    /// and watch. Refused when the child is not the one the state names (another start time).
    pub(crate) fn restore(
        state: PipeProcessState,
        pipe: Option<OwnedFd>,
        file: Option<OwnedFd>,
        budget: Arc<MetadataBudget>,
    ) -> Result<PipeHandle, ServiceError> {
        let (id, pid) = (state.id, state.child.pid);
        let refuse = |reason: String| ServiceError::system(format!("cannot restore pipe process {id}"), reason);
        let lost = matches!(state.child_end, Some(PipeChildEnd::Lost(_)));
        if !lost {
            match (state.child.start, proc_stat(pid)) {
                (_, None) => return Err(refuse(format!("pid {pid} is gone"))),
                (Some(start), Some(stat)) if stat.start != start => {
                    return Err(refuse(format!("pid {pid} is not its child any more")));
                }
                _ => {}
            }
        }
        let reader_fds = match (state.output_ended, pipe) {
            (true, _) => None,
            (false, Some(pipe)) => Some((pipe, file)),
            (false, None) => return Err(refuse("the state names no output pipe for its running output".into())),
        };
        let pipe = || {
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
                .map_err(|e| ServiceError::system("cannot create a pipe", e))
        };
        let ((stop_read, stop_write), (exit_read, exit_write)) = (pipe()?, pipe()?);
        // Its size as the predecessor counted it; the budget takes it even past its limit (a build with a lower
        // one must not drop a process it was handed).
        let metadata_bytes = serde_json::to_vec(&state.metadata).map_or(0, |json| json.len());
        budget.restore(metadata_bytes);
        let shared = Arc::new(PipeState::restored(state.started_at, &state, metadata_bytes));
        let handle = PipeHandle {
            id,
            pid,
            command: state.command,
            cwd: state.cwd,
            group_id: state.group_id,
            output_path: state.output_path,
            started_at: state.started_at,
            state: shared.clone(),
            budget,
            stop: Mutex::new(Some(stop_write)),
            threads: Threads::default(),
            handback: Arc::new(Handback::default()),
        };
        let reader = reader_fds.map(|(pipe, file)| io::Reader {
            pipe: File::from(pipe),
            file: file.map(File::from),
            stop: stop_read,
            exit: exit_read,
            state: shared,
            deadline: state.linger_left_ms.map(|left| Instant::now() + Duration::from_millis(left)),
            unwritten: state.unwritten.0,
            handback: handle.handback.clone(),
        });
        handle.start(reader, exit_write, !lost)
    }
}

//! The two threads of a pipe process: the reader, the only reader of the child's stdout/stderr pipe and the only
//! writer of the output file, and the wait thread, which learns the child's exit without reaping it.
//!
//! The reader waits in `poll` on the pipe, a stop pipe (closed by terminate) and an exit pipe (closed by the
//! wait thread when the child exits). Every chunk is written to the file before it is counted. After the exit
//! it drains the pipe until EOF, but for at most [`LINGER`]: a descendant that keeps the pipe open (`cmd &`)
//! cannot delay `exited` longer. Then it closes the file and the pipe (so leftover writers get SIGPIPE) and
//! reports the end of the output.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use super::state::{ExitStatus, Shared};

/// Bytes read from the pipe (and written to the file) at a time.
pub const PIPE_READ_CHUNK_BYTES: usize = 64 * 1024;

/// How long the reader keeps draining the pipe after the child exited, when something else still holds it.
pub const LINGER: Duration = Duration::from_secs(1);

/// What the reader owns.
#[derive(Debug)]
pub(crate) struct Reader {
    /// The read end of the child's pipe (non-blocking).
    pub(crate) pipe: File,
    /// The output file; `None` once writing it failed.
    pub(crate) file: Option<File>,
    /// Readable (hung up) once terminate dropped the write end.
    pub(crate) stop: OwnedFd,
    /// Readable (hung up) once the wait thread saw the exit.
    pub(crate) exit: OwnedFd,
    pub(crate) shared: Arc<Shared>,
}

/// What woke the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    /// The pipe has data or hung up: a read tells which.
    Readable,
    /// The child exited: start the linger.
    Exited,
    /// The linger ran out.
    Deadline,
    /// Terminate: leave at once.
    Stop,
}

/// Whether a descriptor polled ready for anything at all (data, hang-up or error).
fn fired(fd: &PollFd<'_>) -> bool {
    fd.revents().is_some_and(|r| !r.is_empty())
}

/// The poll timeout until `deadline` (rounded up, so the wait never ends early), or none.
fn timeout_until(deadline: Option<Instant>) -> PollTimeout {
    let Some(deadline) = deadline else { return PollTimeout::NONE };
    let left = deadline.saturating_duration_since(Instant::now());
    let millis = left.as_micros().div_ceil(1000);
    PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX)
}

impl Reader {
    /// Waits for data, the exit (while `watch_exit`), the deadline or the stop pipe.
    fn wait(&self, watch_exit: bool, deadline: Option<Instant>) -> Wake {
        loop {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Wake::Deadline;
            }
            let mut fds = vec![
                PollFd::new(self.stop.as_fd(), PollFlags::POLLIN),
                PollFd::new(self.pipe.as_fd(), PollFlags::POLLIN),
            ];
            if watch_exit {
                fds.push(PollFd::new(self.exit.as_fd(), PollFlags::POLLIN));
            }
            match poll(&mut fds, timeout_until(deadline)) {
                Ok(_) if fired(&fds[0]) => return Wake::Stop,
                Ok(_) if fired(&fds[1]) => return Wake::Readable,
                Ok(_) if watch_exit && fired(&fds[2]) => return Wake::Exited,
                Ok(_) | Err(Errno::EINTR) => {}
                Err(_) => return Wake::Stop,
            }
        }
    }

    /// Writes a chunk to the file (unless writing already failed), then counts it. False means stop.
    fn deliver(&mut self, chunk: &[u8]) -> bool {
        let mut newlines = 0u64;
        let mut error = None;
        if let Some(file) = self.file.as_mut() {
            let mut written = 0;
            while written < chunk.len() {
                match file.write(&chunk[written..]) {
                    Ok(0) => {
                        error = Some(std::io::Error::from(std::io::ErrorKind::WriteZero).to_string());
                        break;
                    }
                    Ok(n) => {
                        newlines += chunk[written..written + n].iter().filter(|&&b| b == b'\n').count() as u64;
                        written += n;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        // A FIFO or device that is full: wait for room, or for terminate.
                        let mut fds = [
                            PollFd::new(self.stop.as_fd(), PollFlags::POLLIN),
                            PollFd::new(file.as_fd(), PollFlags::POLLOUT),
                        ];
                        match poll(&mut fds, PollTimeout::NONE) {
                            Ok(_) if fired(&fds[0]) => return false,
                            Ok(_) | Err(Errno::EINTR) => {}
                            Err(_) => return false,
                        }
                    }
                    Err(e) => {
                        error = Some(e.to_string());
                        break;
                    }
                }
            }
            if error.is_some() {
                // Nothing more goes to the file, and nothing more is counted as lines.
                self.file = None;
            }
        }
        self.shared.output(chunk.len(), newlines, error);
        true
    }
}

/// The reader thread. Reports the end of the output only after the file and the pipe are closed; returns
/// without reporting anything when stopped.
pub(crate) fn reader(mut reader: Reader) {
    let mut buffer = vec![0u8; PIPE_READ_CHUNK_BYTES];
    let mut deadline: Option<Instant> = None;
    let mut failure = None;
    loop {
        match reader.wait(deadline.is_none(), deadline) {
            Wake::Stop => return,
            Wake::Deadline => break,
            Wake::Exited => {
                deadline = Some(Instant::now() + LINGER);
                continue;
            }
            Wake::Readable => {}
        }
        match reader.pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                if !reader.deliver(&buffer[..n]) {
                    return;
                }
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted) => {}
            Err(e) => {
                failure = Some(format!("reading the output pipe failed: {e}"));
                break;
            }
        }
    }
    let Reader { pipe, file, shared, .. } = reader;
    drop(file);
    drop(pipe);
    shared.output_ended(failure);
}

/// The wait thread: records the child's exit without reaping it, so its pid and process group stay reserved
/// (and safe to signal) until terminate, then tells the reader by closing `exit`.
pub(crate) fn waiter(pid: u32, exit: OwnedFd, shared: Arc<Shared>) {
    let pid = Pid::from_raw(pid as i32);
    loop {
        match waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
            Ok(WaitStatus::Exited(_, code)) => {
                shared.child_exited(ExitStatus { exit_code: Some(code as u32), signal: None });
                break;
            }
            Ok(WaitStatus::Signaled(_, signal, _)) => {
                shared.child_exited(ExitStatus { exit_code: None, signal: Some(signal.as_str().to_owned()) });
                break;
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(error) => {
                shared.wait_failed(format!("waiting for the child failed: {error}"));
                break;
            }
        }
    }
    drop(exit);
}

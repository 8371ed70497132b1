//! The two threads of a pipe process: the reader, the only reader of the child's stdout/stderr pipe and the only
//! writer of the output file, and what the wait thread (`process::Child`'s) reports when the child ends.
//!
//! The reader waits in `poll` on the pipe, a stop pipe (closed by terminate) and an exit pipe (closed by the
//! wait thread when the child exits, or when waiting for it failed). Every chunk is written to the file before
//! it is counted. After the exit it drains the pipe until EOF, but for at most [`LINGER`]: neither a
//! descendant that keeps the pipe open (`cmd &`) and busy, nor an output file that stops taking data (a FIFO
//! nobody reads) can delay `exited` longer. The exit is noticed while the pipe has data and while a write waits
//! for room; a write still waiting when the linger runs out is given up (see [`stalled_output_error`]). Then
//! the reader closes the file and the pipe (so leftover writers get SIGPIPE) and reports the end of the output;
//! a failure to poll or read the pipe ends it the same way, with the failure as the output error.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::state::PipeState;
use crate::process::ExitStatus;

/// Bytes read from the pipe (and written to the file) at a time.
pub(super) const PIPE_READ_CHUNK_BYTES: usize = 256 * 1024;

/// How many full reads may follow each other without a `poll`: while the pipe keeps filling whole chunks the
/// reader reads on (a system call less per chunk), but it still looks at the stop and exit pipes, and at the
/// linger's end, at least every this many chunks (1 MiB).
pub(super) const MAX_READS_WITHOUT_POLL: usize = 16;

/// How long the reader keeps draining the pipe after the child exited, when something else still holds it.
pub const LINGER: Duration = Duration::from_secs(1);

/// What the reader hands back when its process is captured for an upgrade (`PipeHandle::finish_capture`): once
/// [`Self::capture`] was called, a stop leaves the pipe and the output file here, with the linger's time left
/// and the part of a chunk the file had not taken (counted already), instead of closing them.
#[derive(Debug, Default)]
pub(crate) struct Handback {
    capturing: AtomicBool,
    left: Mutex<Option<ReaderLeft>>,
}

/// What a captured reader left.
#[derive(Debug)]
pub(crate) struct ReaderLeft {
    pub(crate) pipe: File,
    pub(crate) file: Option<File>,
    pub(crate) linger_left: Option<Duration>,
    pub(crate) unwritten: Vec<u8>,
}

impl Handback {
    /// The process is being captured: from now on a stop hands over instead of closing.
    pub(crate) fn capture(&self) {
        self.capturing.store(true, Ordering::SeqCst);
    }

    fn capturing(&self) -> bool {
        self.capturing.load(Ordering::SeqCst)
    }

    /// What the reader left, once it has ended (`None` when its output had ended before).
    pub(crate) fn take(&self) -> Option<ReaderLeft> {
        self.left.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// What became of a chunk handed to the file.
#[derive(Debug, PartialEq, Eq)]
enum Delivered {
    /// Written (or given up on) and counted.
    Done,
    /// The process is stopping: what the file had not taken (only kept when it is captured).
    Stopped(Vec<u8>),
}

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
    pub(crate) state: Arc<PipeState>,
    /// When the linger ends; set once the exit was seen.
    pub(crate) deadline: Option<Instant>,
    /// Output read and counted before an upgrade that the file had not taken: written before anything is read.
    pub(crate) unwritten: Vec<u8>,
    /// Where a captured reader leaves what it holds.
    pub(crate) handback: Arc<Handback>,
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
    /// `poll` itself failed: the output cannot be read any more.
    Failed(Errno),
}

/// The output error when the linger ran out while the output file could not take more (a FIFO whose reader
/// stalled): the rest of the output is counted but not in the file.
pub fn stalled_output_error() -> String {
    format!("the output file did not accept more output within {} s of the exit", LINGER.as_secs())
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
    /// Whether the linger has run out.
    fn lingered(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Starts the linger: the child exited.
    fn start_linger(&mut self) {
        self.deadline = Some(Instant::now() + LINGER);
    }

    /// Waits for data, the exit (until it was seen), the end of the linger or the stop pipe.
    fn wait(&self) -> Wake {
        loop {
            if self.lingered() {
                return Wake::Deadline;
            }
            let watch_exit = self.deadline.is_none();
            let mut all = [
                PollFd::new(self.stop.as_fd(), PollFlags::POLLIN),
                PollFd::new(self.pipe.as_fd(), PollFlags::POLLIN),
                PollFd::new(self.exit.as_fd(), PollFlags::POLLIN),
            ];
            let fds = &mut all[..2 + usize::from(watch_exit)];
            match poll(fds, timeout_until(self.deadline)) {
                Ok(_) if fired(&fds[0]) => return Wake::Stop,
                // The exit before the pipe: a pipe that always has data must not hide it, or the linger would
                // never start.
                Ok(_) if watch_exit && fired(&fds[2]) => return Wake::Exited,
                Ok(_) if fired(&fds[1]) => return Wake::Readable,
                Ok(_) | Err(Errno::EINTR) => {}
                Err(errno) => return Wake::Failed(errno),
            }
        }
    }

    /// Writes a chunk to the file (unless writing already failed), then counts it: `counted` bytes of output
    /// (the chunk's length, or none for output counted before an upgrade) and the newlines that reached the file.
    ///
    /// A file that cannot take more (a full FIFO) is waited for, but once the child has exited only until the
    /// linger runs out; then writing stops for good with [`stalled_output_error`]. A stop while it waits ends
    /// the delivery: a captured process counts the chunk and hands over what the file had not taken.
    fn deliver(&mut self, chunk: &[u8], counted: usize) -> Delivered {
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
                        newlines += count_newlines(&chunk[written..written + n]);
                        written += n;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        if self.deadline.is_some_and(|d| Instant::now() >= d) {
                            error = Some(stalled_output_error());
                            break;
                        }
                        // Full: wait for room, for terminate, and for the exit (which starts the linger), or
                        // after the exit until the linger runs out.
                        let watch_exit = self.deadline.is_none();
                        let mut all = [
                            PollFd::new(self.stop.as_fd(), PollFlags::POLLIN),
                            PollFd::new(file.as_fd(), PollFlags::POLLOUT),
                            PollFd::new(self.exit.as_fd(), PollFlags::POLLIN),
                        ];
                        let fds = &mut all[..2 + usize::from(watch_exit)];
                        match poll(fds, timeout_until(self.deadline)) {
                            Ok(_) if fired(&fds[0]) => {
                                if !self.handback.capturing() {
                                    return Delivered::Stopped(Vec::new());
                                }
                                self.state.output(counted, newlines, None);
                                return Delivered::Stopped(chunk[written..].to_vec());
                            }
                            Ok(_) if watch_exit && fired(&fds[2]) => {
                                self.deadline = Some(Instant::now() + LINGER);
                            }
                            Ok(_) | Err(Errno::EINTR) => {}
                            Err(errno) => {
                                error = Some(format!("waiting for the output file failed: {errno}"));
                                break;
                            }
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
        self.state.output(counted, newlines, error);
        Delivered::Done
    }

    /// The reader stops: a captured process's reader leaves its pipe, its file and what the file had not taken
    /// for the successor; otherwise they close.
    fn stopped(self, unwritten: Vec<u8>) {
        if self.handback.capturing() {
            let linger_left = self.deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
            let left = ReaderLeft { pipe: self.pipe, file: self.file, linger_left, unwritten };
            *self.handback.left.lock().unwrap_or_else(|e| e.into_inner()) = Some(left);
        }
    }
}

/// The newlines in `bytes`, counted in blocks of 255 into byte-wide counters, which the compiler turns into
/// vector compares (a plain filter-and-count cost more than copying the bytes through the pipe and the file).
fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.chunks(255).map(|block| u64::from(block.iter().fold(0u8, |count, &b| count + u8::from(b == b'\n')))).sum()
}

/// The reader thread. Reports the end of the output only after the file and the pipe are closed; returns
/// without reporting anything when stopped.
pub(crate) fn reader(mut reader: Reader) {
    let unwritten = std::mem::take(&mut reader.unwritten);
    if !unwritten.is_empty()
        && let Delivered::Stopped(rest) = reader.deliver(&unwritten, 0)
    {
        return reader.stopped(rest);
    }
    let mut buffer = vec![0u8; PIPE_READ_CHUNK_BYTES];
    let mut failure = None;
    // Full reads since the last poll: after a full read the pipe likely has more, so it is read again at once.
    let mut unpolled = MAX_READS_WITHOUT_POLL;
    loop {
        let wake = if unpolled < MAX_READS_WITHOUT_POLL {
            Wake::Readable
        } else {
            unpolled = 0;
            reader.wait()
        };
        match wake {
            Wake::Stop => return reader.stopped(Vec::new()),
            Wake::Deadline => break,
            Wake::Exited => {
                reader.start_linger();
                continue;
            }
            Wake::Failed(errno) => {
                failure = Some(format!("polling the output pipe failed: {errno}"));
                break;
            }
            Wake::Readable => {}
        }
        match reader.pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                unpolled = if n == buffer.len() { unpolled + 1 } else { MAX_READS_WITHOUT_POLL };
                if let Delivered::Stopped(rest) = reader.deliver(&buffer[..n], n) {
                    return reader.stopped(rest);
                }
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted) => {
                unpolled = MAX_READS_WITHOUT_POLL;
            }
            Err(e) => {
                failure = Some(format!("reading the output pipe failed: {e}"));
                break;
            }
        }
    }
    let Reader { pipe, file, state, .. } = reader;
    drop(file);
    drop(pipe);
    state.output_ended(failure);
}

/// The wait thread's report: records the child's exit (or that waiting for it failed: it was reaped by someone
/// else, and its pid is never touched again), then tells the reader by closing `exit`.
pub(crate) fn child_ended(end: Result<ExitStatus, Errno>, exit: OwnedFd, state: &PipeState) {
    match end {
        Ok(status) => state.child_exited(status),
        Err(error) => state.wait_failed(error.to_string()),
    }
    drop(exit);
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::Map;

    use super::*;

    /// A reader of a fresh pipe holding `data`, whose exit pipe has already hung up (the child exited), and the
    /// write ends it must not see closed.
    fn reader_after_exit(data: &[u8]) -> (Reader, OwnedFd, File) {
        let (pipe, mut writer) = nix::unistd::pipe().map(|(r, w)| (File::from(r), File::from(w))).unwrap();
        writer.write_all(data).unwrap();
        let (stop, stop_write) = nix::unistd::pipe().unwrap();
        let (exit, exit_write) = nix::unistd::pipe().unwrap();
        drop(exit_write);
        let state = Arc::new(PipeState::new(0, Map::new(), 0));
        let handback = Arc::default();
        (
            Reader { pipe, file: None, stop, exit, state, deadline: None, unwritten: Vec::new(), handback },
            stop_write,
            writer,
        )
    }

    #[test]
    fn newlines_are_counted_across_blocks() {
        assert_eq!(count_newlines(b""), 0);
        assert_eq!(count_newlines(b"a\nb\n\n"), 3);
        // Blocks of 255: all newlines (a counter at its maximum), and a run crossing block edges.
        assert_eq!(count_newlines(&[b'\n'; 255 * 4 + 7]), 255 * 4 + 7);
        let mixed: Vec<u8> = (0..100_000u32).map(|i| if i % 7 == 0 { b'\n' } else { b'x' }).collect();
        assert_eq!(count_newlines(&mixed), mixed.iter().filter(|&&b| b == b'\n').count() as u64);
    }

    #[test]
    fn the_exit_is_seen_while_the_pipe_has_data() {
        let (reader, _stop, _writer) = reader_after_exit(b"busy");
        assert_eq!(reader.wait(), Wake::Exited, "a busy pipe must not hide the exit");
    }

    #[test]
    fn a_pipe_kept_full_after_the_exit_still_ends_with_the_linger() {
        // The child exited; a descendant keeps the pipe full for ever, so reads never come up short.
        let (pipe_reader, _stop, mut writer) = reader_after_exit(b"");
        let flood = std::thread::spawn(move || {
            let block = vec![b'y'; PIPE_READ_CHUNK_BYTES];
            // Ends with EPIPE once the reader closes the pipe (the test harness ignores SIGPIPE).
            while writer.write_all(&block).is_ok() {}
        });
        let (done, ended) = crossbeam_channel::bounded(1);
        let reading = std::thread::spawn(move || {
            super::reader(pipe_reader);
            let _ = done.send(());
        });
        ended.recv_timeout(LINGER + Duration::from_secs(30)).expect("the reader ended after the linger");
        reading.join().unwrap();
        flood.join().unwrap();
    }

    #[test]
    fn after_the_exit_the_pipe_is_drained_until_the_linger_ends() {
        let (mut reader, _stop, _writer) = reader_after_exit(b"busy");
        reader.start_linger();
        assert_eq!(reader.wait(), Wake::Readable);
        reader.deadline = Some(Instant::now());
        assert_eq!(reader.wait(), Wake::Deadline);
    }
}

//! The blocking threads around a PTY: the one reader of its output and the one writer of its input (the wait
//! thread is `process::Child`'s), and the master as the actor writes to it itself ([`PtyMaster`], the sink of
//! the input's delivery). Neither thread touches terminal state; they only talk to the actor, the reader
//! through its own channel of [`ReaderOutput`], the writer as the connection side of the input's delivery.
//!
//! The master descriptor is non-blocking, and the reader and the writer wait in `poll` on it together with
//! a stop pipe: dropping the pipe's write end wakes both, so a full PTY or a silent child never keeps a
//! thread from stopping.

use std::io::{IoSlice, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, select};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::command::Command;
use crate::process::delivery::{Recipient, Sink, write_while_taken};

/// Bytes read from the PTY at a time: one live output event carries at most this much.
pub(crate) const READ_CHUNK_BYTES: usize = 8 * 1024;

/// What the reader hands the actor, in order: output chunks, then how the output ended (once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReaderOutput {
    /// A chunk of output, at most [`READ_CHUNK_BYTES`], and when it was read.
    Chunk(Vec<u8>, Instant),
    /// The end of the output (EOF, or EIO once the child's side is closed).
    End,
    /// Reading the PTY failed: the output has ended all the same.
    Failed(String),
}

/// The PTY master (non-blocking), as the actor holds it: for resizes, `tcgetpgrp`, and the input it writes
/// itself while the writer holds nothing.
#[derive(Debug)]
pub(crate) struct PtyMaster(OwnedFd);

impl PtyMaster {
    pub(crate) fn new(fd: OwnedFd) -> PtyMaster {
        PtyMaster(fd)
    }

    /// The descriptor.
    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.0
    }

    /// Whether output the child wrote is waiting in the PTY to be read. (`poll` first moves what the kernel
    /// still holds in the PTY's flip buffer to where a read finds it, which `FIONREAD` would not.)
    pub(crate) fn has_output(&self) -> bool {
        let mut fds = [PollFd::new(self.0.as_fd(), PollFlags::POLLIN)];
        poll(&mut fds, PollTimeout::ZERO).is_ok_and(|_| fds[0].revents().is_some_and(|r| r.contains(PollFlags::POLLIN)))
    }
}

/// Whether the reader holds output it has read from the PTY and not yet handed to the actor: set before each
/// read, cleared once the chunk is queued. With the PTY and the reader's queue it tells the actor whether it has
/// seen all the output the child wrote before some moment (`Actor::caught_up_with_child`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ReaderHolds(Arc<AtomicBool>);

impl ReaderHolds {
    fn set(&self, holds: bool) {
        self.0.store(holds, Ordering::SeqCst);
    }

    /// Whether the reader holds a chunk now.
    pub(crate) fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

impl Sink for PtyMaster {
    fn write_now(&self, slices: &mut [IoSlice<'_>]) -> usize {
        write_while_taken(slices, |rest| nix::sys::uio::writev(&self.0, rest))
    }
}

/// What `poll` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ready {
    /// The descriptor is ready for the requested events.
    Yes,
    /// The other side hung up (or the descriptor failed): reads report the end, writes cannot succeed.
    HungUp,
    /// The stop pipe was closed: the terminal is stopping.
    Stop,
    /// `poll` itself failed.
    Failed(Errno),
}

/// Waits until `fd` is ready for `events`, hangs up, or the stop pipe is closed.
fn wait_ready(fd: &OwnedFd, stop: &OwnedFd, events: PollFlags) -> Ready {
    loop {
        let mut fds = [PollFd::new(fd.as_fd(), events), PollFd::new(stop.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {
                if fds[1].revents().is_some_and(|r| !r.is_empty()) {
                    return Ready::Stop;
                }
                let revents = fds[0].revents().unwrap_or(PollFlags::empty());
                if revents.intersects(events) {
                    return Ready::Yes;
                }
                if revents.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL) {
                    return Ready::HungUp;
                }
            }
            Err(Errno::EINTR) => continue,
            Err(errno) => return Ready::Failed(errno),
        }
    }
}

/// Sends a message to the actor unless the terminal is stopping. False means stop.
pub(crate) fn send<T>(actor: &Sender<T>, stop: &Receiver<()>, message: T) -> bool {
    select! {
        send(actor, message) -> sent => sent.is_ok(),
        recv(stop) -> _ => false,
    }
}

/// The reader thread: the only reader of the PTY's output. Every chunk goes to the actor in order, then the end
/// of the output or the failure that ended it.
pub(crate) fn reader(
    master: OwnedFd,
    stop_pipe: OwnedFd,
    output: Sender<ReaderOutput>,
    stop: Receiver<()>,
    holds: ReaderHolds,
) {
    let poll_fd = match master.try_clone() {
        Ok(fd) => fd,
        Err(error) => {
            send(&output, &stop, ReaderOutput::Failed(format!("cannot poll the PTY: {error}")));
            return;
        }
    };
    let mut file = std::fs::File::from(master);
    let mut buffer = vec![0u8; READ_CHUNK_BYTES];
    loop {
        // A hang-up still lets the read report the end of the output (EOF or EIO).
        match wait_ready(&poll_fd, &stop_pipe, PollFlags::POLLIN) {
            Ready::Stop => return,
            Ready::Failed(errno) => {
                send(&output, &stop, ReaderOutput::Failed(format!("polling the PTY failed: {errno}")));
                return;
            }
            Ready::Yes | Ready::HungUp => {}
        }
        holds.set(true);
        match file.read(&mut buffer) {
            Ok(0) => {
                send(&output, &stop, ReaderOutput::End);
                return;
            }
            Ok(n) => {
                let sent = send(&output, &stop, ReaderOutput::Chunk(buffer[..n].to_vec(), Instant::now()));
                holds.set(false);
                if !sent {
                    return;
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => holds.set(false),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => holds.set(false),
            // Linux reports the closed slave side of a PTY as EIO: that is the end of the output.
            Err(error) if error.raw_os_error() == Some(Errno::EIO as i32) => {
                send(&output, &stop, ReaderOutput::End);
                return;
            }
            Err(error) => {
                send(&output, &stop, ReaderOutput::Failed(format!("reading the PTY failed: {error}")));
                return;
            }
        }
    }
}

/// The writer thread: the writer to the PTY whenever input would block. Input and the emulator's replies
/// arrive through one delivery, so they reach the child in the order the actor queued them. It says when it has
/// written (or dropped) each chunk it took; only while it holds none may the actor write to the PTY itself (see
/// `Actor::enqueue`), so the two never reorder input.
pub(crate) fn writer(
    master: OwnedFd,
    stop_pipe: OwnedFd,
    input: Recipient<Vec<u8>>,
    commands: Sender<Command>,
    stop: Receiver<()>,
) {
    let poll_fd = match master.try_clone() {
        Ok(fd) => fd,
        Err(error) => {
            send(&commands, &stop, Command::WriterFailed(format!("cannot poll the PTY: {error}")));
            return;
        }
    };
    let mut file = std::fs::File::from(master);
    loop {
        let bytes = select! {
            recv(input.receiver()) -> bytes => match bytes { Ok(bytes) => bytes, Err(_) => return },
            recv(stop) -> _ => return,
        };
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            match file.write(rest) {
                Ok(n) => rest = &rest[n..],
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    match wait_ready(&poll_fd, &stop_pipe, PollFlags::POLLOUT) {
                        Ready::Yes => {}
                        // The child's side is gone: this input can never be written; drop it.
                        Ready::HungUp => rest = &[],
                        Ready::Stop => return,
                        Ready::Failed(errno) => {
                            let failure = format!("polling the PTY failed: {errno}");
                            send(&commands, &stop, Command::WriterFailed(failure));
                            return;
                        }
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    send(&commands, &stop, Command::WriterFailed(format!("writing to the PTY failed: {error}")));
                    return;
                }
            }
        }
        input.written(1);
    }
}

//! The blocking threads around a PTY: the one reader of its output (here) and the one writer of its input
//! (`writer.rs`, started only once input must wait; the wait thread is `process::Child`'s), and the master as the
//! actor writes to it itself ([`PtyMaster`], the sink of the input's delivery). Neither thread touches terminal
//! state; they only talk to the actor, the reader through its own channel of [`ReaderOutput`], the writer as
//! the connection side of the input's delivery.
//!
//! The master descriptor is non-blocking, and the reader and the writer wait in `poll` on it together with
//! a stop pipe: dropping the pipe's write end wakes both, so a full PTY or a silent child never keeps a
//! thread from stopping.

use std::io::{IoSlice, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, select};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::process::delivery::{Sink, write_while_taken};

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

/// What the writer hands back when the terminal is captured for an upgrade (`PtyHandle::finish_capture`): once
/// [`Self::capture`] was called and the stop pipe closed, the writer writes only what the PTY takes at once and
/// keeps everything from the first byte it did not take, in order, without saying it wrote it (so the actor
/// never writes around it), until the input's delivery ends; the capture then takes it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Handback(Arc<HandbackShared>);

#[derive(Debug, Default)]
struct HandbackShared {
    capturing: AtomicBool,
    kept: std::sync::Mutex<Vec<u8>>,
}

impl Handback {
    /// The terminal is being captured: from now on a stop keeps what is not written.
    pub(crate) fn capture(&self) {
        self.0.capturing.store(true, Ordering::SeqCst);
    }

    pub(super) fn capturing(&self) -> bool {
        self.0.capturing.load(Ordering::SeqCst)
    }

    pub(super) fn kept(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        self.0.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the writer kept, once it has ended.
    pub(crate) fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.kept())
    }
}

impl Sink for PtyMaster {
    fn write_now(&self, slices: &mut [IoSlice<'_>]) -> usize {
        write_while_taken(slices, |rest| nix::sys::uio::writev(&self.0, rest))
    }
}

/// What `poll` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ready {
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
pub(super) fn wait_ready(fd: &OwnedFd, stop: &OwnedFd, events: PollFlags) -> Ready {
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

/// Reads what the PTY has, waiting for it until `deadline`: the number of bytes read, or `None` when nothing
/// came by then or the output has ended (the reader's job, once it has stopped: a capture reading a control
/// sequence to its end).
pub(crate) fn read_within(master: &OwnedFd, buffer: &mut [u8], deadline: Instant) -> Option<usize> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let millis = u16::try_from(left.as_micros().div_ceil(1000)).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(master.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(0) => return None,
            Ok(_) => match nix::unistd::read(master, buffer) {
                Ok(0) => return None,
                Ok(n) => return Some(n),
                Err(Errno::EAGAIN | Errno::EINTR) if Instant::now() < deadline => {}
                Err(_) => return None,
            },
            Err(Errno::EINTR) if Instant::now() < deadline => {}
            Err(_) => return None,
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
    // Held only while output keeps coming: a read that leaves the PTY drained gives it back, so an idle
    // terminal's reader holds no buffer (8 KiB of its memory, issue 31), and the next read takes a new one.
    let mut kept: Option<Vec<u8>> = None;
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
        let buffer = kept.get_or_insert_with(|| vec![0u8; READ_CHUNK_BYTES]);
        match file.read(buffer) {
            Ok(0) => {
                send(&output, &stop, ReaderOutput::End);
                return;
            }
            Ok(n) => {
                let chunk = buffer[..n].to_vec();
                if n < READ_CHUNK_BYTES {
                    kept = None;
                }
                let sent = send(&output, &stop, ReaderOutput::Chunk(chunk, Instant::now()));
                holds.set(false);
                if !sent {
                    return;
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                kept = None;
                holds.set(false);
            }
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

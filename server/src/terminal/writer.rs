//! The writer thread of a PTY, started only once input must wait. While the PTY takes each chunk at once the
//! actor writes it itself (the input's delivery, `process/delivery.rs`) and no writer runs, so an idle terminal
//! has two threads (actor and reader), not three: a thread costs a resident stack and a kernel stack (issue
//! 31). The first chunk the PTY does not take at once goes into the delivery's channel; the actor then starts
//! the writer ([`WriterStart::start`]), which takes it and writes on, waiting for room, in order. Once started
//! it runs until the terminal stops, and is joined with the terminal's other threads.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, select};
use nix::poll::PollFlags;

use super::command::Command;
use super::io::{Handback, Ready, send, wait_ready};
use crate::error::ServiceError;
use crate::process::delivery::Recipient;
use crate::process::threads::Threads;

/// Everything the writer thread needs, kept by the actor until input first has to wait for the PTY.
pub(crate) struct WriterStart {
    /// The terminal's threads, which the writer joins (they are joined until none is left, so one started
    /// while they stop is joined too).
    pub(crate) threads: Arc<Threads>,
    pub(crate) id: u64,
    /// The writer's duplicate of the PTY master.
    pub(crate) master: OwnedFd,
    /// The read end of the terminal's stop pipe.
    pub(crate) stop_pipe: OwnedFd,
    /// The connection side of the input's delivery.
    pub(crate) input: Recipient<Vec<u8>>,
    /// To tell the actor that writing failed.
    pub(crate) commands: Sender<Command>,
    pub(crate) stop: Receiver<()>,
    pub(crate) handback: Handback,
}

impl WriterStart {
    /// Starts the writer thread among the terminal's threads. On failure (the system has no thread to give)
    /// everything it would have used is dropped, so the delivery sees its connection gone: input that reaches
    /// the writer no more is dropped, as after a writer that failed.
    pub(crate) fn start(self) -> Result<(), ServiceError> {
        let WriterStart { threads, id, master, stop_pipe, input, commands, stop, handback } = self;
        threads.start("", "writer", id, move || writer(master, stop_pipe, input, commands, stop, handback))
    }
}

/// The writer thread: the writer to the PTY whenever input would block. Input and the emulator's replies
/// arrive through one delivery, so they reach the child in the order the actor queued them. It says when it has
/// written (or dropped) each chunk it took; only while it holds none may the actor write to the PTY itself (see
/// `Actor::enqueue`), so the two never reorder input.
fn writer(
    master: OwnedFd,
    stop_pipe: OwnedFd,
    input: Recipient<Vec<u8>>,
    commands: Sender<Command>,
    stop: Receiver<()>,
    handback: Handback,
) {
    let poll_fd = match master.try_clone() {
        Ok(fd) => fd,
        Err(error) => {
            send(&commands, &stop, Command::WriterFailed(format!("cannot poll the PTY: {error}")));
            return;
        }
    };
    let mut file = std::fs::File::from(master);
    // Captured: everything from the first byte the PTY did not take at once is kept, in order.
    let mut keeping = false;
    loop {
        let bytes = select! {
            recv(input.receiver()) -> bytes => match bytes { Ok(bytes) => bytes, Err(_) => return },
            recv(stop) -> _ => {
                if handback.capturing() {
                    handback.kept().extend(input.receiver().try_iter().flatten());
                }
                return;
            }
        };
        if keeping {
            handback.kept().extend_from_slice(&bytes);
            continue;
        }
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            match file.write(rest) {
                Ok(n) => rest = &rest[n..],
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    match wait_ready(&poll_fd, &stop_pipe, PollFlags::POLLOUT) {
                        Ready::Yes => {}
                        // The child's side is gone: this input can never be written; drop it.
                        Ready::HungUp => rest = &[],
                        Ready::Stop if handback.capturing() => {
                            handback.kept().extend_from_slice(rest);
                            keeping = true;
                            break;
                        }
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
        if !keeping {
            input.written(1);
        }
    }
}

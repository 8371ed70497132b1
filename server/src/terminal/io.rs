//! The blocking threads around a PTY: the one reader of its output, the one writer of its input, and the
//! thread that waits for the child. None of them touches terminal state; they only talk to the actor.
//!
//! The master descriptor is non-blocking, and the reader and the writer wait in `poll` on it together with
//! a stop pipe: dropping the pipe's write end wakes both, so a full PTY or a silent child never keeps a
//! thread from stopping.

use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};

use crossbeam_channel::{Receiver, Sender, select};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use super::command::{Command, ExitInfo};

/// Bytes read from the PTY at a time: one live output event carries at most this much.
pub(crate) const READ_CHUNK_BYTES: usize = 8 * 1024;

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

/// Sends a command to the actor unless the terminal is stopping. False means stop.
fn send(commands: &Sender<Command>, stop: &Receiver<()>, command: Command) -> bool {
    select! {
        send(commands, command) -> sent => sent.is_ok(),
        recv(stop) -> _ => false,
    }
}

/// The reader thread: the only reader of the PTY's output. Every chunk goes to the actor in order; the end of
/// the output (EOF, or EIO once the child's side is closed) and read failures are separate commands.
pub(crate) fn reader(master: OwnedFd, stop_pipe: OwnedFd, commands: Sender<Command>, stop: Receiver<()>) {
    let poll_fd = match master.try_clone() {
        Ok(fd) => fd,
        Err(error) => {
            send(&commands, &stop, Command::ReaderFailed(format!("cannot poll the PTY: {error}")));
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
                send(&commands, &stop, Command::ReaderFailed(format!("polling the PTY failed: {errno}")));
                return;
            }
            Ready::Yes | Ready::HungUp => {}
        }
        match file.read(&mut buffer) {
            Ok(0) => {
                send(&commands, &stop, Command::ReaderEof);
                return;
            }
            Ok(n) => {
                if !send(&commands, &stop, Command::Output(buffer[..n].to_vec())) {
                    return;
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            // Linux reports the closed slave side of a PTY as EIO: that is the end of the output.
            Err(error) if error.raw_os_error() == Some(Errno::EIO as i32) => {
                send(&commands, &stop, Command::ReaderEof);
                return;
            }
            Err(error) => {
                send(&commands, &stop, Command::ReaderFailed(format!("reading the PTY failed: {error}")));
                return;
            }
        }
    }
}

/// The writer thread: the only writer to the PTY. Input and the emulator's replies arrive through one queue,
/// so they reach the child in the order the actor queued them.
pub(crate) fn writer(
    master: OwnedFd,
    stop_pipe: OwnedFd,
    input: Receiver<Vec<u8>>,
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
            recv(input) -> bytes => match bytes { Ok(bytes) => bytes, Err(_) => return },
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
    }
}

/// The wait thread: reports the child's exit without reaping it, so its pid stays reserved (and safe to
/// signal) until the terminal is terminated.
pub(crate) fn waiter(pid: u32, commands: Sender<Command>, stop: Receiver<()>) {
    let pid = Pid::from_raw(pid as i32);
    let exit = loop {
        match waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
            Ok(WaitStatus::Exited(_, code)) => break ExitInfo { exit_code: Some(code as u32), signal: None },
            Ok(WaitStatus::Signaled(_, signal, _)) => {
                break ExitInfo { exit_code: None, signal: Some(signal.as_str().to_owned()) };
            }
            Ok(_) | Err(Errno::EINTR) => continue,
            Err(error) => {
                send(&commands, &stop, Command::WaitFailed(format!("waiting for the child failed: {error}")));
                return;
            }
        }
    };
    send(&commands, &stop, Command::ChildExited(exit));
}

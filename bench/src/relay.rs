//! The echo case's second floor: the least a daemon with the spec's 1 ms output window does. One thread takes
//! each input on a connection of its own (connect, one byte, close) and writes it to the PTY; another reads
//! the PTY and writes what it read to the subscriber's socket when 1 ms has passed since the read. No
//! emulator, no replay, no JSON, no hand-off between threads: what is left of our daemon's echo once the
//! window is paid is the socket, the PTY and the wake-ups this floor pays as well.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::pty::EchoPty;

/// The output window, as SPEC's coalescing window.
pub(crate) const WINDOW: Duration = Duration::from_millis(1);

/// How long before the window ends the output thread stops sleeping and watches the clock instead, so the
/// floor does not carry the timer's lateness (the default timer slack alone is 50 µs).
const SPIN: Duration = Duration::from_micros(150);

/// The relay's two threads around an echo PTY. Dropping it stops them and kills the PTY's child.
pub(crate) struct Relay {
    /// Where inputs connect.
    pub path: PathBuf,
    /// The subscriber's end of the output socket.
    pub output: Option<UnixStream>,
    /// Closed to stop both threads.
    stop: Option<OwnedFd>,
    threads: Vec<JoinHandle<Result<()>>>,
    /// Kept for its child, which the relay's threads talk to.
    _pty: EchoPty,
}

impl Relay {
    /// Starts an echo PTY (`stty raw -echo; cat`, ready once it printed `ready`) and the relay's threads, with
    /// its input socket at `path`.
    pub(crate) fn start(path: &Path, ready: &[u8]) -> Result<Relay> {
        let pty = EchoPty::start(ready)?;
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).with_context(|| format!("binding {}", path.display()))?;
        let (stop_read, stop_write) = nix::unistd::pipe()?;
        let (subscriber, publisher) = UnixStream::pair()?;
        let input_master = pty.master().try_clone_to_owned()?;
        let output_master = pty.master().try_clone_to_owned()?;
        let input_stop = stop_read.try_clone()?;
        let threads = vec![
            std::thread::spawn(move || inputs(&listener, input_master, &input_stop)),
            std::thread::spawn(move || outputs(output_master, publisher, &stop_read)),
        ];
        Ok(Relay { path: path.to_owned(), output: Some(subscriber), stop: Some(stop_write), threads, _pty: pty })
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        drop(self.stop.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Waits until `fd` is readable or `stop` closes; false on the stop.
fn ready(fd: &impl AsFd, stop: &OwnedFd) -> Result<bool> {
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN), PollFd::new(stop.as_fd(), PollFlags::POLLIN)];
    loop {
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => return Ok(fds[1].revents().is_none_or(|events| events.is_empty())),
            Err(nix::errno::Errno::EINTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
}

/// The input thread: each connection's one byte, written to the PTY.
fn inputs(listener: &UnixListener, master: OwnedFd, stop: &OwnedFd) -> Result<()> {
    let mut master = std::fs::File::from(master);
    while ready(listener, stop)? {
        let (mut connection, _) = listener.accept()?;
        let mut byte = [0u8];
        connection.read_exact(&mut byte)?;
        master.write_all(&byte)?;
    }
    Ok(())
}

/// The output thread: each read of the PTY, written to the subscriber when the window since the read ends.
fn outputs(master: OwnedFd, mut subscriber: UnixStream, stop: &OwnedFd) -> Result<()> {
    let mut master = std::fs::File::from(master);
    let mut buffer = [0u8; 4096];
    while ready(&master, stop)? {
        let n = match master.read(&mut buffer) {
            Ok(n) => n,
            Err(error) if matches!(error.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => continue,
            Err(error) => return Err(error.into()),
        };
        let due = Instant::now() + WINDOW;
        if let Some(rest) = due.checked_duration_since(Instant::now()).and_then(|left| left.checked_sub(SPIN)) {
            std::thread::sleep(rest);
        }
        while Instant::now() < due {
            std::hint::spin_loop();
        }
        subscriber.write_all(&buffer[..n])?;
    }
    Ok(())
}

//! The connection threads, which take turns at accepting (leader and followers). One of them, the leader,
//! waits on the listening socket; when a connection arrives it accepts it, hands the listener on (to a waiting
//! follower, or to a thread started for it) and serves that connection itself, so a request is read by the
//! thread that accepted it, with no hand-off and no wake-up of another thread in between (the accept thread
//! used to pass every connection to a waiting thread; see ARCHITECTURE.md for what that cost).
//! A thread whose connection is done waits to lead again (at most [`MAX_IDLE_WORKERS`] wait, each for at most
//! the linger); a connection that lasts (subscriptions, waits, the owner channel) keeps its thread. The
//! accept thread itself only waits for the stop, then takes the listener back (from the slot, or from the
//! leader that sees the stop too) and returns it: the daemon closes it, or an in-place upgrade passes it on
//! with the connections waiting in its backlog. It returns only once every connection accepted before has
//! been admitted ([`Admission`]: the daemon registers it), so that whoever stops accepting knows of every
//! connection that was taken from the backlog: none is left half-accepted, to be closed unanswered.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::daemon::log_limit::{ACCEPT_FAILURES, CONNECTION_THREADS};

/// Finished connection threads kept waiting to lead again; the others exit.
pub const MAX_IDLE_WORKERS: usize = 4;

/// How long a waiting connection thread stays without work before it exits, so an idle daemon goes back to
/// its own threads and one leader. Only threads with nothing to do end; a connection is never cut by it.
pub const IDLE_WORKER_LINGER: Duration = Duration::from_secs(10);

/// How long the leader pauses after a failed `accept` (out of descriptors, say), so a pending connection it
/// cannot take does not make it spin.
pub(crate) const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// What a connection thread does with each connection it accepted: it drops the [`Admission`] once the
/// connection is known to whoever stops accepting (registered, or refused).
pub(crate) type Serve = Arc<dyn Fn(UnixStream, Admission) + Send + Sync>;

/// A connection accepted and not yet admitted; the pool's stop waits until it is dropped.
pub(crate) struct Admission {
    pool: Arc<Pool>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut slot = self.pool.lock();
        slot.admitting -= 1;
        drop(slot);
        self.pool.changed.notify_all();
    }
}

impl std::fmt::Debug for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Admission")
    }
}

/// The listener and the threads that take turns at it.
pub(crate) struct Pool {
    slot: Mutex<Slot>,
    /// Signalled when the listener is put back for a follower, and when it is closed.
    changed: Condvar,
    /// Readable (closed) once the daemon stops accepting.
    stop: OwnedFd,
    serve: Serve,
    name: &'static str,
    /// How long a finished thread waits to lead again ([`IDLE_WORKER_LINGER`] outside tests).
    linger: Duration,
}

/// Who holds the listener.
struct Slot {
    /// Here while no thread leads; taken by the leader while it waits for a connection.
    listener: Option<UnixListener>,
    /// A thread leads: it holds the listener.
    held: bool,
    /// The daemon stops accepting: the listener is (or is being) given back and every waiting thread exits.
    closed: bool,
    /// Threads waiting to lead.
    idle: usize,
    /// Connections accepted whose [`Admission`] is not dropped yet.
    admitting: usize,
}

impl Pool {
    /// Accepts on `listener` with connection threads named `name` until `stop` becomes readable (its other
    /// end closed), handing each connection to `serve` on the thread that accepted it. Returns the listener
    /// once no thread accepts on it any more (`None` if polling it failed, which closed it) and every
    /// connection accepted was admitted; threads still serving connections go on until those end.
    pub(crate) fn accept_until_stopped(
        listener: UnixListener,
        stop: OwnedFd,
        name: &'static str,
        linger: Duration,
        serve: Serve,
    ) -> Option<UnixListener> {
        let _ = listener.set_nonblocking(true);
        let slot = Slot { listener: Some(listener), held: false, closed: false, idle: 0, admitting: 0 };
        let pool = Arc::new(Pool { slot: Mutex::new(slot), changed: Condvar::new(), stop, serve, name, linger });
        pool.start_leader();
        // This thread leads nobody: it waits for the stop, then takes the listener back.
        while !matches!(wait_readable(&pool.stop, None), Ok(true) | Err(_)) {}
        let mut slot = pool.lock();
        slot.closed = true;
        pool.changed.notify_all();
        // A leader holding the listener sees the stop as well, puts it back and says so; a connection accepted
        // just before is admitted first.
        while slot.held || slot.admitting > 0 {
            slot = pool.changed.wait(slot).unwrap_or_else(|e| e.into_inner());
        }
        slot.listener.take()
    }

    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a thread that takes the listener from the slot and leads. If none can start, the listener waits in
    /// the slot for the next thread that finishes a connection (connections wait in the socket's backlog).
    fn start_leader(self: &Arc<Self>) {
        let pool = self.clone();
        let started = std::thread::Builder::new().name(self.name.to_owned()).spawn(move || pool.work());
        if let Err(error) = started {
            crate::daemon::log_limit::limited_warn!(CONNECTION_THREADS, %error, "cannot start a connection thread");
        }
    }

    /// A connection thread: lead, serve what was accepted, then wait to lead again, until told to exit.
    fn work(self: Arc<Self>) {
        while let Some(listener) = self.take_listener() {
            let stream = match self.accept(&listener) {
                Accepted::Connection(stream) => stream,
                Accepted::Stopped => return self.give_back(Some(listener)),
                Accepted::Failed => {
                    drop(listener);
                    return self.give_back(None);
                }
            };
            let admission = self.hand_on(listener);
            (self.serve)(stream, admission);
        }
    }

    /// Waits (at most the linger, and only while fewer than [`MAX_IDLE_WORKERS`] wait) until the listener is
    /// free to lead with; `None` when this thread should exit instead.
    fn take_listener(&self) -> Option<UnixListener> {
        let mut slot = self.lock();
        loop {
            if slot.closed {
                return None;
            }
            if let Some(listener) = slot.listener.take() {
                slot.held = true;
                return Some(listener);
            }
            if slot.idle >= MAX_IDLE_WORKERS {
                return None;
            }
            slot.idle += 1;
            let (next, waited) = self.changed.wait_timeout(slot, self.linger).unwrap_or_else(|e| e.into_inner());
            slot = next;
            slot.idle -= 1;
            if waited.timed_out() && slot.listener.is_none() {
                return None;
            }
        }
    }

    /// Puts the listener back for a waiting follower, or starts a thread to lead when none waits; gives it
    /// back when the daemon stopped accepting meanwhile. The connection just accepted is counted before the
    /// listener is let go: the stop waits for its admission.
    fn hand_on(self: &Arc<Self>, listener: UnixListener) -> Admission {
        let mut slot = self.lock();
        slot.admitting += 1;
        let admission = Admission { pool: self.clone() };
        if slot.closed {
            drop(slot);
            self.give_back(Some(listener));
            return admission;
        }
        slot.held = false;
        slot.listener = Some(listener);
        let waiting = slot.idle > 0;
        drop(slot);
        if waiting {
            self.changed.notify_one();
        } else {
            self.start_leader();
        }
        admission
    }

    /// Stops accepting with the listener this thread held: puts it back for the accept thread to return (none
    /// when it failed, and was closed), and tells the accept thread and every waiting thread.
    fn give_back(&self, listener: Option<UnixListener>) {
        let mut slot = self.lock();
        slot.listener = listener;
        slot.held = false;
        slot.closed = true;
        drop(slot);
        self.changed.notify_all();
    }

    /// Waits for and accepts one connection, unless the daemon stops accepting or polling fails first.
    fn accept(&self, listener: &UnixListener) -> Accepted {
        loop {
            match wait_readable(&self.stop, Some(listener)) {
                Ok(false) => {}
                Ok(true) => return Accepted::Stopped,
                Err(error) => {
                    tracing::error!(%error, "polling the socket failed; no more connections are accepted");
                    return Accepted::Failed;
                }
            }
            match listener.accept() {
                Ok((stream, _)) => {
                    let _ = stream.set_nonblocking(false);
                    return Accepted::Connection(stream);
                }
                Err(error)
                    if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted) => {}
                Err(error) => {
                    // Keep serving what is open, and do not spin.
                    crate::daemon::log_limit::limited_warn!(ACCEPT_FAILURES, %error, "accepting a connection failed");
                    std::thread::sleep(ACCEPT_BACKOFF);
                }
            }
        }
    }
}

/// What a leader's wait at the listener ended with.
enum Accepted {
    /// A connection, to serve.
    Connection(UnixStream),
    /// The daemon stops accepting.
    Stopped,
    /// Polling the listener failed: it is closed, and nothing is accepted any more.
    Failed,
}

/// Waits until `stop` or `listener` is readable: true for the stop (it wins when both are).
fn wait_readable(stop: &OwnedFd, listener: Option<&UnixListener>) -> nix::Result<bool> {
    loop {
        let mut fds = vec![PollFd::new(stop.as_fd(), PollFlags::POLLIN)];
        if let Some(listener) = listener {
            fds.push(PollFd::new(listener.as_fd(), PollFlags::POLLIN));
        }
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => return Ok(fds[0].revents().is_some_and(|r| !r.is_empty())),
            Err(Errno::EINTR) => {}
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests;

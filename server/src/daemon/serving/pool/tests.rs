//! The connection threads' turns at accepting, on a real listening socket: each connection is served by the
//! thread that accepted it, threads are reused and only a few wait, a busy one never holds up the next
//! connection, the stop closes the listener while connections being served go on, and it gives the listener
//! back only once every connection accepted was admitted.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};

use super::*;

const BOUND: Duration = Duration::from_secs(30);

/// A pool accepting on a socket in a temporary directory; its threads are named `name` (unique per test, so
/// they can be counted) and each connection reports the thread serving it, then echoes one byte, or first
/// waits for the release when `hold` is set.
struct Running {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    name: &'static str,
    stop: Option<OwnedFd>,
    coordinator: Option<JoinHandle<()>>,
    served_on: Receiver<ThreadId>,
    release: Option<Sender<()>>,
}

impl Running {
    fn start(name: &'static str, linger: Duration, hold: bool) -> Running {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("pool.sock");
        let listener = UnixListener::bind(&path).expect("a listener");
        let (stop_read, stop_write) = nix::unistd::pipe().expect("a pipe");
        let (report, served_on) = unbounded();
        let (release, released) = bounded::<()>(0);
        let serve: Serve = Arc::new(move |mut stream: UnixStream, admission: Admission| {
            drop(admission);
            let _ = report.send(std::thread::current().id());
            if hold {
                let _ = released.recv_timeout(BOUND);
            }
            let mut byte = [0u8];
            if stream.read_exact(&mut byte).is_ok() {
                let _ = stream.write_all(&byte);
            }
        });
        let coordinator = std::thread::spawn(move || {
            Pool::accept_until_stopped(listener, stop_read, name, linger, serve);
        });
        Running {
            _dir: dir,
            path,
            name,
            stop: Some(stop_write),
            coordinator: Some(coordinator),
            served_on,
            release: Some(release),
        }
    }

    /// Connects, and returns the connection and the thread serving it.
    fn connect(&self) -> (UnixStream, ThreadId) {
        let stream = UnixStream::connect(&self.path).expect("connect");
        stream.set_read_timeout(Some(BOUND)).expect("a timeout");
        (stream, self.served_on.recv_timeout(BOUND).expect("the connection is served"))
    }

    /// Threads of this process named like the pool's.
    fn threads(&self) -> usize {
        let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
        let names = tasks.filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok());
        names.filter(|name| name.trim_end() == self.name).count()
    }

    /// Whether every thread of the pool is blocked (state `S`: waiting to lead, or leading in `accept`), none
    /// runnable: what a thread that finished a connection does next has happened.
    fn settled(&self) -> bool {
        let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
        tasks.flatten().all(|task| {
            let named =
                std::fs::read_to_string(task.path().join("comm")).is_ok_and(|name| name.trim_end() == self.name);
            // The state is the first field after the name's closing parenthesis.
            let state = || {
                let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
                stat[stat.rfind(')')? + 1..].split_whitespace().next().map(str::to_owned)
            };
            !named || state().is_none_or(|state| state == "S")
        })
    }

    /// Stops accepting and waits until the listener is closed.
    fn stop(&mut self) {
        drop(self.stop.take());
        let coordinator = self.coordinator.take().expect("running");
        let deadline = Instant::now() + BOUND;
        while !coordinator.is_finished() {
            assert!(Instant::now() < deadline, "accepting did not stop");
            std::thread::sleep(Duration::from_millis(5));
        }
        coordinator.join().expect("the accept thread");
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        drop(self.release.take());
        if self.coordinator.is_some() {
            self.stop();
        }
    }
}

/// One byte there and back on a served connection.
fn echo(stream: &mut UnixStream) {
    stream.write_all(b"x").expect("write");
    let mut byte = [0u8];
    stream.read_exact(&mut byte).expect("the echo");
    assert_eq!(&byte, b"x");
}

/// Lets every held connection go on, then checks each one's echo.
fn release_all(running: &Running, held: Vec<(UnixStream, ThreadId)>) {
    let release = running.release.as_ref().expect("running");
    for _ in &held {
        release.send_timeout((), BOUND).expect("a held connection takes its release");
    }
    for (mut stream, _) in held {
        echo(&mut stream);
    }
}

fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + BOUND;
    while !condition() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn connections_one_after_another_are_served_by_the_same_few_threads() {
    let running = Running::start("pool-test-seq", IDLE_WORKER_LINGER, false);
    let mut threads = std::collections::HashSet::new();
    for _ in 0..12 {
        // One after another: the thread that served the last connection has gone back to wait (on a loaded
        // machine it may otherwise not have run since, and the next connection rightly gets a new leader).
        wait_until("the pool's threads to wait", || running.settled());
        let (mut stream, thread) = running.connect();
        assert_ne!(thread, std::thread::current().id());
        echo(&mut stream);
        threads.insert(thread);
    }
    wait_until("the pool's threads to wait", || running.settled());
    // Finished threads lead again: no thread per connection. (A connection that arrives before the thread that
    // served the previous one waits again gets a new leader, so it is not always the same two.)
    assert!(threads.len() <= MAX_IDLE_WORKERS + 1, "{} threads served 12 connections one after another", threads.len());
    assert!(running.threads() <= MAX_IDLE_WORKERS + 1, "{} threads", running.threads());
}

#[test]
fn busy_connections_do_not_hold_up_a_new_one_and_only_a_few_threads_wait_after() {
    let running = Running::start("pool-test-busy", IDLE_WORKER_LINGER, true);
    // More held connections than threads kept: each is accepted and served at once, none waits for another.
    let held: Vec<(UnixStream, ThreadId)> = (0..MAX_IDLE_WORKERS * 2).map(|_| running.connect()).collect();
    let distinct: std::collections::HashSet<ThreadId> = held.iter().map(|(_, thread)| *thread).collect();
    assert_eq!(distinct.len(), held.len(), "every held connection has a thread of its own");
    release_all(&running, held);
    // The leader and at most MAX_IDLE_WORKERS waiting to lead again; the others exited.
    wait_until("the threads past the kept ones to exit", || running.threads() == MAX_IDLE_WORKERS + 1);
}

#[test]
fn waiting_threads_exit_after_the_linger_and_the_leader_still_accepts() {
    let running = Running::start("pool-test-lngr", Duration::from_millis(50), true);
    let held: Vec<(UnixStream, ThreadId)> = (0..3).map(|_| running.connect()).collect();
    release_all(&running, held);
    wait_until("every thread but the leader to give up waiting", || running.threads() == 1);
    // Long after the linger, the leader still takes the next connection.
    std::thread::sleep(Duration::from_millis(200));
    let later = running.connect();
    release_all(&running, vec![later]);
}

#[test]
fn the_stop_closes_the_listener_while_a_connection_being_served_goes_on() {
    let mut running = Running::start("pool-test-stop", IDLE_WORKER_LINGER, true);
    let (mut held, _) = running.connect();
    running.stop();
    let refused = UnixStream::connect(&running.path).expect_err("nothing accepts after the stop");
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused, "{refused}");
    // The connection accepted before goes on to its end.
    running.release.as_ref().expect("running").send_timeout((), BOUND).expect("release");
    echo(&mut held);
    drop(held);
    wait_until("every pool thread to exit once its connection is done", || running.threads() == 0);
}

#[test]
fn the_stop_gives_the_listener_back_with_the_connections_waiting_in_its_backlog() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("pool.sock");
    let listener = UnixListener::bind(&path).expect("a listener");
    let start = |listener: UnixListener| {
        let serve: Serve = Arc::new(|mut stream: UnixStream, admission: Admission| {
            drop(admission);
            let mut byte = [0u8];
            if stream.read_exact(&mut byte).is_ok() {
                let _ = stream.write_all(&byte);
            }
        });
        let (stop_read, stop_write) = nix::unistd::pipe().expect("a pipe");
        let name = "pool-giveback";
        (stop_write, std::thread::spawn(move || Pool::accept_until_stopped(listener, stop_read, name, BOUND, serve)))
    };
    let (stop, coordinator) = start(listener);
    let mut served = UnixStream::connect(&path).expect("connect");
    served.set_read_timeout(Some(BOUND)).expect("a timeout");
    echo(&mut served);
    drop(stop);
    let listener = coordinator.join().expect("the accept thread").expect("the listener, given back");
    // Nobody accepts now, but the socket is open: a connection waits in its backlog, its request with it.
    let mut waiting = UnixStream::connect(&path).expect("connect to the listener given back");
    waiting.set_read_timeout(Some(BOUND)).expect("a timeout");
    waiting.write_all(b"y").expect("write");
    let (stop, coordinator) = start(listener);
    let mut byte = [0u8];
    waiting.read_exact(&mut byte).expect("served by the next pool");
    assert_eq!(&byte, b"y");
    drop(stop);
    drop(coordinator.join().expect("the accept thread"));
    assert!(UnixStream::connect(&path).is_err(), "closed once dropped");
}

#[test]
fn the_stop_waits_until_a_connection_accepted_before_it_is_admitted() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("pool.sock");
    let listener = UnixListener::bind(&path).expect("a listener");
    let (accepted, taken) = bounded::<Admission>(1);
    // The connection's thread hands its admission out instead of dropping it: accepted, not admitted yet.
    let serve: Serve = Arc::new(move |stream: UnixStream, admission: Admission| {
        let _ = accepted.send(admission);
        drop(stream);
    });
    let (stop_read, stop_write) = nix::unistd::pipe().expect("a pipe");
    let (returned, given_back) = bounded(1);
    let coordinator = std::thread::spawn(move || {
        let listener = Pool::accept_until_stopped(listener, stop_read, "pool-admission", BOUND, serve);
        let _ = returned.send(listener.is_some());
    });
    let _client = UnixStream::connect(&path).expect("connect");
    let admission = taken.recv_timeout(BOUND).expect("the connection is accepted");
    drop(stop_write);
    // A negative, so bounded by a short wait: the listener is not given back while the admission is held.
    let early = given_back.recv_timeout(Duration::from_millis(300));
    assert!(early.is_err(), "the stop returned before the connection it accepted was admitted");
    drop(admission);
    assert_eq!(given_back.recv_timeout(BOUND), Ok(true), "the listener, given back once admitted");
    coordinator.join().expect("the accept thread");
}

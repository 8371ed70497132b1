//! The connection threads: each connection still has a thread of its own for as long as it lasts, but a few
//! finished ones wait for the next connection instead of exiting. A request is then served by a thread that
//! is already running (woken like any sleeper) rather than by one created for it: under load a new thread
//! had to queue for a CPU behind every busy terminal (`ping` p50 7.5 ms against a 0.2 ms wake-up of a waiting
//! thread, 16 terminals printing; see BENCHMARKS.md). Connections that last (subscriptions, waits, the owner
//! channel) simply keep their thread, as before.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, TrySendError, bounded};

/// Finished connection threads kept waiting for the next connection; the others exit.
pub const MAX_IDLE_WORKERS: usize = 4;

/// How long a waiting connection thread stays without work before it exits, so an idle daemon goes back to
/// its own threads. Only threads with nothing to do end; a connection is never cut by it.
pub const IDLE_WORKER_LINGER: Duration = Duration::from_secs(10);

/// One connection's work.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// Connection threads, started as needed and kept (at most [`MAX_IDLE_WORKERS`]) between connections.
/// Dropping the pool lets its waiting threads exit.
pub(crate) struct Pool {
    /// Zero capacity: a job is handed over only to a thread that is waiting for one at that moment.
    jobs: Sender<Job>,
    waiting_for_jobs: Receiver<Job>,
    idle: Arc<AtomicUsize>,
    name: &'static str,
    /// How long a thread waits for its next connection ([`IDLE_WORKER_LINGER`] outside tests).
    linger: Duration,
}

impl Pool {
    /// A pool whose threads are named `name` and wait `linger` for the next connection.
    pub(crate) fn new(name: &'static str, linger: Duration) -> Pool {
        let (jobs, waiting_for_jobs) = bounded(0);
        Pool { jobs, waiting_for_jobs, idle: Arc::new(AtomicUsize::new(0)), name, linger }
    }

    /// Runs `job` on a waiting thread, or on a new one when none waits; the error when no thread can start
    /// (the job is dropped then).
    pub(crate) fn run(&self, job: Job) -> std::io::Result<()> {
        let job = match self.jobs.try_send(job) {
            Ok(()) => return Ok(()),
            Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => job,
        };
        let (jobs, idle, linger) = (self.waiting_for_jobs.clone(), self.idle.clone(), self.linger);
        std::thread::Builder::new()
            .name(self.name.to_owned())
            .spawn(move || work(job, &jobs, &idle, linger))
            .map(|_| ())
    }

    /// How many threads wait for a connection now.
    #[cfg(test)]
    fn idle(&self) -> usize {
        self.idle.load(Ordering::Acquire)
    }
}

/// A connection thread: its first job, then more while it is one of the few kept waiting.
fn work(first: Job, jobs: &Receiver<Job>, idle: &AtomicUsize, linger: Duration) {
    first();
    loop {
        if idle.fetch_add(1, Ordering::AcqRel) >= MAX_IDLE_WORKERS {
            idle.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        let next = jobs.recv_timeout(linger);
        idle.fetch_sub(1, Ordering::AcqRel);
        // Timed out, or the pool was dropped (the daemon stops accepting).
        let Ok(job) = next else { return };
        job();
    }
}

#[cfg(test)]
mod tests {
    use std::thread::ThreadId;
    use std::time::Instant;

    use super::*;

    const BOUND: Duration = Duration::from_secs(30);

    /// Runs a job on `pool` and returns the thread it ran on.
    fn run_and_report(pool: &Pool) -> ThreadId {
        let (done, ran_on) = bounded(1);
        pool.run(Box::new(move || {
            let _ = done.send(std::thread::current().id());
        }))
        .expect("a thread");
        ran_on.recv_timeout(BOUND).expect("the job ran")
    }

    fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
        let deadline = Instant::now() + BOUND;
        while !condition() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_finished_thread_serves_the_next_connection() {
        let pool = Pool::new("test-pool", IDLE_WORKER_LINGER);
        let first = run_and_report(&pool);
        wait_until("the thread to wait for work", || pool.idle() == 1);
        assert_eq!(run_and_report(&pool), first, "the waiting thread took the next job");
    }

    #[test]
    fn busy_threads_do_not_hold_up_a_new_connection_and_only_a_few_are_kept() {
        let pool = Pool::new("test-pool", IDLE_WORKER_LINGER);
        // More long jobs than threads kept: each gets a thread at once (none waits for another).
        let (release, released) = bounded::<()>(0);
        let (started, started_rx) = bounded(MAX_IDLE_WORKERS * 2);
        for _ in 0..MAX_IDLE_WORKERS * 2 {
            let (released, started) = (released.clone(), started.clone());
            pool.run(Box::new(move || {
                let _ = started.send(());
                let _ = released.recv_timeout(BOUND);
            }))
            .expect("a thread");
        }
        for _ in 0..MAX_IDLE_WORKERS * 2 {
            started_rx.recv_timeout(BOUND).expect("every job started while the others were busy");
        }
        drop(release);
        wait_until("the kept threads to wait", || pool.idle() == MAX_IDLE_WORKERS);
        // Dropping the pool lets them exit.
        let idle = pool.idle.clone();
        drop(pool);
        wait_until("the waiting threads to exit", || idle.load(Ordering::Acquire) == 0);
    }

    #[test]
    fn a_waiting_thread_exits_after_the_linger_and_a_later_connection_gets_a_new_one() {
        let pool = Pool::new("test-pool", Duration::from_millis(50));
        let first = run_and_report(&pool);
        wait_until("the thread to wait", || pool.idle() == 1);
        wait_until("the thread to give up waiting", || pool.idle() == 0);
        assert_ne!(run_and_report(&pool), first, "a new thread served the later connection");
    }
}

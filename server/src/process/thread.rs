//! The one way to start the daemon's named threads (a process's reader, writer and actor through
//! `threads::Threads`, the wait thread) (one
//! that cannot start is a typed [`ServiceError::Thread`]), and the daemon's one way to join any thread: a
//! thread that panicked is reported (with its name and message) when it is joined instead of being ignored. The daemon's own
//! threads (accept loop, connections, signals, guardian supervisor, sweep, watchdog) start with
//! `std::thread::Builder` where they are needed, each failure handled there, since none is a
//! [`ServiceError`]; one that must be started before what it runs exists (a resuming image starts its threads
//! before it commits to the upgrade's state, so that no start can fail after) is [`Parked`].

use std::thread::{JoinHandle, ScopedJoinHandle};

use crossbeam_channel::{Sender, bounded};

use crate::error::ServiceError;

/// Starts a thread named `name` running `body`; a failure names the thread's `role` (`reader`, `wait`, ...).
pub(crate) fn start(
    name: String,
    role: &'static str,
    body: impl FnOnce() + Send + 'static,
) -> Result<JoinHandle<()>, ServiceError> {
    let thread = std::thread::Builder::new().name(name).spawn(body);
    thread.map_err(|e| ServiceError::Thread { role, reason: e.to_string() })
}

/// A thread that can be joined: a [`JoinHandle`] or a [`ScopedJoinHandle`].
pub(crate) trait Joinable {
    /// What the thread returns.
    type Output;
    /// The thread's name, or `unnamed`.
    fn name(&self) -> String;
    /// Waits for it to end; `Err` holds its panic.
    fn join(self) -> std::thread::Result<Self::Output>;
}

impl<T> Joinable for JoinHandle<T> {
    type Output = T;

    fn name(&self) -> String {
        self.thread().name().unwrap_or("unnamed").to_owned()
    }

    fn join(self) -> std::thread::Result<T> {
        JoinHandle::join(self)
    }
}

impl<T> Joinable for ScopedJoinHandle<'_, T> {
    type Output = T;

    fn name(&self) -> String {
        self.thread().name().unwrap_or("unnamed").to_owned()
    }

    fn join(self) -> std::thread::Result<T> {
        ScopedJoinHandle::join(self)
    }
}

/// Joins `thread` and reports a panic through `tracing::error!`, with the thread's name and the panic's message,
/// instead of dropping it. Returns what the thread returned, or `None` when it panicked. Every join of a daemon
/// thread goes through here.
pub(crate) fn join_reporting<J: Joinable>(thread: J) -> Option<J::Output> {
    let name = thread.name();
    match thread.join() {
        Ok(output) => Some(output),
        Err(panic) => {
            let message = panic_message(panic.as_ref());
            tracing::error!(thread = %name, panic = %message, "a daemon thread panicked");
            None
        }
    }
}

/// How many pieces of work a parked thread is given: one.
const PARKED_WORK: usize = 1;

/// What a parked thread runs once given.
type Work<T> = Box<dyn FnOnce() -> T + Send>;

/// A named thread, started, that waits for its work ([`Parked::run`]); dropped unused, it ends at once.
#[derive(Debug)]
pub(crate) struct Parked<T> {
    work: Sender<Work<T>>,
    thread: JoinHandle<Option<T>>,
}

impl<T: Send + 'static> Parked<T> {
    /// Starts the thread `name`; this is the only step that can fail.
    pub(crate) fn spawn(name: &str) -> std::io::Result<Parked<T>> {
        let (work, given) = bounded::<Work<T>>(PARKED_WORK);
        let thread =
            std::thread::Builder::new().name(name.to_owned()).spawn(move || given.recv().ok().map(|work| work()))?;
        Ok(Parked { work, thread })
    }

    /// Has the thread run `work`; its handle returns what `work` returned (`None` only if it was never run).
    pub(crate) fn run(self, work: impl FnOnce() -> T + Send + 'static) -> JoinHandle<Option<T>> {
        // The thread waits for exactly this one piece of work, in a channel with room for it: the send neither
        // blocks nor fails.
        let _ = self.work.send(Box::new(work));
        self.thread
    }
}

/// The text a panic was raised with, when it was a string.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    if let Some(text) = panic.downcast_ref::<&str>() {
        text
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text
    } else {
        "a non-string panic payload"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_started_with_its_name() {
        let thread = start("opencode-pty-test-name".into(), "test", || {}).expect("start");
        assert_eq!(thread.thread().name(), Some("opencode-pty-test-name"));
        assert_eq!(join_reporting(thread), Some(()));
    }

    #[test]
    fn a_panic_is_reported_when_joined() {
        let thread = start("opencode-pty-test-panic".into(), "test", || panic!("on purpose")).expect("start");
        assert!(join_reporting(thread).is_none(), "the panic is seen, not swallowed");
    }

    #[test]
    fn a_scoped_thread_is_joined_the_same_way() {
        std::thread::scope(|scope| {
            let thread = std::thread::Builder::new().name("opencode-pty-test-scoped".into());
            let thread = thread.spawn_scoped(scope, || panic!("on purpose")).expect("start");
            assert!(join_reporting(thread).is_none(), "the panic is seen, and does not leave the scope");
        });
    }

    #[test]
    fn a_parked_thread_runs_its_work_once_given_and_ends_when_dropped_unused() {
        let parked = Parked::spawn("opencode-pty-test-parked").expect("start");
        let thread = parked.run(|| 7);
        assert_eq!(thread.thread().name(), Some("opencode-pty-test-parked"));
        assert_eq!(join_reporting(thread), Some(Some(7)));
        let unused = Parked::<u8>::spawn("opencode-pty-test-unused").expect("start");
        let Parked { work, thread } = unused;
        drop(work);
        assert_eq!(join_reporting(thread), Some(None), "it ends without work");
    }

    #[test]
    fn the_panic_text_is_read_from_either_string_kind() {
        assert_eq!(panic_message(&"static"), "static");
        assert_eq!(panic_message(&String::from("owned")), "owned");
        assert_eq!(panic_message(&7u8), "a non-string panic payload");
    }
}

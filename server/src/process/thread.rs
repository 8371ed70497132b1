//! The one way to start the daemon's named threads (a process's reader, writer and actor through
//! `threads::Threads`, the wait thread) (one
//! that cannot start is a typed [`ServiceError::Thread`]), and the daemon's one way to join any thread: a
//! thread that panicked is reported (with its name and message) when it is joined instead of being ignored. The daemon's own
//! threads (accept loop, connections, signals, guardian supervisor, sweep, watchdog) start with
//! `std::thread::Builder` where they are needed, each failure handled there, since none is a
//! [`ServiceError`].

use std::thread::{JoinHandle, ScopedJoinHandle};

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
    fn the_panic_text_is_read_from_either_string_kind() {
        assert_eq!(panic_message(&"static"), "static");
        assert_eq!(panic_message(&String::from("owned")), "owned");
        assert_eq!(panic_message(&7u8), "a non-string panic payload");
    }
}

//! The threads of one process (reader, writer, actor), each started in a `process` span of its own, and its
//! child's watch by the wait thread: kept together and ended together when the process stops.

use std::sync::Mutex;
use std::thread::JoinHandle;

use super::thread::{join_reporting, start};
use super::waiter::Watched;
use crate::error::ServiceError;

/// The threads of one process, started one by one and joined together when it stops, and its child's watch
/// by the daemon's wait thread, which ends with them.
#[derive(Debug, Default)]
pub(crate) struct Threads {
    started: Mutex<Vec<JoinHandle<()>>>,
    watched: Mutex<Option<Watched>>,
}

impl Threads {
    /// Starts `body` as the thread `opencode-pty-<prefix><role>-<id>` and keeps it for [`Self::join_all`]. It
    /// runs inside a `process` span (`id`, `role`) of its own, not the creating connection's, so what a busy
    /// daemon logs reads per process: `RUST_LOG` filters such as `[process{id=7}]=debug` pick one terminal.
    pub(crate) fn start(
        &self,
        prefix: &str,
        role: &'static str,
        id: u64,
        body: impl FnOnce() + Send + 'static,
    ) -> Result<(), ServiceError> {
        let span = tracing::info_span!(parent: None, "process", id, role = %role);
        let thread = start(format!("opencode-pty-{prefix}{role}-{id}"), role, move || {
            span.in_scope(|| {
                tracing::trace!("thread started");
                body();
                tracing::trace!("thread ended");
            });
        })?;
        self.started.lock().unwrap_or_else(|e| e.into_inner()).push(thread);
        Ok(())
    }

    /// Keeps the child's watch until [`Self::join_all`].
    pub(crate) fn keep(&self, watched: Watched) {
        *self.watched.lock().unwrap_or_else(|e| e.into_inner()) = Some(watched);
    }

    /// Ends the child's watch (a report in progress finishes first; none is made after), then joins every
    /// thread started, reporting any that panicked: again until none is left, so a thread one of them started
    /// before it ended (a terminal's writer, which its actor starts on demand) is joined too.
    pub(crate) fn join_all(&self) {
        drop(self.watched.lock().unwrap_or_else(|e| e.into_inner()).take());
        loop {
            let threads = std::mem::take(&mut *self.started.lock().unwrap_or_else(|e| e.into_inner()));
            if threads.is_empty() {
                return;
            }
            for thread in threads {
                join_reporting(thread);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_joined_together() {
        let threads = Threads::default();
        let (tx, rx) = crossbeam_channel::bounded(2);
        for role in ["one", "two"] {
            let tx = tx.clone();
            threads
                .start("test-", role, 9, move || tx.send(std::thread::current().name().map(str::to_owned)).unwrap())
                .unwrap();
        }
        threads.join_all();
        let mut names: Vec<_> = rx.try_iter().flatten().collect();
        names.sort();
        assert_eq!(names, ["opencode-pty-test-one-9", "opencode-pty-test-two-9"]);
    }
}

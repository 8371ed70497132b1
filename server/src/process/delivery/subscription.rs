//! A subscription of either kind, as its connection holds it: the connection's side of the delivery of the
//! process's events, and what detaching means for that process (a terminal's actor is told; a pipe process
//! removes its entry), done when the subscription is dropped.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::{Batch, Recipient, Sink};
use crate::process::Event;

/// What keeps a subscription attached: `attached`, then the process's events in order, until its last one
/// (`exited`, or a pipe process's `error`) or until the process lets it go. It detaches when dropped.
pub struct ProcessSubscription {
    recipient: Recipient<Event>,
    /// Run once, when dropped.
    detach: Option<Box<dyn FnOnce() + Send>>,
}

impl ProcessSubscription {
    /// The connection side of a delivery of events, and what detaching it does.
    pub(crate) fn new(recipient: Recipient<Event>, detach: impl FnOnce() + Send + 'static) -> ProcessSubscription {
        ProcessSubscription { recipient, detach: Some(Box::new(detach)) }
    }

    /// Where the events arrive. `Disconnected` means the process ended this subscription (its last event was
    /// sent, it stopped, or this observer fell too far behind) after every queued event was taken.
    pub fn receiver(&self) -> &Receiver<Event> {
        self.recipient.receiver()
    }

    /// The next event, waiting at most `timeout` (see [`Self::receiver`]).
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Event, RecvTimeoutError> {
        self.recipient.receiver().recv_timeout(timeout)
    }

    /// Whether the process has let go of this subscription (a terminal that stopped, an observer that fell
    /// behind): no event follows those already queued, and a write its client does not read may give up.
    pub fn is_ended(&self) -> bool {
        self.recipient.is_ended()
    }

    /// Offers the process the connection's socket, to write output to it itself while the connection has
    /// nothing left to write (see `process::delivery`). Call [`Self::written`] after writing each batch.
    pub(crate) fn offer(&self, sink: Arc<dyn Sink>) {
        self.recipient.offer(sink);
    }

    /// `first` and the events queued behind it now, up to `max_bytes` and never past the last event.
    pub(crate) fn batch(&self, first: Event, max_bytes: usize) -> Batch<Event> {
        self.recipient.batch(first, max_bytes)
    }

    /// Says that `batch` has been written whole to the connection.
    pub(crate) fn written(&self, batch: &Batch<Event>) {
        self.recipient.written(batch.len());
    }
}

impl fmt::Debug for ProcessSubscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessSubscription").field("recipient", &self.recipient).finish_non_exhaustive()
    }
}

impl Drop for ProcessSubscription {
    fn drop(&mut self) {
        // Marked first, so an actor that cannot be told at once notices on its own.
        self.recipient.leave();
        if let Some(detach) = self.detach.take() {
            detach();
        }
    }
}

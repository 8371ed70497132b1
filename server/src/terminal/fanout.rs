//! The policy of a terminal's output delivery: its subscribers, each with a delivery of events
//! (`process::delivery`: a bounded channel, a backlog the actor holds behind it, and direct writes to the
//! connection's socket), and what their backlogs mean. A controller's backlog applies backpressure (the actor
//! stops taking output while it holds any, so the reader and the child wait, yet requests go on) and, past
//! [`CONTROLLER_BACKLOG_EVENTS`] or [`CONTROLLER_BACKLOG_BYTES`], stalls the controller; an observer's absorbs
//! bursts, and the observer is dropped when it outgrows [`OBSERVER_BACKLOG_BYTES`] or
//! [`OBSERVER_BACKLOG_EVENTS`]. Output frames for a subscriber's socket are gathered while the actor has more
//! output queued, and written with one vectored call per subscriber when it has none (or
//! [`DIRECT_WRITE_BATCH_BYTES`] are gathered): with many observers the system calls, not the bytes, were what
//! each observer cost.

use crossbeam_channel::{SelectedOperation, Sender};
use opencode_pty_protocol::Role;

use super::command::Command;
use crate::process::delivery::{self, Delivery, Held, Pushed};
use crate::process::{Event, OptIns, ProcessSubscription};

/// Events in one observer's channel. A 1 MiB burst is 128 live output events of 8 KiB, well within it.
pub const OBSERVER_QUEUE_EVENTS: usize = 1024;

/// What the actor holds for an observer whose channel is full before the observer counts as too slow and is
/// disconnected: 4 MiB, counting output bytes and the size of JSON events (a `resized` checkpoint can be
/// megabytes) ...
pub const OBSERVER_BACKLOG_BYTES: usize = 4 * 1024 * 1024;

/// ... or this many events, whichever comes first (many tiny events cost more than their bytes).
pub const OBSERVER_BACKLOG_EVENTS: usize = 4096;

/// Events in the controller's channel.
pub const CONTROLLER_QUEUE_EVENTS: usize = 1024;

/// Events the actor holds for a controller whose channel is full. While it holds any, the actor takes no more
/// output (the reader and the child wait); once it holds this many (requests that publish events while the
/// controller does not read), or [`CONTROLLER_BACKLOG_BYTES`], the controller counts as stalled: only a
/// takeover, a detach and `list`/`get` are still handled, and other requests wait (see the actor).
pub const CONTROLLER_BACKLOG_EVENTS: usize = 256;

/// The size of what is held for a controller at which it counts as stalled (16 MiB, see
/// [`CONTROLLER_BACKLOG_EVENTS`]).
pub(super) const CONTROLLER_BACKLOG_BYTES: usize = 16 * 1024 * 1024;

/// The most output the actor gathers for one subscriber's direct write before writing it (eight live frames):
/// gathered frames are written in one system call when the actor has no more output queued, when this fills,
/// or before anything else goes to that subscriber, so gathering delays nothing the actor could send sooner.
pub const DIRECT_WRITE_BATCH_BYTES: usize = 64 * 1024;

/// What a controller holds when it counts as stalled.
const CONTROLLER_STALL: Held = Held { items: CONTROLLER_BACKLOG_EVENTS, bytes: CONTROLLER_BACKLOG_BYTES };

/// What an observer may hold before it is disconnected.
const OBSERVER_BOUND: Held = Held { items: OBSERVER_BACKLOG_EVENTS, bytes: OBSERVER_BACKLOG_BYTES };

/// One attached subscriber, as the actor sees it.
#[derive(Debug)]
pub(crate) struct Subscriber {
    pub(crate) key: u64,
    pub(crate) attachment: String,
    /// The controller generation at which it last became controller; 0 if it never was.
    pub(crate) last_control: u64,
    /// The features whose events it asked for (SPEC V7): only those get them.
    pub(crate) events: OptIns,
    /// The delivery of its events (dropped with it, which lets its connection go).
    delivery: Delivery<Event>,
}

impl Subscriber {
    /// Whether this subscriber holds as much as a stalled controller ([`CONTROLLER_BACKLOG_EVENTS`],
    /// [`CONTROLLER_BACKLOG_BYTES`]).
    pub(crate) fn is_stalled(&self) -> bool {
        self.delivery.is_stalled(CONTROLLER_STALL)
    }

    /// Whether an observer holding this much is too slow to keep.
    fn over_observer_bound(&self) -> bool {
        self.delivery.held().exceeds(OBSERVER_BOUND)
    }

    /// Whether anything is held for this subscriber.
    pub(crate) fn is_behind(&self) -> bool {
        self.delivery.is_behind()
    }
}

/// A held event on its way into a subscriber's channel, for the actor's wait.
pub(crate) struct Pending {
    pub(crate) key: u64,
    pub(crate) sender: Sender<Event>,
}

/// Every subscriber of one terminal.
#[derive(Debug, Default)]
pub(crate) struct Fanout {
    subscribers: Vec<Subscriber>,
    next_key: u64,
}

impl Fanout {
    /// Adds a subscriber with an empty queue sized for its role, which asked for the events of `events`, and
    /// returns its subscription, which tells the actor through `commands` when it is dropped.
    pub(crate) fn add(
        &mut self,
        attachment: String,
        role: Role,
        events: OptIns,
        commands: Sender<Command>,
    ) -> (u64, ProcessSubscription) {
        let capacity = match role {
            Role::Controller => CONTROLLER_QUEUE_EVENTS,
            Role::Observer => OBSERVER_QUEUE_EVENTS,
        };
        let (delivery, recipient) = delivery::channel(capacity, DIRECT_WRITE_BATCH_BYTES);
        self.next_key += 1;
        let key = self.next_key;
        self.subscribers.push(Subscriber { key, attachment, last_control: 0, events, delivery });
        // If the queue is full the actor still notices on its next command (`prune_dropped`).
        let detach = move || {
            let _ = commands.try_send(Command::Detach { key });
        };
        (key, ProcessSubscription::new(recipient, detach))
    }

    /// Removes a subscriber by key.
    pub(crate) fn remove(&mut self, key: u64) -> Option<Subscriber> {
        let index = self.subscribers.iter().position(|s| s.key == key)?;
        Some(self.subscribers.remove(index))
    }

    /// Removes the subscriber with this attachment id.
    pub(crate) fn remove_attachment(&mut self, attachment: &str) -> Option<Subscriber> {
        let index = self.subscribers.iter().position(|s| s.attachment == attachment)?;
        Some(self.subscribers.remove(index))
    }

    /// The subscriber with this attachment id.
    pub(crate) fn get_mut(&mut self, attachment: &str) -> Option<&mut Subscriber> {
        self.subscribers.iter_mut().find(|s| s.attachment == attachment)
    }

    /// The subscribers, in attach order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Subscriber> {
        self.subscribers.iter()
    }

    /// Removes every subscriber whose receiving end was dropped.
    pub(crate) fn prune_dropped(&mut self) -> Vec<Subscriber> {
        let (dropped, kept) =
            std::mem::take(&mut self.subscribers).into_iter().partition(|s| s.delivery.connection_left());
        self.subscribers = kept;
        dropped
    }

    /// Sends `event` to one subscriber (used for its first events, right after [`Self::add`]).
    pub(crate) fn send_to(&mut self, key: u64, event: Event) {
        if let Some(subscriber) = self.subscribers.iter_mut().find(|s| s.key == key) {
            subscriber.delivery.push(event);
        }
    }

    /// Sends `event` to every subscriber, holding it for those whose channel is full. Removes (and returns)
    /// subscribers that are gone and observers (anyone but `controller`) whose backlog outgrew
    /// [`OBSERVER_BACKLOG_BYTES`].
    pub(crate) fn publish(&mut self, event: &Event, controller: Option<&str>) -> Vec<Subscriber> {
        self.publish_where(event, controller, |_| true)
    }

    /// [`Self::publish`] to the subscribers `wanted` accepts only (an event of a feature, to those that asked
    /// for it); the others are left as they are.
    pub(crate) fn publish_where(
        &mut self,
        event: &Event,
        controller: Option<&str>,
        wanted: impl Fn(&Subscriber) -> bool,
    ) -> Vec<Subscriber> {
        let mut removed = Vec::new();
        let mut index = 0;
        while index < self.subscribers.len() {
            let subscriber = &mut self.subscribers[index];
            if !wanted(subscriber) {
                index += 1;
                continue;
            }
            let is_controller = controller == Some(subscriber.attachment.as_str());
            let pushed = subscriber.delivery.push(event.clone());
            let keep = pushed != Pushed::Gone && (is_controller || !subscriber.over_observer_bound());
            if keep {
                index += 1;
            } else {
                removed.push(self.subscribers.remove(index));
            }
        }
        removed
    }

    /// Writes the output gathered for every subscriber (the actor calls this before it waits). Removes (and
    /// returns) subscribers that are gone.
    pub(crate) fn flush(&mut self) -> Vec<Subscriber> {
        let mut removed = Vec::new();
        let mut index = 0;
        while index < self.subscribers.len() {
            if self.subscribers[index].delivery.flush() != Pushed::Gone {
                index += 1;
            } else {
                removed.push(self.subscribers.remove(index));
            }
        }
        removed
    }

    /// Whether output is gathered for any subscriber.
    pub(crate) fn has_gathered(&self) -> bool {
        self.subscribers.iter().any(|s| s.delivery.has_gathered())
    }

    /// The subscribers holding events, each with a sender to wait on.
    pub(crate) fn pending(&self) -> Vec<Pending> {
        let waiting =
            self.subscribers.iter().filter_map(|s| Some(Pending { key: s.key, sender: s.delivery.waiting()? }));
        waiting.collect()
    }

    /// Sends the oldest event held for `target` through `operation`, which the actor's wait found ready on its
    /// sender. Removes (and returns) the subscriber when it is gone.
    ///
    /// # Panics
    ///
    /// When `target` is no longer a subscriber: the wait was listed from this fan-out just before, and nothing
    /// has changed it since.
    pub(crate) fn send_held(&mut self, operation: SelectedOperation<'_>, target: &Pending) -> Option<Subscriber> {
        let index = self.subscribers.iter().position(|s| s.key == target.key).expect("a subscriber holding events");
        match self.subscribers[index].delivery.send_held(operation, &target.sender) {
            Pushed::Gone => Some(self.subscribers.remove(index)),
            Pushed::Delivered | Pushed::Held => None,
        }
    }

    /// The subscriber with this attachment id, to look at.
    pub(crate) fn get(&self, attachment: &str) -> Option<&Subscriber> {
        self.subscribers.iter().find(|s| s.attachment == attachment)
    }
}

#[cfg(test)]
mod tests;

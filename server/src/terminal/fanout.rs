//! Subscribers of one terminal and delivery to them: the controller's queue applies backpressure, an
//! observer's queue absorbs bursts and the observer is dropped when it stays full.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError, bounded, select};
use opencode_pty_protocol::{Response, Role};

use super::command::Command;

/// Events queued for one observer before it counts as too slow and is dropped. A 1 MiB burst is 128 live
/// output events of 8 KiB, well within it.
pub const OBSERVER_QUEUE_EVENTS: usize = 1024;

/// Events queued for the controller; when it is full the actor waits (and so the reader, and the child).
pub const CONTROLLER_QUEUE_EVENTS: usize = 1024;

/// What a subscriber receives after `attached`, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Raw output from `start` (a binary output frame on the wire).
    Output {
        /// The offset of the first byte.
        start: u64,
        /// The bytes; the next event starts at `start + bytes.len()`.
        bytes: Arc<[u8]>,
    },
    /// A JSON event: `attached` first, then `resized`, `controller_changed`, `title_changed`,
    /// `foreground_process_changed` and finally `exited`.
    Message(Arc<Response>),
}

/// The receiving end of a subscription. Dropping it detaches the subscriber.
#[derive(Debug)]
pub struct Subscription {
    receiver: Receiver<Event>,
    key: u64,
    alive: Arc<AtomicBool>,
    commands: Sender<Command>,
}

impl Subscription {
    /// The next event, waiting at most `timeout`. `Disconnected` means the subscription was ended by the
    /// terminal (it stopped, or this observer fell too far behind) after every queued event was taken.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Event, RecvTimeoutError> {
        self.receiver.recv_timeout(timeout)
    }

    /// The channel itself, to wait on it together with others.
    pub fn receiver(&self) -> &Receiver<Event> {
        &self.receiver
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.alive.store(false, Ordering::Release);
        // If the queue is full the actor still notices `alive` on its next command.
        let _ = self.commands.try_send(Command::Detach { key: self.key });
    }
}

/// One attached subscriber, as the actor sees it.
#[derive(Debug)]
pub(crate) struct Subscriber {
    pub(crate) key: u64,
    pub(crate) attachment: String,
    /// The controller generation at which it last became controller; 0 if it never was.
    pub(crate) last_control: u64,
    sender: Sender<Event>,
    alive: Arc<AtomicBool>,
}

/// Every subscriber of one terminal.
#[derive(Debug, Default)]
pub(crate) struct Fanout {
    subscribers: Vec<Subscriber>,
    next_key: u64,
}

impl Fanout {
    /// Adds a subscriber with an empty queue sized for its role, and returns its receiving end.
    pub(crate) fn add(&mut self, attachment: String, role: Role, commands: Sender<Command>) -> (u64, Subscription) {
        let capacity = match role {
            Role::Controller => CONTROLLER_QUEUE_EVENTS,
            Role::Observer => OBSERVER_QUEUE_EVENTS,
        };
        let (sender, receiver) = bounded(capacity);
        self.next_key += 1;
        let key = self.next_key;
        let alive = Arc::new(AtomicBool::new(true));
        self.subscribers.push(Subscriber { key, attachment, last_control: 0, sender, alive: alive.clone() });
        (key, Subscription { receiver, key, alive, commands })
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
            std::mem::take(&mut self.subscribers).into_iter().partition(|s| !s.alive.load(Ordering::Acquire));
        self.subscribers = kept;
        dropped
    }

    /// Sends `event` to one subscriber without waiting (its queue was just made or has room by contract).
    pub(crate) fn send_to(&mut self, key: u64, event: Event) {
        if let Some(subscriber) = self.subscribers.iter().find(|s| s.key == key) {
            let _ = subscriber.sender.try_send(event);
        }
    }

    /// Sends `event` to every subscriber: the controller (attachment `controller`) waits for room unless the
    /// terminal stops; an observer whose queue is full, or any subscriber that is gone, is removed. Returns
    /// the removed subscribers.
    pub(crate) fn publish(&mut self, event: &Event, controller: Option<&str>, stop: &Receiver<()>) -> Vec<Subscriber> {
        let mut removed = Vec::new();
        let mut index = 0;
        while index < self.subscribers.len() {
            let subscriber = &self.subscribers[index];
            let delivered = if controller == Some(subscriber.attachment.as_str()) {
                select! {
                    send(subscriber.sender, event.clone()) -> sent => sent.is_ok(),
                    recv(stop) -> _ => true,
                }
            } else {
                match subscriber.sender.try_send(event.clone()) {
                    Ok(()) => true,
                    Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
                }
            };
            if delivered {
                index += 1;
            } else {
                removed.push(self.subscribers.remove(index));
            }
        }
        removed
    }
}

//! Subscribers of one terminal and delivery to them. Each subscriber has a bounded channel and, behind it, a
//! bounded backlog the actor holds while the channel is full. A controller's backlog applies backpressure (the
//! actor stops taking output while it holds any, so the reader and the child wait, yet requests go on); an
//! observer's absorbs bursts, and the observer is dropped when the backlog outgrows its bound.
//!
//! Output can also skip the subscriber's thread: once a connection has handed the actor its socket, the
//! actor writes an output frame to it itself (without blocking) whenever that connection has nothing left to
//! write, so neither a thread wake-up nor a second copy is paid per observer and event. Whatever the socket
//! does not take at once (the rest of a frame, and everything after it) goes through the channel as before,
//! and a count of events handed to the connection and not yet written keeps the two writers from ever
//! interleaving or reordering frames. JSON events always go through the channel (the connection must see
//! `exited` to end the subscription). Frames for direct writes are gathered while the actor has more output
//! queued, and written with one vectored call per subscriber when it has none (or
//! [`DIRECT_WRITE_BATCH_BYTES`] are gathered): with many observers the system calls, not the bytes, were what
//! each observer cost.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::socket::{MsgFlags, sendmsg};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError, bounded};
use opencode_pty_protocol::{Response, Role};

use super::command::Command;
use crate::process::{Event, Output};

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

/// What a JSON event without a large member is counted as in a backlog.
const SMALL_EVENT_BYTES: usize = 256;

/// The receiving end of a subscription. Dropping it detaches the subscriber.
#[derive(Debug)]
pub struct PtySubscription {
    receiver: Receiver<Event>,
    key: u64,
    alive: Arc<AtomicBool>,
    /// Set once the terminal has let go of this subscriber (it fell behind, detached, or the terminal stopped).
    ended: Arc<AtomicBool>,
    /// Events handed to this subscription and not yet written by its connection (see [`Self::written`]).
    in_flight: Arc<AtomicUsize>,
    commands: Sender<Command>,
}

impl PtySubscription {
    /// The next event, waiting at most `timeout`. `Disconnected` means the subscription was ended by the
    /// terminal (it stopped, or this observer fell too far behind) after every queued event was taken.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Event, RecvTimeoutError> {
        self.receiver.recv_timeout(timeout)
    }

    /// The channel itself, to wait on it together with others.
    pub fn receiver(&self) -> &Receiver<Event> {
        &self.receiver
    }

    /// Whether the terminal has let go of this subscription: no event will follow those already queued.
    pub fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Offers the actor the connection's socket, to write output to itself while this connection has nothing
    /// left to write. Call [`Self::written`] after writing each event taken from [`Self::receiver`]. Dropped
    /// (the subscription simply goes on through its thread) if the actor's queue is full.
    pub fn offer_socket(&self, socket: Arc<UnixStream>) {
        let _ = self.commands.try_send(Command::Socket { key: self.key, socket });
    }

    /// Says that an event taken from [`Self::receiver`] has been written whole to the connection.
    pub fn written(&self) {
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for PtySubscription {
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
    ended: Arc<AtomicBool>,
    /// The connection's socket, once offered: output may be written to it directly while `in_flight` is zero.
    socket: Option<Arc<UnixStream>>,
    /// Events sent into the channel (or held for it) whose writing the connection has not yet confirmed.
    in_flight: Arc<AtomicUsize>,
    /// Events waiting for room in the channel, oldest first, and the output bytes among them.
    backlog: VecDeque<Event>,
    backlog_bytes: usize,
    /// Output gathered for one direct write (only while nothing is held or in flight), and its frames' size.
    gathered: Vec<Output>,
    gathered_bytes: usize,
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.ended.store(true, Ordering::Release);
    }
}

impl Subscriber {
    /// Queues `event` behind anything already held; false when the receiving end is gone. Output is gathered
    /// for a direct write to the socket when nothing is held or in flight (see the module documentation).
    fn deliver(&mut self, event: Event) -> bool {
        if self.backlog.is_empty()
            && self.socket.is_some()
            && self.in_flight.load(Ordering::Acquire) == 0
            && let Event::Output(output) = event
        {
            self.gathered_bytes += output.whole_frame().len();
            self.gathered.push(output);
            return self.gathered_bytes < DIRECT_WRITE_BATCH_BYTES || self.write_gathered();
        }
        // Whatever was gathered goes first.
        self.write_gathered() && self.send(event)
    }

    /// Writes the gathered output to the socket with one call, without waiting; what the socket does not take
    /// goes through the channel, in order. False when the receiving end is gone.
    fn write_gathered(&mut self) -> bool {
        if self.gathered.is_empty() {
            return true;
        }
        let gathered = std::mem::take(&mut self.gathered);
        self.gathered_bytes = 0;
        let mut written = match &self.socket {
            Some(socket) => write_now(socket, &gathered),
            None => 0,
        };
        let mut alive = true;
        for output in gathered {
            let len = output.whole_frame().len();
            if written >= len {
                written -= len;
                continue;
            }
            alive &= self.send(Event::Output(output.rest(written)));
            written = 0;
        }
        alive
    }

    /// Hands `event` to the connection's thread, or holds it while the channel is full; false when the
    /// receiving end is gone.
    fn send(&mut self, event: Event) -> bool {
        if !self.backlog.is_empty() {
            self.hold(event);
            return true;
        }
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        match self.sender.try_send(event) {
            Ok(()) => true,
            Err(TrySendError::Disconnected(_)) => false,
            Err(TrySendError::Full(event)) => {
                self.in_flight.fetch_sub(1, Ordering::AcqRel);
                self.hold(event);
                true
            }
        }
    }

    fn hold(&mut self, event: Event) {
        self.backlog_bytes += event.weight();
        self.backlog.push_back(event);
    }

    /// Whether this subscriber holds as much as a stalled controller ([`CONTROLLER_BACKLOG_EVENTS`],
    /// [`CONTROLLER_BACKLOG_BYTES`]).
    pub(crate) fn is_stalled(&self) -> bool {
        self.backlog.len() >= CONTROLLER_BACKLOG_EVENTS || self.backlog_bytes >= CONTROLLER_BACKLOG_BYTES
    }

    /// Whether an observer holding this much is too slow to keep.
    fn over_observer_bound(&self) -> bool {
        self.backlog_bytes > OBSERVER_BACKLOG_BYTES || self.backlog.len() > OBSERVER_BACKLOG_EVENTS
    }

    /// Whether anything is held for this subscriber.
    pub(crate) fn is_behind(&self) -> bool {
        !self.backlog.is_empty()
    }
}

impl Event {
    /// Roughly what the event costs to hold: its output bytes, or the size of a JSON event's large member.
    fn weight(&self) -> usize {
        match self {
            Event::Output(output) => output.bytes().len(),
            Event::Message(message) => match message.response() {
                Response::Resized { checkpoint_base64, .. } => checkpoint_base64.len() + SMALL_EVENT_BYTES,
                Response::Attached { replay_base64, .. } => replay_base64.len() + SMALL_EVENT_BYTES,
                _ => SMALL_EVENT_BYTES,
            },
        }
    }
}

/// Writes what `socket` takes of `frames`, in order, without waiting; how many bytes that was (0 when it takes
/// nothing now, or failed: the connection's thread then meets the failure itself).
fn write_now(socket: &UnixStream, frames: &[Output]) -> usize {
    let mut slices: Vec<IoSlice<'_>> = frames.iter().map(|output| IoSlice::new(output.whole_frame())).collect();
    let mut rest = &mut slices[..];
    let mut written = 0;
    while !rest.is_empty() {
        let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
        match sendmsg::<()>(socket.as_raw_fd(), rest, &[], flags, None) {
            Ok(0) => break,
            Ok(n) => {
                written += n;
                IoSlice::advance_slices(&mut rest, n);
            }
            Err(Errno::EINTR) => {}
            Err(_) => break,
        }
    }
    written
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
    /// Adds a subscriber with an empty queue sized for its role, and returns its receiving end.
    pub(crate) fn add(&mut self, attachment: String, role: Role, commands: Sender<Command>) -> (u64, PtySubscription) {
        let capacity = match role {
            Role::Controller => CONTROLLER_QUEUE_EVENTS,
            Role::Observer => OBSERVER_QUEUE_EVENTS,
        };
        let (sender, receiver) = bounded(capacity);
        self.next_key += 1;
        let key = self.next_key;
        let alive = Arc::new(AtomicBool::new(true));
        let ended = Arc::new(AtomicBool::new(false));
        let in_flight = Arc::new(AtomicUsize::new(0));
        self.subscribers.push(Subscriber {
            key,
            attachment,
            last_control: 0,
            sender,
            alive: alive.clone(),
            ended: ended.clone(),
            socket: None,
            in_flight: in_flight.clone(),
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            gathered: Vec::new(),
            gathered_bytes: 0,
        });
        (key, PtySubscription { receiver, key, alive, ended, in_flight, commands })
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

    /// Sends `event` to one subscriber (used for its first events, right after [`Self::add`]).
    pub(crate) fn send_to(&mut self, key: u64, event: Event) {
        if let Some(subscriber) = self.subscribers.iter_mut().find(|s| s.key == key) {
            subscriber.deliver(event);
        }
    }

    /// Sends `event` to every subscriber, holding it for those whose channel is full. Removes (and returns)
    /// subscribers that are gone and observers (anyone but `controller`) whose backlog outgrew
    /// [`OBSERVER_BACKLOG_BYTES`].
    pub(crate) fn publish(&mut self, event: &Event, controller: Option<&str>) -> Vec<Subscriber> {
        let mut removed = Vec::new();
        let mut index = 0;
        while index < self.subscribers.len() {
            let subscriber = &mut self.subscribers[index];
            let is_controller = controller == Some(subscriber.attachment.as_str());
            let keep = subscriber.deliver(event.clone()) && (is_controller || !subscriber.over_observer_bound());
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
    pub(crate) fn write_gathered(&mut self) -> Vec<Subscriber> {
        let mut removed = Vec::new();
        let mut index = 0;
        while index < self.subscribers.len() {
            if self.subscribers[index].write_gathered() {
                index += 1;
            } else {
                removed.push(self.subscribers.remove(index));
            }
        }
        removed
    }

    /// Whether output is gathered for any subscriber.
    pub(crate) fn has_gathered(&self) -> bool {
        self.subscribers.iter().any(|s| !s.gathered.is_empty())
    }

    /// The subscribers holding events, each with a sender to wait on.
    pub(crate) fn pending(&self) -> Vec<Pending> {
        let waiting = self.subscribers.iter().filter(|s| !s.backlog.is_empty());
        waiting.map(|s| Pending { key: s.key, sender: s.sender.clone() }).collect()
    }

    /// The oldest event held for `key`, to send now that its channel has room (counted as in flight).
    pub(crate) fn take_pending(&mut self, key: u64) -> Option<Event> {
        let subscriber = self.subscribers.iter_mut().find(|s| s.key == key)?;
        let event = subscriber.backlog.pop_front()?;
        subscriber.backlog_bytes -= event.weight();
        subscriber.in_flight.fetch_add(1, Ordering::AcqRel);
        Some(event)
    }

    /// Gives subscriber `key` its connection's socket, for direct writes of output.
    pub(crate) fn set_socket(&mut self, key: u64, socket: Arc<UnixStream>) {
        if let Some(subscriber) = self.subscribers.iter_mut().find(|s| s.key == key) {
            subscriber.socket = Some(socket);
        }
    }

    /// The subscriber with this attachment id, to look at.
    pub(crate) fn get(&self, attachment: &str) -> Option<&Subscriber> {
        self.subscribers.iter().find(|s| s.attachment == attachment)
    }
}

#[cfg(test)]
mod tests;

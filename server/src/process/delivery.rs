//! Delivery to one destination, whatever it carries: a subscriber's connection (events) or a PTY's writer
//! thread (input). The actor side, [`Delivery`], pushes items; the connection side, [`Recipient`], takes
//! them in batches from a bounded channel, writes them however long that takes, and says so.
//!
//! Behind the channel the actor holds what does not fit yet (its backlog, which it moves into the channel as
//! room appears and never blocks on); how much may be held, and what happens past that, is the caller's policy
//! ([`Held`] says how much is held). An item can also skip the connection: once the destination has been
//! offered as a [`Sink`] and the connection has nothing left to write (no item handed to it and not yet
//! written), the actor writes the item itself without waiting, which saves a thread wake-up per item. What the
//! sink does not take at once (the rest of an item, and everything after it) goes through the channel, in
//! order, so the two writers never interleave. Items for the sink can be gathered and written with one call
//! ([`Delivery::flush`]), up to the delivery's gathering bound, or before anything else is sent.
//!
//! Both sides share one word of state ([`state`]): the count of items handed over and not yet written, and
//! whether either side has let go.

mod recipient;
mod state;
mod subscription;

use std::collections::VecDeque;
use std::fmt;
use std::io::IoSlice;
use std::sync::Arc;

use crossbeam_channel::{SelectedOperation, Sender, TrySendError, bounded};

pub(crate) use recipient::{Batch, Recipient};
use state::Shared;
pub use subscription::ProcessSubscription;

/// The gathering list a delivery keeps allocated between writes, in items (a full batch of live output frames
/// is eight); a longer one, gathered from many small items, is given back after its write.
const KEPT_GATHERING_ITEMS: usize = 16;

/// What a delivery carries.
pub(crate) trait Item: Send + 'static {
    /// The bytes the destination takes for it (for an item whose beginning the actor already wrote, the rest).
    fn bytes(&self) -> &[u8];
    /// Whether the actor may write it to the sink itself; an item the connection must see (`exited`, which ends
    /// a subscription) says no, and always goes through the channel.
    fn direct(&self) -> bool;
    /// This item without the first `written` of its bytes, which the sink took. Only asked of direct items.
    fn rest(self, written: usize) -> Self;
    /// What holding it counts for against a bound: its size, roughly.
    fn weight(&self) -> usize;
    /// Whether nothing follows it: a batch ends with it.
    fn is_last(&self) -> bool;
}

/// A destination the actor writes to itself, without waiting (a socket in `daemon/`, a PTY's master).
pub(crate) trait Sink: fmt::Debug + Send + Sync {
    /// Writes what the destination takes of `slices` now, in order, without waiting; how many bytes that was
    /// (0 when it takes nothing now, or failed: the connection meets the failure itself when it writes).
    fn write_now(&self, slices: &mut [IoSlice<'_>]) -> usize;
}

/// Writes `slices` in order with `write` (one vectored system call that does not wait), again while it takes
/// bytes and after an interruption; stops at the first call that takes nothing or fails. How many bytes were
/// written: what a [`Sink::write_now`] answers.
pub(crate) fn write_while_taken(
    slices: &mut [IoSlice<'_>],
    mut write: impl FnMut(&[IoSlice<'_>]) -> nix::Result<usize>,
) -> usize {
    let mut rest = slices;
    let mut written = 0;
    while !rest.is_empty() {
        match write(rest) {
            Ok(0) => break,
            Ok(n) => {
                written += n;
                IoSlice::advance_slices(&mut rest, n);
            }
            Err(nix::errno::Errno::EINTR) => {}
            // Full (EAGAIN) or broken: the destination's own thread waits for room or meets the failure.
            Err(_) => break,
        }
    }
    written
}

/// What became of a pushed item (or of the gathered items a flush wrote).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Written, handed to the connection, or gathered for the next write.
    Delivered,
    /// Held by the actor until the channel has room.
    Held,
    /// The connection side is gone: nothing more reaches it.
    Gone,
}

impl Pushed {
    /// The outcome of two steps taken in order: gone wins, then held.
    fn and(self, other: Pushed) -> Pushed {
        match (self, other) {
            (Pushed::Gone, _) | (_, Pushed::Gone) => Pushed::Gone,
            (Pushed::Held, _) | (_, Pushed::Held) => Pushed::Held,
            _ => Pushed::Delivered,
        }
    }
}

/// How much a delivery holds behind its channel: items and the sum of their weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Held {
    /// Items held.
    pub(crate) items: usize,
    /// Their weight ([`Item::weight`]).
    pub(crate) bytes: usize,
}

impl Held {
    /// Whether this holds at least `limit`'s items or at least its bytes.
    pub(crate) fn reaches(self, limit: Held) -> bool {
        self.items >= limit.items || self.bytes >= limit.bytes
    }

    /// Whether this holds more than `limit`'s items or more than its bytes.
    pub(crate) fn exceeds(self, limit: Held) -> bool {
        self.items > limit.items || self.bytes > limit.bytes
    }
}

/// A new delivery whose channel holds `capacity` items, and its connection side. Items for the sink are
/// gathered until `gather_bytes` are (0: each is written as it is pushed).
pub(crate) fn channel<T: Item>(capacity: usize, gather_bytes: usize) -> (Delivery<T>, Recipient<T>) {
    let (sender, receiver) = bounded(capacity);
    let shared = Arc::new(Shared::default());
    let delivery = Delivery {
        sender,
        shared: shared.clone(),
        sink: None,
        backlog: VecDeque::new(),
        backlog_bytes: 0,
        gathered: Vec::new(),
        gathered_bytes: 0,
        gather_bytes,
        closed: false,
    };
    (delivery, Recipient::new(receiver, shared))
}

/// The actor's side of one delivery. Dropping it lets the connection go: its channel ends after the items
/// already in it, and a write blocked on a destination that does not read may give up ([`Recipient::is_ended`]);
/// [`Self::close`] ends it without letting go.
#[derive(Debug)]
pub(crate) struct Delivery<T: Item> {
    sender: Sender<T>,
    shared: Arc<Shared>,
    /// The sink, once the connection has offered one (see [`Self::sink`]).
    sink: Option<Arc<dyn Sink>>,
    /// Items waiting for room in the channel, oldest first, and their weight.
    backlog: VecDeque<T>,
    backlog_bytes: usize,
    /// Items gathered for one write to the sink (only while nothing is held or in flight), and their size.
    gathered: Vec<T>,
    gathered_bytes: usize,
    /// How much is gathered before it is written.
    gather_bytes: usize,
    /// Ended by [`Self::close`]: dropping it does not let the connection go.
    closed: bool,
}

impl<T: Item> Delivery<T> {
    /// Delivers `item` behind everything pushed before it: gathered for the sink when the connection has
    /// nothing left to write (written at once when that fills the gathering bound), otherwise handed to the
    /// connection, or held while its channel is full.
    pub(crate) fn push(&mut self, item: T) -> Pushed {
        if item.direct() && self.backlog.is_empty() && self.sink().is_some() && self.shared.in_flight() == 0 {
            self.gathered_bytes += item.bytes().len();
            self.gathered.push(item);
            return if self.gathered_bytes < self.gather_bytes { Pushed::Delivered } else { self.flush() };
        }
        // Whatever was gathered goes first.
        match self.flush() {
            Pushed::Gone => Pushed::Gone,
            flushed => flushed.and(self.send(item)),
        }
    }

    /// Writes the gathered items to the sink with one call, without waiting; what it does not take goes
    /// through the channel, in order.
    pub(crate) fn flush(&mut self) -> Pushed {
        if self.gathered.is_empty() {
            return Pushed::Delivered;
        }
        let mut written = match &self.sink {
            // One item (a PTY's input chunk, a lone frame) needs no list of slices.
            Some(sink) if self.gathered.len() == 1 => sink.write_now(&mut [IoSlice::new(self.gathered[0].bytes())]),
            Some(sink) => {
                let mut slices: Vec<IoSlice<'_>> =
                    self.gathered.iter().map(|item| IoSlice::new(item.bytes())).collect();
                sink.write_now(&mut slices)
            }
            None => 0,
        };
        self.gathered_bytes = 0;
        // Taken out, and put back when small, so the gathering list usually keeps its allocation.
        let mut gathered = std::mem::take(&mut self.gathered);
        let mut pushed = Pushed::Delivered;
        for item in gathered.drain(..) {
            let len = item.bytes().len();
            if written >= len {
                written -= len;
                continue;
            }
            let rest = if written == 0 { item } else { item.rest(written) };
            pushed = pushed.and(self.send(rest));
            written = 0;
        }
        if gathered.capacity() <= KEPT_GATHERING_ITEMS {
            self.gathered = gathered;
        }
        pushed
    }

    /// Whether items are gathered for the sink, waiting for [`Self::flush`].
    pub(crate) fn has_gathered(&self) -> bool {
        !self.gathered.is_empty()
    }

    /// Whether the connection has been handed anything it has not written yet, or anything is held for it: the
    /// sink did not take everything at once.
    pub(crate) fn has_handed_over(&self) -> bool {
        self.shared.in_flight() > 0 || !self.backlog.is_empty()
    }

    /// Whether anything is held behind the channel.
    pub(crate) fn is_behind(&self) -> bool {
        !self.backlog.is_empty()
    }

    /// Whether this holds as much as `limit` (see [`Held::reaches`]): the caller's notion of stalled.
    pub(crate) fn is_stalled(&self, limit: Held) -> bool {
        self.held().reaches(limit)
    }

    /// How much is held behind the channel.
    pub(crate) fn held(&self) -> Held {
        Held { items: self.backlog.len(), bytes: self.backlog_bytes }
    }

    /// While anything is held, the channel's sender, for the actor's wait to wait for room in it; then
    /// [`Self::send_held`].
    pub(crate) fn waiting(&self) -> Option<Sender<T>> {
        (!self.backlog.is_empty()).then(|| self.sender.clone())
    }

    /// Sends the oldest held item through `operation`, which the actor's wait found ready on the sender
    /// [`Self::waiting`] gave. When the connection is gone, everything held is dropped.
    ///
    /// # Panics
    ///
    /// When nothing is held: the wait must have been listed from this delivery with nothing pushed since.
    pub(crate) fn send_held(&mut self, operation: SelectedOperation<'_>, sender: &Sender<T>) -> Pushed {
        let item = self.backlog.pop_front().expect("an item held while the wait was listed");
        self.backlog_bytes -= item.weight();
        self.shared.handed();
        if operation.send(sender, item).is_err() {
            self.backlog.clear();
            self.backlog_bytes = 0;
            return Pushed::Gone;
        }
        Pushed::Delivered
    }

    /// Takes everything held behind the channel, oldest first, after the gathered items were written (what the
    /// sink did not take joins the channel or what is taken). For a destination handed on as it is: what is in
    /// the channel stays for the connection.
    pub(crate) fn take_held(&mut self) -> Vec<T> {
        self.flush();
        self.backlog_bytes = 0;
        self.backlog.drain(..).collect()
    }

    /// Whether the connection side has been dropped.
    pub(crate) fn connection_left(&self) -> bool {
        self.shared.connection_left()
    }

    /// Ends the delivery without letting the connection go: nothing follows what was pushed, and the
    /// connection still writes all of it, however long that takes. Called only when nothing is held.
    pub(crate) fn close(mut self) {
        debug_assert!(self.backlog.is_empty(), "a closed delivery holds nothing");
        self.flush();
        self.closed = true;
    }

    /// The sink, once the connection has offered it.
    fn sink(&mut self) -> Option<&Arc<dyn Sink>> {
        if self.sink.is_none() {
            self.sink = self.shared.sink().cloned();
        }
        self.sink.as_ref()
    }

    /// Hands `item` to the connection, or holds it while the channel is full or anything is held already.
    fn send(&mut self, item: T) -> Pushed {
        if !self.backlog.is_empty() {
            self.hold(item);
            return Pushed::Held;
        }
        self.shared.handed();
        match self.sender.try_send(item) {
            Ok(()) => Pushed::Delivered,
            Err(TrySendError::Disconnected(_)) => Pushed::Gone,
            Err(TrySendError::Full(item)) => {
                self.shared.not_handed();
                self.hold(item);
                Pushed::Held
            }
        }
    }

    fn hold(&mut self, item: T) {
        self.backlog_bytes += item.weight();
        self.backlog.push_back(item);
    }
}

impl<T: Item> Drop for Delivery<T> {
    fn drop(&mut self) {
        if !self.closed {
            self.shared.let_go();
        }
    }
}

/// Raw bytes (a PTY's input), written as they are.
impl Item for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }

    fn direct(&self) -> bool {
        true
    }

    fn rest(mut self, written: usize) -> Vec<u8> {
        self.drain(..written.min(self.len()));
        self
    }

    fn weight(&self) -> usize {
        self.len()
    }

    fn is_last(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests;

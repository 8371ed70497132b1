//! The connection's side of a delivery: it takes what the actor handed it in batches (a batch never goes past
//! the last item), writes each batch however long that takes (its own business: a socket's in `daemon/`, a
//! PTY's in its writer thread), then says it wrote it, which lets the actor write to the sink itself again.
//! Its channel ends after the last item the actor sent; whether the actor let it go is [`Recipient::is_ended`].

use std::io::IoSlice;
use std::sync::Arc;

use crossbeam_channel::Receiver;

use super::state::Shared;
use super::{Item, Sink};

/// The connection's side of one delivery. Dropping it tells the actor side ([`super::Delivery::connection_left`]).
#[derive(Debug)]
pub(crate) struct Recipient<T> {
    receiver: Receiver<T>,
    shared: Arc<Shared>,
}

impl<T: Item> Recipient<T> {
    pub(super) fn new(receiver: Receiver<T>, shared: Arc<Shared>) -> Recipient<T> {
        Recipient { receiver, shared }
    }

    /// The channel, to wait on it together with others. It disconnects once the actor side has ended and every
    /// item it sent was taken.
    pub(crate) fn receiver(&self) -> &Receiver<T> {
        &self.receiver
    }

    /// Offers the actor the destination, to write items itself while this side has nothing left to write. Only
    /// the first offer counts.
    pub(crate) fn offer(&self, sink: Arc<dyn Sink>) {
        self.shared.offer(sink);
    }

    /// `first` and whatever else is queued behind it now, up to `max_bytes` and never past the last item.
    pub(crate) fn batch(&self, first: T, max_bytes: usize) -> Batch<T> {
        let mut size = first.bytes().len();
        let mut last = first.is_last();
        let mut items = vec![first];
        while size < max_bytes && !last {
            let Ok(item) = self.receiver.try_recv() else { break };
            size += item.bytes().len();
            last = item.is_last();
            items.push(item);
        }
        Batch { items, last }
    }

    /// Says that `count` items taken from the channel have been written whole (or dropped for good).
    pub(crate) fn written(&self, count: usize) {
        self.shared.written(count);
    }

    /// Whether the actor side let this connection go (an observer that fell behind, a terminal that stopped):
    /// nothing follows what is already in the channel, and a write that cannot finish may give up.
    pub(crate) fn is_ended(&self) -> bool {
        self.shared.is_let_go()
    }

    /// Tells the actor side that this side is gone (dropping it does too).
    pub(crate) fn leave(&self) {
        self.shared.connection_leaves();
    }

    /// Counts one item as handed over and not yet written, as if the connection held it (tests of the actor,
    /// which run no connection).
    #[cfg(test)]
    pub(crate) fn pretend_in_flight(&self) {
        self.shared.handed();
    }
}

impl<T> Drop for Recipient<T> {
    fn drop(&mut self) {
        self.shared.connection_leaves();
    }
}

/// Items taken together, in order, to be written with one call.
#[derive(Debug)]
pub(crate) struct Batch<T> {
    items: Vec<T>,
    /// Whether the last item is the last of the delivery.
    last: bool,
}

impl<T: Item> Batch<T> {
    /// The items' bytes, in order, for one vectored write.
    pub(crate) fn slices(&self) -> Vec<IoSlice<'_>> {
        self.items.iter().map(|item| IoSlice::new(item.bytes())).collect()
    }

    /// How many items it holds.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether it ends with the delivery's last item: nothing follows it.
    pub(crate) fn is_last(&self) -> bool {
        self.last
    }

    /// The items.
    #[cfg(test)]
    pub(crate) fn items(&self) -> &[T] {
        &self.items
    }
}

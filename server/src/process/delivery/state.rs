//! The state both sides of one delivery share, in one atomic word: the items handed to the connection and not
//! yet written (the low bits), whether the connection side has been dropped, and whether the actor side has let
//! it go (two high bits). One word, so the actor's question on every push ("may I write it myself?") is one
//! load, and each side's step is one atomic operation. Beside it, the sink the connection offers, set once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use super::Sink;

/// Set once the connection side has been dropped.
const CONNECTION_LEFT: usize = 1 << (usize::BITS - 1);

/// Set once the actor side let the connection go (dropped without [`super::Delivery::close`]).
const LET_GO: usize = 1 << (usize::BITS - 2);

/// The bits that count items in flight. Never reached: a channel's capacity bounds them.
const IN_FLIGHT: usize = LET_GO - 1;

/// The shared word, and the sink.
#[derive(Debug, Default)]
pub(super) struct Shared {
    word: AtomicUsize,
    sink: OnceLock<Arc<dyn Sink>>,
}

impl Shared {
    /// Items handed to the connection and not yet written: while there is any, the actor writes nothing itself.
    pub(super) fn in_flight(&self) -> usize {
        self.word.load(Ordering::Acquire) & IN_FLIGHT
    }

    /// The actor is about to hand the connection an item (counted first, so the connection can never write it
    /// before it is counted).
    pub(super) fn handed(&self) {
        self.word.fetch_add(1, Ordering::AcqRel);
    }

    /// The item counted by [`Self::handed`] did not go after all (the channel was full).
    pub(super) fn not_handed(&self) {
        self.word.fetch_sub(1, Ordering::AcqRel);
    }

    /// The connection wrote `count` items it was handed (or dropped them, when its destination is gone).
    pub(super) fn written(&self, count: usize) {
        let before = self.word.fetch_sub(count, Ordering::Release);
        debug_assert!(before & IN_FLIGHT >= count, "more written than was handed over");
    }

    /// The connection side was dropped.
    pub(super) fn connection_leaves(&self) {
        self.word.fetch_or(CONNECTION_LEFT, Ordering::Release);
    }

    /// Whether the connection side has been dropped.
    pub(super) fn connection_left(&self) -> bool {
        self.word.load(Ordering::Acquire) & CONNECTION_LEFT != 0
    }

    /// The actor side let the connection go.
    pub(super) fn let_go(&self) {
        self.word.fetch_or(LET_GO, Ordering::Release);
    }

    /// Whether the actor side let the connection go.
    pub(super) fn is_let_go(&self) -> bool {
        self.word.load(Ordering::Acquire) & LET_GO != 0
    }

    /// The sink the connection offered, if it has.
    pub(super) fn sink(&self) -> Option<&Arc<dyn Sink>> {
        self.sink.get()
    }

    /// Offers the sink; only the first offer counts.
    pub(super) fn offer(&self, sink: Arc<dyn Sink>) {
        let _ = self.sink.set(sink);
    }
}

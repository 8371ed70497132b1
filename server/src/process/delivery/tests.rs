//! The delivery type driven with an in-memory writer as its sink (the socket's sink is tested with a socket pair
//! in `daemon/serving/subscription/tests.rs`): a partial write then the rest through the connection, no interleaving
//! while the connection holds anything, gathering, holding while the channel is full, and the end, seen once.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crossbeam_channel::{Select, TryRecvError};

use super::*;

/// An item of these tests: its bytes, and whether it may be written directly or ends the delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    bytes: Vec<u8>,
    direct: bool,
    last: bool,
}

fn direct(bytes: &[u8]) -> Piece {
    Piece { bytes: bytes.to_vec(), direct: true, last: false }
}

/// An item the connection must see (a JSON event's part).
fn message(bytes: &[u8]) -> Piece {
    Piece { bytes: bytes.to_vec(), direct: false, last: false }
}

fn last(bytes: &[u8]) -> Piece {
    Piece { bytes: bytes.to_vec(), direct: false, last: true }
}

impl Item for Piece {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn direct(&self) -> bool {
        self.direct
    }

    fn rest(self, written: usize) -> Piece {
        Piece { bytes: self.bytes[written..].to_vec(), ..self }
    }

    fn weight(&self) -> usize {
        self.bytes.len()
    }

    fn is_last(&self) -> bool {
        self.last
    }
}

/// An in-memory destination that takes at most `room` bytes more at once (as a full socket or PTY would),
/// and counts the calls.
#[derive(Debug, Default)]
struct Memory {
    written: Mutex<Vec<u8>>,
    room: AtomicUsize,
    calls: AtomicUsize,
}

impl Memory {
    fn with_room(room: usize) -> Arc<Memory> {
        Arc::new(Memory { room: AtomicUsize::new(room), ..Memory::default() })
    }

    fn bytes(&self) -> Vec<u8> {
        self.written.lock().unwrap().clone()
    }

    /// What the connection writes, blocking: taken whatever the room.
    fn write_blocking(&self, batch: &Batch<Piece>) {
        for slice in batch.slices() {
            self.written.lock().unwrap().extend_from_slice(&slice);
        }
    }
}

impl Sink for Memory {
    fn write_now(&self, slices: &mut [IoSlice<'_>]) -> usize {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let mut written = self.written.lock().unwrap();
        let mut taken = 0;
        for slice in slices.iter() {
            let room = self.room.load(Ordering::Relaxed);
            let n = slice.len().min(room);
            written.extend_from_slice(&slice[..n]);
            self.room.fetch_sub(n, Ordering::Relaxed);
            taken += n;
            if n < slice.len() {
                break;
            }
        }
        taken
    }
}

/// A delivery whose connection offered `sink`, each item written as it is pushed.
fn offered(capacity: usize, sink: &Arc<Memory>) -> (Delivery<Piece>, Recipient<Piece>) {
    let (delivery, recipient) = channel(capacity, 0);
    recipient.offer(sink.clone());
    (delivery, recipient)
}

/// What the connection would write next: the queued items as one batch, written, then said to be.
fn connection_writes(recipient: &Recipient<Piece>, sink: &Memory) -> Batch<Piece> {
    let first = recipient.receiver().try_recv().expect("an item handed to the connection");
    let batch = recipient.batch(first, usize::MAX);
    sink.write_blocking(&batch);
    recipient.written(batch.len());
    batch
}

#[test]
fn an_item_goes_straight_to_the_sink_while_the_connection_holds_nothing() {
    let sink = Memory::with_room(usize::MAX);
    let (mut delivery, recipient) = offered(8, &sink);
    assert_eq!(delivery.push(direct(b"typed")), Pushed::Delivered);
    assert_eq!(sink.bytes(), b"typed");
    assert!(recipient.receiver().is_empty(), "the connection had nothing to do");
}

#[test]
fn a_partial_write_leaves_the_rest_to_the_connection_then_everything_follows_it() {
    let sink = Memory::with_room(3);
    let (mut delivery, recipient) = offered(8, &sink);
    delivery.push(direct(b"hello"));
    assert_eq!(sink.bytes(), b"hel", "the sink took what it had room for");
    // The rest is the connection's; so is everything after it, however much room the sink has now.
    sink.room.store(usize::MAX, Ordering::Relaxed);
    delivery.push(direct(b" world"));
    assert_eq!(sink.bytes(), b"hel");
    let batch = connection_writes(&recipient, &sink);
    assert_eq!(batch.items(), [direct(b"lo"), direct(b" world")]);
    // Written: the actor writes directly again.
    delivery.push(direct(b"!"));
    assert!(recipient.receiver().is_empty());
    assert_eq!(sink.bytes(), b"hello world!");
}

#[test]
fn nothing_is_written_directly_while_the_connection_holds_an_item() {
    let sink = Memory::with_room(usize::MAX);
    let (mut delivery, recipient) = offered(8, &sink);
    // An item the connection must see goes through it; until it says it wrote it, direct items follow it there.
    delivery.push(message(b"<event>"));
    for byte in b"abc" {
        delivery.push(direct(&[*byte]));
    }
    assert!(sink.bytes().is_empty(), "no direct write while the connection holds anything");
    assert_eq!(sink.calls.load(Ordering::Relaxed), 0);
    let batch = connection_writes(&recipient, &sink);
    assert_eq!(batch.len(), 4, "one batch, in order");
    assert_eq!(sink.bytes(), b"<event>abc");
    delivery.push(direct(b"d"));
    assert_eq!(sink.bytes(), b"<event>abcd", "direct again once written");
    assert!(recipient.receiver().is_empty());
}

#[test]
fn items_are_gathered_up_to_the_bound_and_written_with_one_call_in_order() {
    let sink = Memory::with_room(usize::MAX);
    let (mut delivery, recipient) = channel(8, 10);
    recipient.offer(sink.clone());
    delivery.push(direct(b"1234"));
    delivery.push(direct(b"5678"));
    assert!(delivery.has_gathered());
    assert_eq!(sink.calls.load(Ordering::Relaxed), 0, "nothing written while gathering");
    // The bound is reached: everything gathered goes at once.
    delivery.push(direct(b"90"));
    assert!(!delivery.has_gathered());
    assert_eq!((sink.bytes(), sink.calls.load(Ordering::Relaxed)), (b"1234567890".to_vec(), 1));
    // Short of the bound it stays gathered until flushed, or until another item is due.
    delivery.push(direct(b"ab"));
    assert_eq!(delivery.flush(), Pushed::Delivered);
    delivery.push(direct(b"cd"));
    delivery.push(message(b"<event>"));
    assert_eq!(sink.bytes(), b"1234567890abcd", "the gathered output first");
    assert_eq!(recipient.receiver().try_recv(), Ok(message(b"<event>")), "then the event, through the connection");
}

#[test]
fn items_are_held_while_the_channel_is_full_and_move_in_as_room_appears() {
    // No sink offered: everything goes through the connection.
    let (mut delivery, recipient) = channel(2, 0);
    let pieces: Vec<Piece> = (0..5u8).map(|n| direct(&[n; 10])).collect();
    let pushed: Vec<Pushed> = pieces.iter().map(|piece| delivery.push(piece.clone())).collect();
    assert_eq!(pushed, [Pushed::Delivered, Pushed::Delivered, Pushed::Held, Pushed::Held, Pushed::Held]);
    assert!(delivery.is_behind());
    assert_eq!(delivery.held(), Held { items: 3, bytes: 30 });
    assert!(delivery.is_stalled(Held { items: 3, bytes: usize::MAX }));
    assert!(!delivery.is_stalled(Held { items: 4, bytes: 31 }));
    assert!(delivery.held().exceeds(Held { items: 2, bytes: usize::MAX }));
    assert!(!delivery.held().exceeds(Held { items: 3, bytes: 30 }));
    let mut received = Vec::new();
    while delivery.is_behind() {
        received.push(recipient.receiver().recv_timeout(Duration::from_secs(5)).expect("an item"));
        // As the actor's wait does: wait for room, then send the oldest held item.
        let sender = delivery.waiting().expect("a sender while anything is held");
        let mut select = Select::new();
        select.send(&sender);
        let operation = select.select_timeout(Duration::from_secs(5)).expect("room");
        assert_eq!(delivery.send_held(operation, &sender), Pushed::Delivered);
    }
    assert!(delivery.waiting().is_none());
    received.extend(recipient.receiver().try_iter());
    assert_eq!(received, pieces, "every item, in order");
}

#[test]
fn the_end_is_seen_once_and_closing_does_not_let_the_connection_go() {
    let (mut delivery, recipient) = channel(4, 0);
    delivery.push(message(b"attached"));
    delivery.push(last(b"exited"));
    delivery.close();
    assert!(!recipient.is_ended(), "closed, not let go: a slow client still gets everything");
    let first = recipient.receiver().try_recv().expect("attached");
    let batch = recipient.batch(first, usize::MAX);
    assert!(batch.is_last());
    assert_eq!(batch.items(), [message(b"attached"), last(b"exited")]);
    recipient.written(batch.len());
    // Then the channel says the end, and nothing else.
    assert_eq!(recipient.receiver().try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn a_batch_never_goes_past_the_last_item() {
    let (mut delivery, recipient) = channel(4, 0);
    delivery.push(message(b"a"));
    delivery.push(last(b"end"));
    delivery.push(message(b"after"));
    let first = recipient.receiver().try_recv().expect("a");
    let batch = recipient.batch(first, usize::MAX);
    assert!(batch.is_last());
    assert_eq!(batch.len(), 2);
    assert_eq!(recipient.receiver().len(), 1, "what follows the end is not taken with it");
}

#[test]
fn a_batch_stops_at_its_size() {
    let (mut delivery, recipient) = channel(8, 0);
    for _ in 0..4 {
        delivery.push(message(&[0; 10]));
    }
    let first = recipient.receiver().try_recv().expect("an item");
    let batch = recipient.batch(first, 25);
    assert_eq!((batch.len(), batch.is_last()), (3, false));
}

#[test]
fn letting_go_ends_the_connection_after_what_it_was_handed() {
    let (mut delivery, recipient) = channel(4, 0);
    delivery.push(message(b"queued"));
    assert!(!recipient.is_ended());
    drop(delivery);
    assert!(recipient.is_ended(), "a blocked write may give up");
    assert_eq!(recipient.receiver().try_recv(), Ok(message(b"queued")));
    assert_eq!(recipient.receiver().try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn a_connection_that_left_is_gone() {
    let sink = Memory::with_room(usize::MAX);
    let (mut delivery, recipient) = offered(4, &sink);
    delivery.push(message(b"in flight"));
    assert!(!delivery.connection_left());
    drop(recipient);
    assert!(delivery.connection_left());
    assert_eq!(delivery.push(direct(b"more")), Pushed::Gone);
    assert!(sink.bytes().is_empty());
}

#[test]
fn a_connection_gone_while_items_are_held_drops_them() {
    let (mut delivery, recipient) = channel(1, 0);
    delivery.push(direct(b"a"));
    assert_eq!(delivery.push(direct(b"b")), Pushed::Held);
    let sender = delivery.waiting().expect("held");
    drop(recipient);
    let mut select = Select::new();
    select.send(&sender);
    let operation = select.select_timeout(Duration::from_secs(5)).expect("ready: disconnected");
    assert_eq!(delivery.send_held(operation, &sender), Pushed::Gone);
    assert!(!delivery.is_behind(), "nothing held for a connection that is gone");
}

#[test]
fn input_bytes_are_written_then_their_rest_queued() {
    let sink = Memory::with_room(2);
    let (mut delivery, recipient) = channel::<Vec<u8>>(4, 0);
    recipient.offer(sink.clone());
    delivery.push(b"abcd".to_vec());
    assert_eq!(sink.bytes(), b"ab");
    assert_eq!(recipient.receiver().try_recv(), Ok(b"cd".to_vec()));
    assert_eq!(delivery.held(), Held { items: 0, bytes: 0 });
}

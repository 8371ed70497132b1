//! The actor's one wait: a `Select` over everything that can happen next, each operation named by what it is
//! (a [`Wake`]), with an optional deadline that an echo's batch needs met to the microsecond.

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Select, SelectedOperation, Sender};

/// How long before the deadline of a batch that answers client input the actor's wait ends, to poll until the
/// deadline itself (`Coalescer::wants_precise_flush`): waking from the timer took 24-45 µs here (p50 33),
/// which every echo paid on top of the coalescing window. At most this much polling per `input` request.
pub const PRECISE_WAKE_MARGIN: Duration = Duration::from_micros(60);

/// An operation the actor's one wait can find ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wake {
    /// The stop channel: the terminal is being terminated.
    Stop,
    /// An upgrade's capture: the actor's last step.
    Capture,
    /// The reader's channel.
    Output,
    /// The command queue.
    Command,
    /// The child's end, from the wait thread.
    Exit,
    /// A turn at output processing, for the held chunk.
    Turn,
    /// Room in the writer's queue for the oldest pending chunk.
    Writer,
    /// Room in the channel of the `n`th subscriber that has events held back.
    Delivery(usize),
    /// The rebuilder handed a restored terminal's emulator (`catch_up.rs`).
    Rebuilt,
}

/// When a wait ends if nothing is ready first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Deadline {
    /// It waits for an operation, however long.
    Never,
    /// At this instant, or when the timer wakes the thread after it (tens of µs late here).
    At(Instant),
    /// At this instant, to the microsecond: the wait ends [`PRECISE_WAKE_MARGIN`] before it, and the rest is
    /// spent polling the operations (the batch that answers client input).
    Exact(Instant),
}

/// One `Select` and, for each operation added to it, what it is: the selected operation's index is looked
/// up, never computed.
pub(super) struct Waits<'a> {
    select: Select<'a>,
    ready: Vec<Wake>,
}

impl<'a> Waits<'a> {
    pub(super) fn new() -> Waits<'a> {
        Waits { select: Select::new(), ready: Vec::new() }
    }

    pub(super) fn recv<T>(&mut self, receiver: &'a Receiver<T>, ready: Wake) {
        self.select.recv(receiver);
        self.ready.push(ready);
    }

    pub(super) fn send<T>(&mut self, sender: &'a Sender<T>, ready: Wake) {
        self.select.send(sender);
        self.ready.push(ready);
    }

    /// Waits for one operation, until `deadline` (`None` then, never earlier).
    pub(super) fn select(mut self, deadline: Deadline) -> Option<(Wake, SelectedOperation<'a>)> {
        let operation = match deadline {
            Deadline::Never => self.select.select(),
            Deadline::At(deadline) => self.select.select_deadline(deadline).ok()?,
            Deadline::Exact(deadline) => {
                let wake = deadline.checked_sub(PRECISE_WAKE_MARGIN).unwrap_or(deadline);
                match self.select.select_deadline(wake) {
                    Ok(operation) => operation,
                    Err(_) => loop {
                        if let Ok(operation) = self.select.try_select() {
                            break operation;
                        }
                        if Instant::now() >= deadline {
                            return None;
                        }
                        std::hint::spin_loop();
                    },
                }
            }
        };
        Some((self.ready[operation.index()], operation))
    }
}

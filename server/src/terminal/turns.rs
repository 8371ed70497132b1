//! Turns at output processing: a daemon-wide bound on how many terminal actors feed output to their emulators at
//! the same time (issue 26).
//!
//! Without it, 200 terminals printing without pause meant 200 actors, 200 readers and 200 children all wanting
//! the CPU at once, and every request thread of the daemon waited its turn among some 600 runnable threads
//! (`ping` p99 over a second on 2 cores). With it, an actor takes a turn before it processes a chunk of output
//! and gives it back once it has caught up with its reader or used [`TURN_OUTPUT_BYTES`]. The actors without a
//! turn wait for one (still answering requests and stops meanwhile), their readers fill their queues and wait,
//! and their children block on the full PTY: only the turns' holders stay runnable. The output is delayed,
//! never dropped, and the turns go round in the order they were asked for, so every busy terminal advances.
//!
//! A turn is a token in a bounded channel: taking one is a receive (part of the actor's one wait), giving it
//! back is a send done by [`Turn`]'s drop, so no path out of the actor, a panic included, keeps a token.

use std::num::NonZeroUsize;

use crossbeam_channel::{Receiver, Sender, bounded};

/// The output one turn may process before the actor gives it back (eight reads of the PTY): small enough that
/// a terminal waiting for a turn behind 200 busy ones waits milliseconds, large enough that taking and giving
/// back a turn costs nothing measurable beside the emulator's work.
pub const TURN_OUTPUT_BYTES: usize = 64 * 1024;

/// The most turns a daemon hands out, however many CPUs it may use.
pub const MAX_OUTPUT_TURNS: usize = 64;

/// The daemon's turns at output processing (cheap to clone: every clone hands out the same turns).
#[derive(Debug, Clone)]
pub struct Turns {
    take: Receiver<()>,
    give: Sender<()>,
}

impl Turns {
    /// `count` turns (at least one, at most [`MAX_OUTPUT_TURNS`]).
    pub fn new(count: usize) -> Turns {
        let count = count.clamp(1, MAX_OUTPUT_TURNS);
        let (give, take) = bounded(count);
        for _ in 0..count {
            // Room for exactly `count` tokens: never full here.
            let _ = give.try_send(());
        }
        Turns { take, give }
    }

    /// One turn per CPU the daemon may run on: the emulators can use every CPU, and no more threads compete
    /// for them than there are.
    pub fn per_cpu() -> Turns {
        Turns::new(std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
    }

    /// The channel a turn is taken from (a receive is part of the actor's wait).
    pub(crate) fn waiting(&self) -> &Receiver<()> {
        &self.take
    }

    /// The turn whose token was just received from [`Self::waiting`].
    pub(crate) fn taken(&self) -> Turn {
        Turn { give: self.give.clone(), bytes: 0 }
    }

    /// Turns not held by anyone now.
    #[cfg(test)]
    pub(crate) fn free(&self) -> usize {
        self.take.len()
    }
}

impl Default for Turns {
    fn default() -> Self {
        Turns::per_cpu()
    }
}

/// A turn held by one actor; dropping it gives it back.
#[derive(Debug)]
pub(crate) struct Turn {
    give: Sender<()>,
    /// Output processed during this turn.
    pub(crate) bytes: usize,
}

impl Turn {
    /// Whether the turn's share of output is used up.
    pub(crate) fn used_up(&self) -> bool {
        self.bytes >= TURN_OUTPUT_BYTES
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        // At most as many turns are out as the channel has room for, so this never finds it full.
        let _ = self.give.try_send(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_bounded_and_come_back_when_dropped() {
        let turns = Turns::new(2);
        assert_eq!(turns.free(), 2);
        let first = turns.waiting().try_recv().map(|()| turns.taken()).expect("a first turn");
        let _second = turns.waiting().try_recv().map(|()| turns.taken()).expect("a second turn");
        assert!(turns.waiting().try_recv().is_err(), "a third turn while two are held");
        drop(first);
        assert_eq!(turns.free(), 1);
        assert!(turns.waiting().try_recv().is_ok(), "the dropped turn is taken again");
    }

    #[test]
    fn the_count_is_clamped() {
        assert_eq!(Turns::new(0).free(), 1);
        assert_eq!(Turns::new(10_000).free(), MAX_OUTPUT_TURNS);
    }

    #[test]
    fn a_turn_is_used_up_at_its_share() {
        let turns = Turns::new(1);
        let mut turn = turns.waiting().try_recv().map(|()| turns.taken()).expect("a turn");
        turn.bytes = TURN_OUTPUT_BYTES - 1;
        assert!(!turn.used_up());
        turn.bytes += 1;
        assert!(turn.used_up());
    }
}

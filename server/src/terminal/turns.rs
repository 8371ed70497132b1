//! Turns at output processing: a daemon-wide bound on how many terminal actors feed output to their emulators at
//! the same time (issue 26).
//!
//! Without it, 200 terminals printing without pause meant 200 actors, 200 readers and 200 children all wanting
//! the CPU at once, and every request thread of the daemon waited its turn among some 600 runnable threads
//! (`ping` p99 over a second on 2 cores). With it, an actor takes a turn before it processes a chunk of output
//! and gives it back once it has caught up with its reader or used [`TURN_OUTPUT_BYTES`]. The actors without a
//! turn wait for one (still answering requests and stops meanwhile), their readers fill their queues and wait,
//! and their children block on the full PTY: only the turns' holders stay runnable. The output is delayed,
//! never dropped, and the turns go round in about the order they were asked for (an actor woken meanwhile by a
//! request or a delivery asks again, behind the others), so every busy terminal advances.
//!
//! Waiting for a turn costs a terminal that was quiet the time of the turns ahead of it, which an echo would
//! pay on every keystroke (16 printing terminals made the echo bench's p50 ten times slower). So an actor that
//! has caught up with its reader may process a chunk without a turn while its [`Allowance`] lasts: a few KiB
//! now and then, which an interactive terminal never exceeds and a flood uses up at once.
//!
//! A turn is a token in a bounded channel: taking one is a receive (part of the actor's one wait), giving it
//! back is a send done by [`Turn`]'s drop, so no path out of the actor, a panic included, keeps a token.

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};

/// The output one turn may process before the actor gives it back (eight reads of the PTY): small enough that
/// a terminal waiting for a turn behind 200 busy ones waits milliseconds, large enough that taking and giving
/// back a turn costs nothing measurable beside the emulator's work.
pub const TURN_OUTPUT_BYTES: usize = 64 * 1024;

/// The most turns a daemon hands out, however many CPUs it may use.
pub const MAX_OUTPUT_TURNS: usize = 64;

/// The most output a terminal that has caught up with its reader processes without a turn at once: enough for
/// what a command typed at a prompt usually prints.
pub const FREE_OUTPUT_BURST_BYTES: usize = 16 * 1024;

/// How fast a terminal's allowance of output without a turn comes back, in bytes per second.
pub const FREE_OUTPUT_BYTES_PER_SECOND: usize = 16 * 1024;

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

    /// One turn fewer than the CPUs the daemon may run on (one on a machine with one or two): one CPU is always
    /// left for requests, quiet terminals and the busy terminals' own readers and children. One turn per CPU was
    /// measured first (issue 26, 200 terminals printing on 2 CPUs): `list` p99 69-110 ms against 27-35 ms with
    /// one turn, for 0.89x the aggregate output of 16 and 64 printing terminals (the same at 256).
    pub fn sized_to_machine() -> Turns {
        let cpus = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        Turns::new(cpus.saturating_sub(1))
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
        Turns::sized_to_machine()
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

/// One terminal's allowance of output processed without a turn: a bucket of [`FREE_OUTPUT_BURST_BYTES`] that
/// refills at [`FREE_OUTPUT_BYTES_PER_SECOND`].
#[derive(Debug)]
pub(crate) struct Allowance {
    bytes: usize,
    at: Instant,
}

impl Allowance {
    /// A full allowance.
    pub(crate) fn new(now: Instant) -> Allowance {
        Allowance { bytes: FREE_OUTPUT_BURST_BYTES, at: now }
    }

    /// Takes `len` bytes from the allowance if it has them (after refilling it for the time since it was last
    /// refilled); false leaves it as it was.
    pub(crate) fn take(&mut self, len: usize, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.at);
        let refill = elapsed.as_secs_f64() * FREE_OUTPUT_BYTES_PER_SECOND as f64;
        if refill >= 1.0 {
            self.bytes = (self.bytes.saturating_add(refill as usize)).min(FREE_OUTPUT_BURST_BYTES);
            // Whole bytes only: the remainder of the refill is kept by moving the clock by what was counted.
            self.at = if self.bytes == FREE_OUTPUT_BURST_BYTES {
                now
            } else {
                self.at + Duration::from_secs_f64(refill.floor() / FREE_OUTPUT_BYTES_PER_SECOND as f64)
            };
        }
        if len > self.bytes {
            return false;
        }
        self.bytes -= len;
        true
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

    #[test]
    fn the_allowance_lasts_a_burst_and_comes_back_with_time() {
        let start = Instant::now();
        let mut allowance = Allowance::new(start);
        assert!(allowance.take(FREE_OUTPUT_BURST_BYTES - 100, start));
        assert!(!allowance.take(200, start), "over the burst");
        assert!(allowance.take(100, start), "what is left");
        assert!(!allowance.take(1, start), "used up");
        // Refilled at its rate, never over the burst.
        let half_second = start + Duration::from_millis(500);
        assert!(allowance.take(FREE_OUTPUT_BYTES_PER_SECOND / 2, half_second));
        assert!(!allowance.take(1024, half_second));
        let much_later = start + Duration::from_secs(3600);
        assert!(!allowance.take(FREE_OUTPUT_BURST_BYTES + 1, much_later), "the burst is the most");
        assert!(allowance.take(FREE_OUTPUT_BURST_BYTES, much_later));
    }

    #[test]
    fn small_refills_add_up() {
        let start = Instant::now();
        let mut allowance = Allowance::new(start);
        assert!(allowance.take(FREE_OUTPUT_BURST_BYTES, start));
        // A thousand looks a millisecond apart refill one second's worth in all, not less.
        let mut now = start;
        for _ in 0..1000 {
            now += Duration::from_millis(1);
            allowance.take(0, now);
        }
        assert!(allowance.take(FREE_OUTPUT_BYTES_PER_SECOND - 64, now), "refills were lost");
    }
}

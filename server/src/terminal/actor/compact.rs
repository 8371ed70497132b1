//! Giving a quiet terminal's memory back (issue 31): once a terminal has neither printed nor had its history
//! read for [`COMPACT_AFTER`], its actor compresses the emulator's history (libghostty-vt's page compression,
//! `vt/src/compress.rs`) one short step at a time, then its replay ring one block at a time (`replay/blocks.rs`,
//! lz4), and stops until the terminal does something again. Its last step gives back the actor's own stack pages
//! below its frame (`vt::release_stack_below_caller`: libghostty's parser's buffer) and the allocator's free
//! memory.
//!
//! A step is taken only when the actor's wait finds nothing else ready (its deadline is "now" while steps
//! remain), so output, requests and deliveries always go first and wait at most one step: one emulator page
//! (0.1-0.8 ms measured here) or one ring block (64 KiB, 70-160 µs). Never the library's FULL pass on the
//! actor (13 ms for 10,000 colourful lines).
//!
//! What re-arms the delay: output (the emulator's own activity token moves with it, and so does the ring), and
//! the actor's own reads and changes of the emulator (snapshot, rows, resize, a screen prepared for an upgrade:
//! everything that goes through `Actor::emulator`). Reads restore the pages they touch and the library's token
//! does not move for them, so without the re-arm a terminal read once would keep its history uncompressed until
//! its next output. The delay keeps an attach burst (checkpoint after checkpoint) from alternating between
//! compressing and restoring.

use std::time::{Duration, Instant};

use opencode_pty_vt::{Compression, CompressionMode};

use super::Actor;

/// How long a terminal must stay quiet (no output, no read of its history) before its memory is compressed,
/// unless the daemon's `--compress-after-ms` says otherwise: long enough that a pause between two commands, or
/// an attach and its first requests, does not start a pass that the next output or read would undo.
pub const COMPACT_AFTER: Duration = Duration::from_secs(2);

/// The most steps one pass takes before it stops as if complete: the library ends a pass after one step per
/// page of history (about 20 for 10,000 lines, a few hundred for `MAX_SCROLLBACK_LINES`), so this is only a
/// bound against a pass that would never end, which would keep the actor stepping without a wait.
pub const MAX_COMPACT_STEPS: u32 = 4096;

/// Where a terminal stands with compressing its memory.
#[derive(Debug)]
pub(super) struct Compaction {
    /// The quiet delay; `None` when the daemon compresses nothing.
    after: Option<Duration>,
    state: State,
    /// Whether the emulator's history can be compressed here (the library said `Unsupported`, or failed, once).
    emulator_supported: bool,
    /// Steps taken in the pass under way.
    pass_steps: u32,
    /// Steps taken, and passes finished, since the terminal started (for tests and the memory report).
    counts: CompactionCounts,
    /// A pass (or the trim after it) has just ended: the actor's next wait gives back its stack below the
    /// wait's frame first ([`Actor::release_stack`]).
    release_stack: bool,
}

/// What a terminal's compression did (`Command::Compaction`, for tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CompactionCounts {
    /// Incremental steps of the emulator's history.
    pub(crate) emulator_steps: u64,
    /// Calls to the replay ring's compression step (one block each, the last finding nothing left).
    pub(crate) ring_steps: u64,
    /// What the ring held at the end of the last pass, in bytes.
    pub(crate) ring_bytes: usize,
    /// Passes that ran to their end (everything compressible was compressed) without being interrupted.
    pub(crate) passes: u64,
    /// Whether the terminal is compressed now: a pass ended and nothing has happened since.
    pub(crate) compressed: bool,
    /// The bytes of the actor's stack the last pass gave back (`vt::release_stack_below_caller`'s range).
    pub(crate) stack_released: usize,
    /// The actor's thread id, as the answer gives it (for tests that look at its stack); 0 in the counts kept.
    pub(crate) thread: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for the terminal to stay quiet until then.
    Until(Instant),
    /// Quiet long enough: steps remain, of this part.
    Stepping(Part),
    /// Compressed; the allocator's trim was refused (another terminal's ran within `TRIM_INTERVAL`, perhaps
    /// before this pass freed its memory): asked again then, once.
    TrimAt(Instant),
    /// Nothing left to compress until the terminal does something (or compression is off).
    Idle,
}

/// What is being compressed: the emulator's history first, then the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Emulator,
    Ring,
}

impl Compaction {
    /// A terminal that starts now; `after` as [`Compaction::after`].
    pub(super) fn new(after: Option<Duration>, now: Instant) -> Compaction {
        let mut compaction = Compaction {
            after,
            state: State::Idle,
            emulator_supported: true,
            pass_steps: 0,
            counts: CompactionCounts::default(),
            release_stack: false,
        };
        compaction.touched(now);
        compaction
    }

    /// The terminal did something at `now` (output, a read or change of its emulator): the quiet delay starts
    /// again, and a pass under way stops (the next one finds what this one did already done, at no cost).
    pub(super) fn touched(&mut self, now: Instant) {
        self.counts.compressed = false;
        self.pass_steps = 0;
        self.state = match self.after {
            Some(after) => State::Until(now + after),
            None => State::Idle,
        };
    }

    /// When the actor's wait should end for this, if it should: the end of the quiet delay, or now while steps
    /// remain (so a step is taken only when nothing else is ready).
    pub(super) fn deadline(&self, now: Instant) -> Option<Instant> {
        match self.state {
            State::Until(at) | State::TrimAt(at) => Some(at),
            State::Stepping(_) => Some(now),
            State::Idle => None,
        }
    }

    /// Counts one more step of the pass under way; whether the pass may take it ([`MAX_COMPACT_STEPS`]).
    fn step_allowed(&mut self) -> bool {
        self.pass_steps += 1;
        self.pass_steps <= MAX_COMPACT_STEPS
    }

    #[cfg(test)]
    pub(super) fn counts(&self) -> CompactionCounts {
        self.counts
    }
}

impl Actor {
    /// After a pass, right before the actor waits: gives back its stack pages below the wait's frame
    /// (`vt::release_stack_below_caller`), the pages the parser's 16 KiB buffer, the pass and the trim left
    /// resident; only what the wait itself touches comes back (about 20 KiB of an idle terminal's memory; the
    /// next output touches them again). Inlined into the wait, so that nothing lies between.
    #[inline(always)]
    pub(super) fn release_stack(&mut self) {
        if std::mem::take(&mut self.compaction.release_stack) {
            self.compaction.counts.stack_released = opencode_pty_vt::release_stack_below_caller();
        }
    }

    /// Whether the terminal's compression has a step or a delay due at `now`; if so, takes one step.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn compact_if_due(&mut self, now: Instant) {
        let state = self.compaction.state;
        if matches!(state, State::Until(at) if now >= at) || matches!(state, State::Stepping(_)) {
            // Output held back (waiting for a turn, or for a controller that is behind) is not quiet: the
            // child is blocked on it, and what a pass compressed now it would soon push out of the ring.
            if self.held.is_some() || !self.reader_queue.is_empty() {
                self.compaction.touched(now);
                return;
            }
        }
        match state {
            State::Until(at) if now >= at => {
                self.compaction.state = State::Stepping(Part::Emulator);
                self.compact_step(now);
            }
            State::Stepping(_) => self.compact_step(now),
            State::TrimAt(at) if now >= at => {
                // Whether this one runs or another ran within the interval, it ran after this pass ended.
                opencode_pty_vt::trim_free_memory();
                self.compaction.state = State::Idle;
                // The trim went deep into the allocator: its stack pages go back too.
                self.compaction.release_stack = true;
            }
            State::Until(_) | State::TrimAt(_) | State::Idle => {}
        }
    }

    /// One step: one page of the emulator's history while any remains, then one block of the ring.
    fn compact_step(&mut self, now: Instant) {
        match self.compaction.state {
            State::Stepping(Part::Emulator) => {
                // A restored terminal's emulator is still being rebuilt elsewhere: the blank one holds nothing,
                // and the rebuilt one re-arms the delay when it comes.
                if !self.compaction.emulator_supported || self.rebuilding() || !self.compaction.step_allowed() {
                    self.compaction.state = State::Stepping(Part::Ring);
                    return self.compact_step(now);
                }
                self.compaction.counts.emulator_steps += 1;
                match self.vt.compress(CompressionMode::Incremental) {
                    Ok(Compression::Pending) => {}
                    Ok(Compression::Complete) => self.compaction.state = State::Stepping(Part::Ring),
                    Ok(Compression::Unsupported) => {
                        self.compaction.emulator_supported = false;
                        self.compaction.state = State::Stepping(Part::Ring);
                    }
                    Err(error) => {
                        // Once per terminal: it is not tried again.
                        tracing::warn!(id = self.parts.id, %error, "compressing the terminal's history failed");
                        self.compaction.emulator_supported = false;
                        self.compaction.state = State::Stepping(Part::Ring);
                    }
                }
            }
            State::Stepping(Part::Ring) => {
                self.compaction.counts.ring_steps += 1;
                // One block of the ring's older bytes (`replay/blocks.rs`); bounded by the ring's own size.
                if !self.replay.compress_step() {
                    self.compaction.counts.passes += 1;
                    self.compaction.counts.compressed = true;
                    self.compaction.counts.ring_bytes = self.replay.memory_bytes();
                    // The stack pages the parser left resident below the actor's wait go back too, right
                    // before it (`Actor::release_stack`).
                    self.compaction.release_stack = true;
                    // What the pass freed below the allocator's mmap threshold leaves the process too (at most
                    // once a second for the whole daemon; refused, asked again once the interval is over).
                    self.compaction.state = if opencode_pty_vt::trim_free_memory() {
                        State::Idle
                    } else {
                        State::TrimAt(now + opencode_pty_vt::TRIM_INTERVAL)
                    };
                }
            }
            State::Until(_) | State::TrimAt(_) | State::Idle => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_stops_after_its_most_steps_and_the_next_touch_starts_a_new_count() {
        let now = Instant::now();
        let mut compaction = Compaction::new(Some(COMPACT_AFTER), now);
        assert_eq!(compaction.deadline(now), Some(now + COMPACT_AFTER));
        for _ in 0..MAX_COMPACT_STEPS {
            assert!(compaction.step_allowed());
        }
        assert!(!compaction.step_allowed(), "step {} is one too many", MAX_COMPACT_STEPS + 1);
        compaction.touched(now);
        assert!(compaction.step_allowed(), "a new pass counts again");
    }

    #[test]
    fn without_a_delay_nothing_is_ever_due() {
        let now = Instant::now();
        let mut compaction = Compaction::new(None, now);
        assert_eq!(compaction.deadline(now), None);
        compaction.touched(now + Duration::from_secs(3600));
        assert_eq!(compaction.deadline(now), None);
    }
}

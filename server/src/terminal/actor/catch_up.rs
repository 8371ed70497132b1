//! The actor of a terminal an in-place upgrade restored, while its emulator is rebuilt elsewhere
//! (`terminal/rebuild.rs`): output goes to the ring and the subscribers as usual, and the emulator, once it
//! comes, is fed what was read meanwhile. Whatever reads or changes the emulator first has it finished
//! ([`Actor::emulator`]), and so does output that would push out of the ring bytes the emulator has not taken.
//!
//! What the emulator says about the output read meanwhile (its answers to queries, a new title) comes when it
//! takes that output, a few milliseconds late and in order.

use std::time::Instant;

use opencode_pty_protocol::Response;
use opencode_pty_vt::{Detached, Terminal};

use super::Actor;
use crate::terminal::rebuild::Rebuilding;

impl Actor {
    /// Whether the emulator is still being rebuilt.
    pub(super) fn rebuilding(&self) -> bool {
        self.rebuilding.is_some()
    }

    /// The emulator, finished first if it was being rebuilt. Whatever reads or changes it through here re-arms
    /// the delay before its history is compressed again (`compact.rs`): reads restore compressed pages.
    pub(super) fn emulator(&mut self) -> &mut Terminal {
        self.compaction.touched(Instant::now());
        if let Some(pending) = self.rebuilding.take() {
            let caught_up_to = pending.caught_up_to;
            let vt = pending.wait();
            self.rebuilt(vt, caught_up_to);
        }
        &mut self.vt
    }

    /// The rebuilder handed the emulator.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn rebuilt_elsewhere(&mut self, handed: Option<Detached>) {
        if let Some(pending) = self.rebuilding.take() {
            self.rebuilt(Rebuilding::taken(handed), pending.caught_up_to);
        }
    }

    /// Before `len` more bytes go into the ring: when they would push out bytes the emulator being rebuilt has
    /// not taken, it is finished first.
    pub(super) fn before_ring_grows(&mut self, len: usize) {
        let Some(pending) = &self.rebuilding else { return };
        let head_after = (self.replay.tail() + len as u64).saturating_sub(self.replay.capacity() as u64);
        if head_after > pending.caught_up_to {
            self.emulator();
        }
    }

    /// Takes the rebuilt emulator (or, without one, keeps the blank one it had meanwhile) and feeds it the
    /// output read since `caught_up_to`, answering it and telling its title as the output path does.
    fn rebuilt(&mut self, vt: Option<Terminal>, caught_up_to: u64) {
        let Some(vt) = vt else {
            tracing::error!(
                id = self.parts.id,
                "the terminal's emulator could not be rebuilt: its screen starts blank"
            );
            return;
        };
        self.vt = vt;
        self.compaction.touched(Instant::now());
        // The ring holds every byte from `caught_up_to` (see `before_ring_grows`).
        let behind = self.replay.read_from(caught_up_to).map(|read| read.bytes).unwrap_or_default();
        if !behind.is_empty() {
            self.vt.write(&behind);
        }
        let replies = self.vt.take_replies();
        self.queue_replies(replies);
        if self.vt.take_title_changed()
            && let Some(title) = self.titles.set_osc(self.vt.title())
        {
            self.emit(Response::TitleChanged { title });
        }
        tracing::debug!(id = self.parts.id, caught_up = behind.len(), "the restored terminal's emulator is rebuilt");
    }
}

//! The record of the mappings libghostty made through this crate's `mmap64`: the ranges whose discarded pages
//! may be zeroed in place, because they are private, anonymous and writable and libghostty owns them.
//!
//! A fixed table of [`MAX_RECORDED_MAPPINGS`] slots, each one atomic word holding a mapping's start and length,
//! so readers never see half a record and no lock is taken (these functions run inside `mmap64`, `munmap` and
//! `madvise`, which any thread may call, a signal handler or a forked child included). A mapping goes to the
//! slots just after its start's hash, [`PROBES`] of them at most, so recording a mapping, asking about a start
//! (what `madvise` does, on the ingest path) and forgetting a whole mapping (`munmap`, `mremap`) read a few
//! adjacent words; only forgetting part of a mapping, several at once or memory never recorded reads the whole
//! table. A mapping that finds no free slot is not recorded: its pages then go to the system call, which is
//! slower and never wrong.
//!
//! The record stays true as long as memory is unmapped, moved or mapped over through the process's `munmap`,
//! `mremap` and `mmap64` (this module's), which is how libghostty and every library calling them by name do
//! it. Only a raw system call, or `mmap` with `MAP_FIXED`, on memory libghostty mapped could leave a stale
//! record behind, and even then libghostty would have to discard memory it no longer owns for it to matter.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How many mappings the record holds (8,192; a terminal with 10,000 lines of history has about 18 pages
/// at 80 columns, 44 at 200 and 109 at 500).
pub(crate) const MAX_RECORDED_MAPPINGS: usize = 8192;

/// How many slots from a start's hash a mapping may take; a lookup reads them all (4 cache lines).
const PROBES: usize = 32;

/// The largest mapping recorded (64 MiB): its length in units must fit below [`UNIT_BITS`].
pub(crate) const MAX_RECORDED_BYTES: usize = 64 << 20;

/// Starts and lengths are kept in 4 KiB units, the smallest page size Linux has.
const UNIT_SHIFT: u32 = 12;

/// The low bits of a slot hold the length in units, the bits above them the start in units.
const UNIT_BITS: u32 = 16;

/// A slot's value when it holds nothing. No record is zero: its length is at least one unit.
const EMPTY: u64 = 0;

// The length of the largest mapping fits its field.
const _: () = assert!(MAX_RECORDED_BYTES >> UNIT_SHIFT < 1 << UNIT_BITS);
// The probe window wraps around the table with a mask.
const _: () = assert!(MAX_RECORDED_MAPPINGS.is_power_of_two() && PROBES <= MAX_RECORDED_MAPPINGS);

/// The mappings libghostty made through `mmap64` and has neither unmapped nor moved since.
pub(crate) static RECORD: Record = Record::new();

/// A table of mapped ranges; see the module documentation. One static instance ([`RECORD`]), and fresh ones
/// in tests.
pub(crate) struct Record {
    slots: [AtomicU64; MAX_RECORDED_MAPPINGS],
    /// How many slots are taken, so a process without terminals never reads the table in `munmap`.
    live: AtomicUsize,
}

impl Record {
    pub(crate) const fn new() -> Record {
        Record { slots: [const { AtomicU64::new(EMPTY) }; MAX_RECORDED_MAPPINGS], live: AtomicUsize::new(0) }
    }

    /// Records `[addr, addr + len)`, which the kernel has just mapped; false when it cannot be (misaligned,
    /// longer than [`MAX_RECORDED_BYTES`], or no free slot near its hash). A record with the same start can
    /// only be stale (the kernel does not hand out memory that is mapped), so it is replaced, and a discard
    /// can never reach past the new mapping's end.
    pub(crate) fn insert(&self, addr: usize, len: usize) -> bool {
        let Some(value) = pack(addr, len) else {
            return false;
        };
        let home = home(addr);
        let window = (0..PROBES).map(|probe| &self.slots[(home + probe) % MAX_RECORDED_MAPPINGS]);
        // Relaxed throughout: each slot is a value complete in itself and publishes no other memory.
        for slot in window.clone() {
            let current = slot.load(Ordering::Relaxed);
            if current != EMPTY
                && start(current) == start(value)
                && slot.compare_exchange(current, value, Ordering::Relaxed, Ordering::Relaxed).is_ok()
            {
                return true;
            }
        }
        for slot in window {
            if slot.compare_exchange(EMPTY, value, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
                self.live.fetch_add(1, Ordering::Relaxed);
                return true;
            }
        }
        false
    }

    /// Whether `[addr, addr + len)` lies inside one recorded mapping that starts at `addr` (libghostty
    /// discards its pages whole, from their start). Reads [`PROBES`] slots.
    pub(crate) fn holds(&self, addr: usize, len: usize) -> bool {
        let Some(wanted) = pack(addr, len) else {
            return false;
        };
        let home = home(addr);
        (0..PROBES).any(|probe| {
            let value = self.slots[(home + probe) % MAX_RECORDED_MAPPINGS].load(Ordering::Relaxed);
            value != EMPTY && start(value) == start(wanted) && length(value) >= length(wanted)
        })
    }

    /// Drops every record that overlaps `[addr, addr + len)` (a zero length counts as one byte), and says
    /// whether one of them was exactly that range.
    ///
    /// The common case, a whole recorded mapping unmapped or moved by its owner, reads only the slots near
    /// its hash: records are live mappings, which never overlap, so no other one can. Anything else (part of
    /// a mapping, several at once, or memory never recorded while the record holds something) reads the table.
    pub(crate) fn forget(&self, addr: usize, len: usize) -> bool {
        if self.live.load(Ordering::Relaxed) == 0 {
            return false;
        }
        if let Some(exact) = pack(addr, len) {
            let home = home(addr);
            for probe in 0..PROBES {
                let slot = &self.slots[(home + probe) % MAX_RECORDED_MAPPINGS];
                if slot.compare_exchange(exact, EMPTY, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
                    self.live.fetch_sub(1, Ordering::Relaxed);
                    return true;
                }
            }
        }
        let end = addr.saturating_add(len.max(1));
        for slot in &self.slots {
            let value = slot.load(Ordering::Relaxed);
            if value == EMPTY {
                continue;
            }
            let (first, last) = bounds(value);
            if first < end
                && addr < last
                && slot.compare_exchange(value, EMPTY, Ordering::Relaxed, Ordering::Relaxed).is_ok()
            {
                self.live.fetch_sub(1, Ordering::Relaxed);
            }
        }
        false
    }

    /// How many mappings are recorded.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }
}

/// The slot value of `[addr, addr + len)`, or none when it has no exact one.
fn pack(addr: usize, len: usize) -> Option<u64> {
    let unit = 1usize << UNIT_SHIFT;
    if len == 0 || len > MAX_RECORDED_BYTES || !addr.is_multiple_of(unit) {
        return None;
    }
    let start = u64::try_from(addr >> UNIT_SHIFT).ok()?;
    let units = u64::try_from(len.div_ceil(unit)).ok()?;
    // The start must survive the shift: addresses below 2^60, far above any user-space address.
    (start.leading_zeros() >= UNIT_BITS).then_some(start << UNIT_BITS | units)
}

fn start(value: u64) -> u64 {
    value >> UNIT_BITS
}

fn length(value: u64) -> u64 {
    value & ((1 << UNIT_BITS) - 1)
}

/// The byte range a slot value stands for.
fn bounds(value: u64) -> (usize, usize) {
    // Both fit: `pack` made them from a usize address and a length of at most MAX_RECORDED_BYTES.
    let first = usize::try_from(start(value) << UNIT_SHIFT).unwrap_or(usize::MAX);
    let len = usize::try_from(length(value) << UNIT_SHIFT).unwrap_or(usize::MAX);
    (first, first.saturating_add(len))
}

/// The first slot a mapping starting at `addr` may take: a multiplicative hash of its start unit, since
/// libghostty's pages lie a fixed stride apart and would otherwise crowd the same few slots.
fn home(addr: usize) -> usize {
    let unit = (addr >> UNIT_SHIFT) as u64;
    let bits = MAX_RECORDED_MAPPINGS.trailing_zeros();
    (unit.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Addresses far from anything mapped; these tests only fill fresh tables, never the process's.
    const BASE: usize = 0x1000_0000_0000;
    const PAGE: usize = 4096;

    #[test]
    fn a_recorded_mapping_is_held_from_its_start_only_until_forgotten() {
        let record = Box::new(Record::new());
        let len = 98 * PAGE;
        assert!(record.insert(BASE, len));
        assert!(record.holds(BASE, len), "the whole mapping");
        assert!(record.holds(BASE, PAGE), "its first page");
        assert!(record.holds(BASE, len - 100), "a length that is no multiple of a page");
        assert!(!record.holds(BASE, len + PAGE), "not past its end");
        assert!(!record.holds(BASE + PAGE, PAGE), "not from inside: libghostty discards whole pages");
        assert!(!record.holds(BASE - len, len), "not a neighbour");
        assert!(!record.holds(BASE, 0) && !record.holds(BASE + 1, PAGE), "nothing empty or misaligned");
        assert!(record.forget(BASE, len), "forgotten, and it was exactly that range");
        assert!(!record.holds(BASE, PAGE));
        assert_eq!(record.len(), 0);
    }

    #[test]
    fn any_overlap_forgets_the_whole_record_and_says_whether_it_was_exact() {
        let record = Box::new(Record::new());
        let len = 16 * PAGE;
        let [a, b, c] = [BASE, BASE + len, BASE + 2 * len];
        for start in [a, b, c] {
            assert!(record.insert(start, len));
        }
        assert!(record.forget(b, len), "b whole: exact");
        assert!(record.holds(a, len) && !record.holds(b, PAGE) && record.holds(c, len), "only b");
        assert!(record.insert(b, len));
        assert!(!record.forget(b + len - PAGE, PAGE), "the last page of b: b goes, not exact");
        assert!(record.holds(a, len) && !record.holds(b, PAGE) && record.holds(c, len), "only b");
        assert!(!record.forget(a + PAGE, 40 * PAGE), "from inside a into c: both go");
        assert_eq!(record.len(), 0);
        assert!(!record.forget(a, len), "nothing left to forget");
        // A zero length still names the page it starts in.
        assert!(record.insert(a, len));
        assert!(!record.forget(a + PAGE, 0));
        assert_eq!(record.len(), 0);
    }

    #[test]
    fn recording_replaces_a_stale_record_of_the_same_start() {
        let record = Box::new(Record::new());
        assert!(record.insert(BASE, 64 * PAGE));
        // The kernel handed out that start again, so the old record was stale (unmapped unseen): a shorter
        // mapping replaces it, so a discard cannot reach past its end.
        assert!(record.insert(BASE, PAGE));
        assert_eq!(record.len(), 1);
        assert!(record.holds(BASE, PAGE) && !record.holds(BASE, 2 * PAGE));
    }

    #[test]
    fn what_cannot_be_recorded_is_refused() {
        let record = Box::new(Record::new());
        assert!(!record.insert(BASE + 1, PAGE), "misaligned");
        assert!(!record.insert(BASE, 0), "empty");
        assert!(!record.insert(BASE, MAX_RECORDED_BYTES + PAGE), "past the bound");
        assert!(record.insert(BASE, MAX_RECORDED_BYTES), "at the bound");
        assert!(!record.insert(usize::MAX & !(PAGE - 1), PAGE), "an address the slot cannot hold");
    }

    #[test]
    fn a_full_table_refuses_more_and_takes_them_again_once_slots_free() {
        let record = Box::new(Record::new());
        let stride = 98 * PAGE;
        let mut held = Vec::new();
        let mut refused = 0;
        for n in 0..MAX_RECORDED_MAPPINGS + 1000 {
            let start = BASE + n * stride;
            if record.insert(start, stride) {
                held.push(start);
            } else {
                refused += 1;
            }
        }
        assert!(refused >= 1000, "never more than the table holds");
        assert!(held.len() > MAX_RECORDED_MAPPINGS * 3 / 4, "the hash spreads a fixed stride: {}", held.len());
        assert_eq!(record.len(), held.len());
        assert!(held.iter().all(|&start| record.holds(start, stride)));
        for &start in &held {
            record.forget(start, stride);
        }
        assert_eq!(record.len(), 0);
        assert!(record.insert(BASE, stride), "room again");
    }
}

//! The raw replay buffer: the newest PTY output bytes, bounded, addressed by absolute offsets since the start.

use std::collections::VecDeque;
use std::fmt;

use crate::error::ServiceError;
use crate::process::ReplayRead;

/// How many bytes of raw output a terminal keeps for replay unless configured otherwise (2 MiB, the protocol's
/// `DEFAULT_REPLAY_BYTES`).
pub(crate) const DEFAULT_REPLAY_BYTES: usize = opencode_pty_protocol::DEFAULT_REPLAY_BYTES as usize;

/// Why a replay read was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ReplayError {
    /// The offset lies past the last byte ever produced.
    #[error("requested offset {offset} is beyond tail {tail}")]
    BeyondTail {
        /// The offset that was asked for.
        offset: u64,
        /// The offset just past the newest byte.
        tail: u64,
    },
}

impl From<ReplayError> for ServiceError {
    fn from(error: ReplayError) -> ServiceError {
        match error {
            ReplayError::BeyondTail { offset, tail } => ServiceError::BeyondTail { offset, tail },
        }
    }
}

/// A bounded ring of the newest raw output. Offsets count every byte ever appended, kept or not, so
/// `tail - head` is the number of bytes kept and never exceeds the capacity.
pub(crate) struct Replay {
    /// The most bytes kept at once; at least 1.
    capacity: usize,
    /// The kept bytes, oldest first; the first one is at offset `head`.
    bytes: VecDeque<u8>,
    /// The offset of the oldest kept byte.
    head: u64,
}

impl fmt::Debug for Replay {
    // The contents may be megabytes of terminal output; show the bookkeeping only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replay")
            .field("capacity", &self.capacity)
            .field("head", &self.head)
            .field("tail", &self.tail())
            .finish_non_exhaustive()
    }
}

impl Replay {
    /// An empty buffer keeping at most `capacity` bytes (a capacity of 0 is treated as 1). Memory is allocated
    /// as output arrives, never beyond the capacity.
    pub(crate) fn new(capacity: usize) -> Replay {
        Replay { capacity: capacity.max(1), bytes: VecDeque::new(), head: 0 }
    }

    /// Appends a chunk of output and returns its `(start, end)` offsets. The oldest bytes are dropped to stay
    /// within the capacity; a chunk longer than the capacity keeps only its last `capacity` bytes, but the
    /// offsets still advance by its full length. Costs O(chunk length).
    pub(crate) fn append(&mut self, chunk: &[u8]) -> (u64, u64) {
        let start = self.tail();
        let end = start + chunk.len() as u64;
        let kept = if chunk.len() > self.capacity { &chunk[chunk.len() - self.capacity..] } else { chunk };
        let overflow = (self.bytes.len() + kept.len()).saturating_sub(self.capacity);
        self.bytes.drain(..overflow);
        let needed = self.bytes.len() + kept.len();
        if needed > self.bytes.capacity() {
            // Grow geometrically for amortised O(1) appends, but never allocate past the bound.
            let target = needed.max(self.bytes.capacity().saturating_mul(2)).min(self.capacity);
            self.bytes.reserve_exact(target - self.bytes.len());
        }
        self.bytes.extend(kept);
        self.head = end - self.bytes.len() as u64;
        (start, end)
    }

    /// A buffer of `capacity` that holds `bytes` from offset `head` (an upgrade's state): only the newest
    /// `capacity` of them are kept, and the tail is `head` plus their length.
    pub(crate) fn restored(capacity: usize, head: u64, bytes: &[u8]) -> Replay {
        let mut replay = Replay::new(capacity);
        let kept = &bytes[bytes.len().saturating_sub(replay.capacity)..];
        replay.bytes.reserve_exact(kept.len());
        replay.bytes.extend(kept);
        replay.head = head + (bytes.len() - kept.len()) as u64;
        replay
    }

    /// The most bytes it keeps.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Every kept byte, oldest first (from [`Self::head`]).
    pub(crate) fn kept(&self) -> Vec<u8> {
        let (first, second) = self.bytes.as_slices();
        [first, second].concat()
    }

    /// The kept bytes from `offset` (clamped to the kept ones) to the tail, in the ring's two pieces.
    pub(crate) fn slices_from(&self, offset: u64) -> (&[u8], &[u8]) {
        let skip = usize::try_from(offset.clamp(self.head, self.tail()) - self.head).unwrap_or(self.bytes.len());
        let (first, second) = self.bytes.as_slices();
        if skip < first.len() { (&first[skip..], second) } else { (&[], &second[skip - first.len()..]) }
    }

    /// The offset of the oldest kept byte (equal to the tail when nothing is kept).
    pub(crate) fn head(&self) -> u64 {
        self.head
    }

    /// The offset just past the newest byte: the total number of bytes ever appended.
    pub(crate) fn tail(&self) -> u64 {
        self.head + self.bytes.len() as u64
    }

    /// The kept output from `offset` to the tail. An offset before the head reads from the head and is reported
    /// as truncated; an offset past the tail is an error.
    pub(crate) fn read_from(&self, offset: u64) -> Result<ReplayRead, ReplayError> {
        let tail = self.tail();
        if offset > tail {
            return Err(ReplayError::BeyondTail { offset, tail });
        }
        let available = offset.max(self.head);
        // `available - head` is at most the kept length, a `usize`, so the conversion cannot fail.
        let skip = usize::try_from(available - self.head).unwrap_or(self.bytes.len());
        let mut bytes = Vec::with_capacity(self.bytes.len() - skip);
        let (first, second) = self.bytes.as_slices();
        if skip < first.len() {
            bytes.extend_from_slice(&first[skip..]);
            bytes.extend_from_slice(second);
        } else {
            bytes.extend_from_slice(&second[skip - first.len()..]);
        }
        Ok(ReplayRead { requested: offset, available, end: tail, truncated: offset < self.head, bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(replay: &Replay, offset: u64) -> ReplayRead {
        replay.read_from(offset).expect("offset within the tail")
    }

    #[test]
    fn keeps_the_newest_bytes_with_absolute_offsets() {
        let mut replay = Replay::new(5);
        assert_eq!(replay.append(b"abc"), (0, 3));
        assert_eq!(replay.append(b"defg"), (3, 7));
        assert_eq!((replay.head(), replay.tail()), (2, 7));

        let all = read(&replay, 0);
        assert_eq!(all, ReplayRead { requested: 0, available: 2, end: 7, truncated: true, bytes: b"cdefg".to_vec() });

        let late = read(&replay, 5);
        assert_eq!(late, ReplayRead { requested: 5, available: 5, end: 7, truncated: false, bytes: b"fg".to_vec() });

        let at_tail = read(&replay, 7);
        assert!(at_tail.bytes.is_empty());
        assert!(!at_tail.truncated);
        assert_eq!((at_tail.available, at_tail.end), (7, 7));
    }

    #[test]
    fn an_offset_past_the_tail_is_an_error() {
        let mut replay = Replay::new(5);
        replay.append(b"abcdefg");
        let err = replay.read_from(8).expect_err("8 is past the tail");
        assert_eq!(err, ReplayError::BeyondTail { offset: 8, tail: 7 });
        assert_eq!(err.to_string(), "requested offset 8 is beyond tail 7");
    }

    #[test]
    fn a_chunk_larger_than_the_capacity_keeps_its_end_and_advances_by_its_length() {
        let mut replay = Replay::new(4);
        replay.append(b"xy");
        assert_eq!(replay.append(b"0123456789"), (2, 12));
        assert_eq!((replay.head(), replay.tail()), (8, 12));
        assert_eq!(read(&replay, 3).bytes, b"6789");
        assert!(read(&replay, 3).truncated);
        assert_eq!(read(&replay, 10).bytes, b"89");
    }

    #[test]
    fn a_restored_buffer_reads_as_the_one_it_was_taken_from() {
        let mut replay = Replay::new(5);
        replay.append(b"abcdefg");
        let restored = Replay::restored(replay.capacity(), replay.head(), &replay.kept());
        assert_eq!((restored.head(), restored.tail()), (2, 7));
        for offset in 0..=7 {
            assert_eq!(read(&restored, offset), read(&replay, offset));
        }
        // Into a smaller buffer: the newest bytes, at their offsets.
        let smaller = Replay::restored(3, replay.head(), &replay.kept());
        assert_eq!((smaller.head(), smaller.tail()), (4, 7));
        assert_eq!(read(&smaller, 0).bytes, b"efg");
    }

    #[test]
    fn a_zero_capacity_keeps_one_byte() {
        let mut replay = Replay::new(0);
        replay.append(b"ab");
        assert_eq!((replay.head(), replay.tail()), (1, 2));
        assert_eq!(read(&replay, 0).bytes, b"b");
    }

    /// A fixed-seed xorshift generator, so a failure always reproduces.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, bound: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % bound
        }
    }

    #[test]
    fn matches_a_naive_model_over_many_appends() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for capacity in [1_usize, 2, 7, 64, 300] {
            let mut replay = Replay::new(capacity);
            let mut model: Vec<u8> = Vec::new();
            for _ in 0..400 {
                let len = rng.below(capacity as u64 * 2 + 2) as usize;
                let chunk: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
                let (start, end) = replay.append(&chunk);
                assert_eq!(start, model.len() as u64, "chunks are contiguous");
                model.extend_from_slice(&chunk);
                assert_eq!(end, model.len() as u64);

                let tail = model.len() as u64;
                let head = tail.saturating_sub(capacity as u64);
                assert_eq!((replay.head(), replay.tail()), (head, tail));

                let offset = rng.below(tail + 1);
                let got = read(&replay, offset);
                let available = offset.max(head);
                assert_eq!(got.available, available);
                assert_eq!(got.end, tail);
                assert_eq!(got.truncated, offset < head);
                assert_eq!(got.bytes, &model[available as usize..]);
                assert!(replay.read_from(tail + 1).is_err());
                assert!(replay.bytes.capacity() <= capacity.max(1) * 2, "allocation stays near the bound");
            }
        }
    }
}

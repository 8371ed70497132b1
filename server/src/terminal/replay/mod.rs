//! The raw replay buffer: the newest PTY output bytes, bounded, addressed by absolute offsets since the start;
//! a quiet terminal's older bytes kept compressed by blocks (`blocks`), read back exactly as they were written.

mod blocks;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::fmt;
use std::io;

use blocks::Blocks;
pub use blocks::REPLAY_BLOCK_BYTES;

use crate::error::ServiceError;
use crate::process::ReplayRead;

/// How many bytes of raw output a terminal keeps for replay unless configured otherwise (2 MiB, the protocol's
/// `DEFAULT_REPLAY_BYTES`).
pub(crate) const DEFAULT_REPLAY_BYTES: usize = opencode_pty_protocol::DEFAULT_REPLAY_BYTES as usize;

/// How many of the newest bytes [`Replay::compress_step`] leaves uncompressed (64 KiB): what a client that
/// follows the output reads again after a reconnect, and where the next output lands. At least a block, so the
/// compressed part never holds more logical bytes than the capacity (its first block may start up to a block
/// before the head, and the plain tail is at least this long while there is a block).
pub const REPLAY_PLAIN_TAIL_BYTES: usize = 64 << 10;
const _: () = assert!(REPLAY_PLAIN_TAIL_BYTES >= REPLAY_BLOCK_BYTES);

/// Why a replay read was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
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
/// `tail - head` is the number of bytes kept and never exceeds the capacity (counted in uncompressed bytes).
///
/// The kept bytes are a run of compressed blocks (empty until [`Self::compress_step`] is called: while a
/// terminal is busy, appends cost what a plain ring's do) followed by the plain newest bytes. The first block may
/// start before the head (bytes already dropped, which no read returns); appending drops a block, unread, once
/// the head has passed its end. Every read answers exactly as it would with nothing compressed.
pub struct Replay {
    /// The most bytes kept at once; at least 1.
    capacity: usize,
    /// The offset of the oldest kept byte.
    head: u64,
    /// The older kept bytes, compressed by blocks; the plain bytes follow the last one.
    blocks: Blocks,
    /// The newest kept bytes, oldest first: from the end of the blocks, or from `head` when there is none.
    plain: VecDeque<u8>,
}

impl fmt::Debug for Replay {
    // The contents may be megabytes of terminal output; show the bookkeeping only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replay")
            .field("capacity", &self.capacity)
            .field("head", &self.head)
            .field("tail", &self.tail())
            .field("compressed_until", &self.plain_start())
            .finish_non_exhaustive()
    }
}

impl Replay {
    /// An empty buffer keeping at most `capacity` bytes (a capacity of 0 is treated as 1). Memory is allocated
    /// as output arrives, never beyond the capacity.
    pub fn new(capacity: usize) -> Replay {
        Replay { capacity: capacity.max(1), head: 0, blocks: Blocks::default(), plain: VecDeque::new() }
    }

    /// Appends a chunk of output and returns its `(start, end)` offsets. The oldest bytes are dropped to stay
    /// within the capacity (compressed blocks whole, without reading them); a chunk longer than the capacity
    /// keeps only its last `capacity` bytes, but the offsets still advance by its full length. Costs O(chunk
    /// length).
    pub fn append(&mut self, chunk: &[u8]) -> (u64, u64) {
        let start = self.tail();
        let end = start + chunk.len() as u64;
        let kept = if chunk.len() > self.capacity { &chunk[chunk.len() - self.capacity..] } else { chunk };
        let head = self.head.max(end.saturating_sub(self.capacity as u64));
        let plain_start = self.plain_start();
        self.blocks.drop_before(head);
        let overflow = usize::try_from(head.saturating_sub(plain_start)).unwrap_or(usize::MAX).min(self.plain.len());
        self.plain.drain(..overflow);
        let needed = self.plain.len() + kept.len();
        if needed > self.plain.capacity() {
            // Grow geometrically for amortised O(1) appends, but never allocate past the bound.
            let target = needed.max(self.plain.capacity().saturating_mul(2)).min(self.capacity);
            self.plain.reserve_exact(target - self.plain.len());
        }
        self.plain.extend(kept);
        self.head = head;
        (start, end)
    }

    /// A buffer of `capacity` that holds `bytes` from offset `head` (an upgrade's state): only the newest
    /// `capacity` of them are kept, and the tail is `head` plus their length. Nothing is compressed.
    pub fn restored(capacity: usize, head: u64, bytes: &[u8]) -> Replay {
        let mut replay = Replay::new(capacity);
        let kept = &bytes[bytes.len().saturating_sub(replay.capacity)..];
        replay.plain.reserve_exact(kept.len());
        replay.plain.extend(kept);
        replay.head = head + (bytes.len() - kept.len()) as u64;
        replay
    }

    /// The most bytes it keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Every kept byte, oldest first (from [`Self::head`]).
    pub fn kept(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.len());
        self.read_into(self.head, &mut bytes);
        bytes
    }

    /// Writes the kept bytes from `offset` (clamped to the kept ones) to the tail into `out`, decompressing one
    /// block at a time (only those from `offset`'s on).
    pub fn write_from(&self, offset: u64, out: &mut impl io::Write) -> io::Result<()> {
        let from = offset.clamp(self.head, self.tail());
        let plain_start = self.plain_start();
        if from < plain_start {
            self.blocks.write_into(from, out)?;
        }
        let (first, second) = self.plain_from(from);
        out.write_all(first)?;
        out.write_all(second)
    }

    /// The offset of the oldest kept byte (equal to the tail when nothing is kept).
    pub fn head(&self) -> u64 {
        self.head
    }

    /// The offset just past the newest byte: the total number of bytes ever appended.
    pub fn tail(&self) -> u64 {
        self.plain_start() + self.plain.len() as u64
    }

    /// The kept output from `offset` to the tail. An offset before the head reads from the head and is reported
    /// as truncated; an offset past the tail is an error. Decompresses only the blocks from `offset`'s on.
    pub fn read_from(&self, offset: u64) -> Result<ReplayRead, ReplayError> {
        let tail = self.tail();
        if offset > tail {
            return Err(ReplayError::BeyondTail { offset, tail });
        }
        let available = offset.max(self.head);
        // `tail - available` is at most the kept length, a `usize`, so the conversion cannot fail.
        let mut bytes = Vec::with_capacity(usize::try_from(tail - available).unwrap_or(0));
        self.read_into(available, &mut bytes);
        Ok(ReplayRead { requested: offset, available, end: tail, truncated: offset < self.head, bytes })
    }

    /// Compresses one more block of the older plain bytes: the oldest `REPLAY_BLOCK_BYTES` of them, if at least
    /// `REPLAY_PLAIN_TAIL_BYTES` stay plain after them. Answers whether another call would compress another
    /// block. When it would not, the plain bytes' allocation is shrunk to fit, so the memory goes back. One
    /// call costs the compression of one block at most (tens of microseconds); a call with nothing to do costs
    /// nothing. Reads answer the same before and after.
    pub fn compress_step(&mut self) -> bool {
        if self.plain.len() >= REPLAY_BLOCK_BYTES + REPLAY_PLAIN_TAIL_BYTES {
            let at = self.plain_start();
            let (first, second) = self.plain.as_slices();
            if first.len() >= REPLAY_BLOCK_BYTES {
                self.blocks.push(at, &first[..REPLAY_BLOCK_BYTES]);
            } else {
                let mut block = Vec::with_capacity(REPLAY_BLOCK_BYTES);
                block.extend_from_slice(first);
                block.extend_from_slice(&second[..REPLAY_BLOCK_BYTES - first.len()]);
                self.blocks.push(at, &block);
            }
            self.plain.drain(..REPLAY_BLOCK_BYTES);
        }
        let more = self.plain.len() >= REPLAY_BLOCK_BYTES + REPLAY_PLAIN_TAIL_BYTES;
        if !more && self.plain.capacity() > self.plain.len() {
            self.plain.shrink_to_fit();
        }
        more
    }

    /// The memory the ring holds for its bytes: its compressed blocks (and their queue) and the plain bytes'
    /// allocation.
    pub fn memory_bytes(&self) -> usize {
        self.blocks.memory_bytes() + self.plain.capacity()
    }

    /// How many bytes are kept.
    fn len(&self) -> usize {
        // At most the capacity, a `usize`.
        usize::try_from(self.tail() - self.head).unwrap_or(usize::MAX)
    }

    /// The offset of the first plain byte: the end of the blocks, or the head when there is none.
    fn plain_start(&self) -> u64 {
        if self.blocks.is_empty() { self.head } else { self.blocks.end() }
    }

    /// The plain bytes from `from` (at or after the head) on, in the deque's two pieces.
    fn plain_from(&self, from: u64) -> (&[u8], &[u8]) {
        let skip = usize::try_from(from.saturating_sub(self.plain_start())).unwrap_or(usize::MAX).min(self.plain.len());
        let (first, second) = self.plain.as_slices();
        if skip < first.len() { (&first[skip..], second) } else { (&[], &second[skip - first.len()..]) }
    }

    /// Appends the kept bytes from `from` (at or after the head, at most the tail) to the tail to `out`.
    fn read_into(&self, from: u64, out: &mut Vec<u8>) {
        if from < self.plain_start() {
            self.blocks.read_into(from, out);
        }
        let (first, second) = self.plain_from(from);
        out.extend_from_slice(first);
        out.extend_from_slice(second);
    }
}

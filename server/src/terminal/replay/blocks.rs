//! The compressed part of a replay ring: its older bytes as a run of lz4 blocks of `REPLAY_BLOCK_BYTES` each.

use std::collections::VecDeque;
use std::io;

/// How many logical (uncompressed) bytes one compressed block of a replay ring holds (64 KiB). A read from an
/// offset decompresses its block and every later one, so a smaller block wastes less on a read near the tail,
/// and a larger one compresses a little better; lz4 takes about as long per byte either way.
pub const REPLAY_BLOCK_BYTES: usize = 64 << 10;

/// One block's bytes as kept: the lz4 compression of its `REPLAY_BLOCK_BYTES`, or, for bytes that lz4 does not
/// make smaller (random data), the bytes themselves, so a block never costs more than it holds.
enum Stored {
    Lz4(Box<[u8]>),
    Plain(Box<[u8]>),
}

impl Stored {
    /// The bytes it keeps.
    fn len(&self) -> usize {
        match self {
            Stored::Lz4(bytes) | Stored::Plain(bytes) => bytes.len(),
        }
    }
}

/// Writes a block's logical bytes, decompressed from `compressed`, into `out` (exactly `REPLAY_BLOCK_BYTES` long).
fn decompress(compressed: &[u8], out: &mut [u8]) {
    count_decompression();
    // Each block is our own compression of exactly this many bytes, kept in memory: this cannot fail.
    let written = lz4_flex::block::decompress_into(compressed, out);
    if written.as_ref().ok() != Some(&REPLAY_BLOCK_BYTES) {
        debug_assert!(false, "a replay block decompresses whole: {written:?}");
        tracing::error!(?written, "a replay block did not decompress whole");
    }
}

/// Consecutive blocks of `REPLAY_BLOCK_BYTES` logical bytes each, the first starting at offset `start`: the
/// older part of a ring's content. The ring drops a block once its head has passed the block's end, and keeps at
/// most its capacity's worth of blocks (`Replay::compress_step` compresses only what a full ring would keep),
/// so this queue is bounded by the ring's capacity.
#[derive(Default)]
pub(super) struct Blocks {
    /// The offset of the first block's first byte (which may be before the ring's head); unused when empty.
    start: u64,
    blocks: VecDeque<Stored>,
    /// The bytes the blocks keep, summed.
    stored: usize,
}

impl Blocks {
    /// Whether there is no block.
    pub(super) fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The offset just past the last block (equal to the first's start when there is none).
    pub(super) fn end(&self) -> u64 {
        self.start + (self.blocks.len() * REPLAY_BLOCK_BYTES) as u64
    }

    /// Adds a block holding `bytes` (exactly `REPLAY_BLOCK_BYTES` of them) from offset `at`, the end of the
    /// last block if there is one. Compresses them, keeping them as they are if that does not make them smaller.
    pub(super) fn push(&mut self, at: u64, bytes: &[u8]) {
        debug_assert_eq!(bytes.len(), REPLAY_BLOCK_BYTES);
        debug_assert!(self.is_empty() || at == self.end(), "blocks are contiguous");
        if self.is_empty() {
            self.start = at;
        }
        let compressed = lz4_flex::block::compress(bytes);
        let stored = if compressed.len() < bytes.len() {
            Stored::Lz4(compressed.into_boxed_slice())
        } else {
            Stored::Plain(bytes.into())
        };
        self.stored += stored.len();
        self.blocks.push_back(stored);
    }

    /// Drops, without reading them, the blocks that end at or before `head`.
    pub(super) fn drop_before(&mut self, head: u64) {
        while self.start + REPLAY_BLOCK_BYTES as u64 <= head {
            let Some(dropped) = self.blocks.pop_front() else { break };
            self.stored -= dropped.len();
            self.start += REPLAY_BLOCK_BYTES as u64;
        }
        if self.blocks.is_empty() {
            // Give back the queue's allocation too: a ring that wrote on past its compressed part is busy again.
            self.blocks = VecDeque::new();
        }
    }

    /// How many blocks there are.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.blocks.len()
    }

    /// How many blocks are kept as they were, lz4 not making them smaller.
    #[cfg(test)]
    pub(super) fn plain_blocks(&self) -> usize {
        self.blocks.iter().filter(|stored| matches!(stored, Stored::Plain(_))).count()
    }

    /// The bytes held: every block's, and the queue's own allocation.
    pub(super) fn memory_bytes(&self) -> usize {
        self.stored + self.blocks.capacity() * size_of::<Stored>()
    }

    /// The blocks from the one holding `from` on, each with the offset its bytes are read from (`from` in the
    /// first, their start in the others). None when `from` is at or past the end.
    fn starting_at(&self, from: u64) -> impl Iterator<Item = (&Stored, usize)> {
        let first = usize::try_from(from.saturating_sub(self.start) / REPLAY_BLOCK_BYTES as u64).unwrap_or(usize::MAX);
        let skip = usize::try_from(from.saturating_sub(self.start) % REPLAY_BLOCK_BYTES as u64).unwrap_or(0);
        self.blocks
            .iter()
            .skip(first)
            .enumerate()
            .map(move |(index, stored)| (stored, if index == 0 { skip } else { 0 }))
    }

    /// Appends to `out` the logical bytes from offset `from` (at or after the first block's start) to the end,
    /// decompressing only the blocks from the one that holds `from`.
    pub(super) fn read_into(&self, from: u64, out: &mut Vec<u8>) {
        let mut scratch = Vec::new();
        for (stored, skip) in self.starting_at(from) {
            match stored {
                Stored::Plain(bytes) => out.extend_from_slice(&bytes[skip..]),
                Stored::Lz4(compressed) if skip == 0 => {
                    // Straight into the answer, without a copy.
                    let at = out.len();
                    out.resize(at + REPLAY_BLOCK_BYTES, 0);
                    decompress(compressed, &mut out[at..]);
                }
                Stored::Lz4(compressed) => {
                    scratch.resize(REPLAY_BLOCK_BYTES, 0);
                    decompress(compressed, &mut scratch);
                    out.extend_from_slice(&scratch[skip..]);
                }
            }
        }
    }

    /// Writes to `out` the logical bytes from offset `from` (at or after the first block's start) to the end,
    /// one block at a time, decompressing only the blocks from the one that holds `from`.
    pub(super) fn write_into(&self, from: u64, out: &mut impl io::Write) -> io::Result<()> {
        let mut scratch = Vec::new();
        for (stored, skip) in self.starting_at(from) {
            match stored {
                Stored::Plain(bytes) => out.write_all(&bytes[skip..])?,
                Stored::Lz4(compressed) => {
                    scratch.resize(REPLAY_BLOCK_BYTES, 0);
                    decompress(compressed, &mut scratch);
                    out.write_all(&scratch[skip..])?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    /// How many blocks this thread has decompressed, for the tests that check a read or an eviction touches
    /// only the blocks it must.
    static DECOMPRESSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many blocks this thread has decompressed so far.
#[cfg(test)]
pub(super) fn decompressed() -> usize {
    DECOMPRESSED.with(std::cell::Cell::get)
}

#[cfg(test)]
fn count_decompression() {
    DECOMPRESSED.with(|count| count.set(count.get() + 1));
}

#[cfg(not(test))]
fn count_decompression() {}

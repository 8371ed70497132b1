//! Output coalescing: adjacent output chunks are merged into one live event of at most
//! [`MAX_LIVE_OUTPUT_BYTES`], flushed when full, [`OUTPUT_COALESCE`] after its first byte, or when the actor
//! says so (before any non-output event). Time is passed in, so the bounds are tested without sleeping.

use std::time::Instant;

use opencode_pty_protocol::{MAX_LIVE_OUTPUT_BYTES, OUTPUT_COALESCE};

/// One live output event: the offset of its first byte and the bytes.
pub(crate) type Batch = (u64, Vec<u8>);

/// The largest batch that counts as an answer to input (a keystroke's echo, a line redrawn): see
/// [`Coalescer::wants_precise_flush`].
pub const PRECISE_FLUSH_BYTES: usize = 256;

/// Output read but not yet fanned out.
#[derive(Debug, Default)]
pub(crate) struct Coalescer {
    start: u64,
    bytes: Vec<u8>,
    deadline: Option<Instant>,
    /// Client input was written since the last batch began: the next one answers it.
    input_written: bool,
    /// The pending batch is the first since client input was written.
    answers_input: bool,
}

impl Coalescer {
    /// Adds `bytes`, which start at offset `start` (right after the previous chunk) and were read at `read_at`
    /// (no later than `now`): a batch they start ends [`OUTPUT_COALESCE`] after that. Returns the batches that
    /// are complete: the pending one if its deadline passed by `now`, then any that filled up.
    pub(crate) fn push(&mut self, start: u64, bytes: &[u8], read_at: Instant, now: Instant) -> Vec<Batch> {
        debug_assert!(self.bytes.is_empty() || self.start + self.bytes.len() as u64 == start, "contiguous");
        let mut done = Vec::new();
        // A batch past its deadline goes out before anything newer joins it.
        if self.deadline.is_some_and(|deadline| now >= deadline) {
            done.extend(self.take());
        }
        let mut offset = start;
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.bytes.is_empty() {
                self.start = offset;
                self.deadline = Some(read_at + OUTPUT_COALESCE);
                self.answers_input = std::mem::take(&mut self.input_written);
            }
            let room = MAX_LIVE_OUTPUT_BYTES - self.bytes.len();
            let (now_part, later) = rest.split_at(room.min(rest.len()));
            self.bytes.extend_from_slice(now_part);
            offset += now_part.len() as u64;
            rest = later;
            if self.bytes.len() == MAX_LIVE_OUTPUT_BYTES {
                done.extend(self.take());
            }
        }
        done
    }

    /// Notes that client input was written to the child, so the next batch is likely its answer.
    pub(crate) fn input_written(&mut self) {
        self.input_written = true;
    }

    /// Whether the pending batch answers client input: the first batch begun since input was written, of at
    /// most [`PRECISE_FLUSH_BYTES`]. Someone is waiting to see it, so the actor sends it at its deadline
    /// exactly rather than when the timer happens to wake it; output nobody typed for never is.
    pub(crate) fn wants_precise_flush(&self) -> bool {
        self.answers_input && !self.bytes.is_empty() && self.bytes.len() <= PRECISE_FLUSH_BYTES
    }

    /// When the pending batch must be flushed, if there is one.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Takes the pending batch, if any.
    pub(crate) fn take(&mut self) -> Option<Batch> {
        self.deadline = None;
        if self.bytes.is_empty() {
            return None;
        }
        Some((self.start, std::mem::take(&mut self.bytes)))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Feeds chunks of `size` bytes `gap` apart and returns every batch, the last one taken at the end.
    fn feed(chunks: usize, size: usize, gap: Duration) -> Vec<Batch> {
        let mut coalescer = Coalescer::default();
        let (mut now, mut offset, mut out) = (Instant::now(), 0u64, Vec::new());
        for i in 0..chunks {
            out.extend(coalescer.push(offset, &vec![i as u8; size], now, now));
            offset += size as u64;
            now += gap;
        }
        out.extend(coalescer.take());
        out
    }

    fn assert_contiguous(batches: &[Batch], total: usize) {
        let mut next = 0;
        for (start, bytes) in batches {
            assert_eq!(*start, next, "each batch starts where the previous ended");
            assert!(bytes.len() <= MAX_LIVE_OUTPUT_BYTES);
            next += bytes.len() as u64;
        }
        assert_eq!(next, total as u64);
    }

    #[test]
    fn a_fast_stream_of_small_chunks_becomes_full_batches() {
        let batches = feed(1000, 100, Duration::ZERO);
        assert_contiguous(&batches, 100_000);
        // 100 000 bytes are 12 full batches of 8 KiB and one remainder, not 1000 events.
        assert_eq!(batches.len(), 13);
        assert!(batches[..12].iter().all(|(_, b)| b.len() == MAX_LIVE_OUTPUT_BYTES));
    }

    #[test]
    fn a_batch_is_flushed_once_its_first_byte_is_older_than_the_bound() {
        // Chunks 0.4 ms apart: a batch holds the chunks from the first 1 ms of its life, then goes out.
        let batches = feed(10, 10, Duration::from_micros(400));
        assert_contiguous(&batches, 100);
        let sizes: Vec<usize> = batches.iter().map(|(_, b)| b.len()).collect();
        assert_eq!(sizes, [30, 30, 30, 10]);
    }

    #[test]
    fn slow_chunks_are_not_merged() {
        let batches = feed(5, 10, OUTPUT_COALESCE * 2);
        assert_eq!(batches.len(), 5);
        assert_contiguous(&batches, 50);
    }

    #[test]
    fn the_window_counts_from_when_the_first_byte_was_read() {
        let mut coalescer = Coalescer::default();
        let read_at = Instant::now();
        let now = read_at + Duration::from_micros(300);
        assert!(coalescer.push(0, b"a", read_at, now).is_empty());
        assert_eq!(coalescer.deadline(), Some(read_at + OUTPUT_COALESCE));
        // A chunk read 0.8 ms later joins; one read after the window ended finds the batch gone out first.
        assert!(coalescer.push(1, b"b", read_at + Duration::from_micros(800), now).is_empty());
        let late = read_at + OUTPUT_COALESCE;
        assert_eq!(coalescer.push(2, b"c", late, late), vec![(0, b"ab".to_vec())]);
        assert_eq!(coalescer.deadline(), Some(late + OUTPUT_COALESCE));
    }

    #[test]
    fn only_the_first_small_batch_after_input_wants_a_precise_flush() {
        let mut coalescer = Coalescer::default();
        let t0 = Instant::now();
        coalescer.push(0, b"tick", t0, t0);
        assert!(!coalescer.wants_precise_flush(), "output nobody typed for");
        coalescer.take();
        coalescer.input_written();
        coalescer.push(4, b"a", t0, t0);
        assert!(coalescer.wants_precise_flush(), "the echo of a keystroke");
        coalescer.take();
        coalescer.push(5, b"tick", t0, t0);
        assert!(!coalescer.wants_precise_flush(), "only the first batch after the input");
        coalescer.take();
        coalescer.input_written();
        coalescer.push(9, &[b'x'; PRECISE_FLUSH_BYTES], t0, t0);
        assert!(coalescer.wants_precise_flush(), "up to the size");
        coalescer.push(9 + PRECISE_FLUSH_BYTES as u64, b"y", t0, t0);
        assert!(!coalescer.wants_precise_flush(), "one byte more is bulk output");
        coalescer.take();
        assert!(!coalescer.wants_precise_flush(), "nothing pending");
    }

    #[test]
    fn a_chunk_larger_than_a_batch_is_split_at_the_bound() {
        let mut coalescer = Coalescer::default();
        let now = Instant::now();
        let mut batches = coalescer.push(0, &[7; 20_000], now, now);
        assert!(coalescer.deadline().is_some(), "the remainder waits for more");
        batches.extend(coalescer.take());
        assert_contiguous(&batches, 20_000);
        assert_eq!(batches.iter().map(|(_, b)| b.len()).collect::<Vec<_>>(), [8192, 8192, 3616]);
        assert!(coalescer.take().is_none() && coalescer.deadline().is_none());
    }
}

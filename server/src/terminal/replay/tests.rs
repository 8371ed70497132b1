//! The replay ring's tests: its offsets and bounds against a naive model, and its compressed blocks against an
//! uncompressed twin fed the same bytes.

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

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len() as u64) as usize]
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
            assert!(replay.plain.capacity() <= capacity.max(1) * 2, "allocation stays near the bound");
        }
    }
}

/// Lines of a made-up service log as `tracing` prints them, `len` bytes of them: a timestamp, a level (mostly
/// `INFO`), a span with the request's fields, and what happened, with a status and a latency.
fn log_text(len: usize, seed: u64) -> Vec<u8> {
    const LEVELS: [&str; 8] = ["INFO ", "INFO ", "INFO ", "INFO ", "INFO ", "DEBUG", "WARN ", "ERROR"];
    const METHODS: [&str; 4] = ["GET", "GET", "POST", "DELETE"];
    const PATHS: [&str; 5] = ["/api/v1/session", "/api/v1/message", "/api/v1/file", "/api/v1/event", "/health"];
    const EVENTS: [&str; 5] =
        ["request finished", "response sent", "cache miss, loading", "retrying after a timeout", "upstream closed"];
    const STATUSES: [&str; 6] = ["200", "200", "200", "204", "404", "503"];
    let mut rng = Rng(seed);
    let mut text = Vec::with_capacity(len + 256);
    let mut millis = 45_000_000_u64;
    while text.len() < len {
        millis += rng.below(8);
        let (h, m, s, ms) = (millis / 3_600_000 % 24, millis / 60_000 % 60, millis / 1000 % 60, millis % 1000);
        let line = format!(
            "2026-01-01T{h:02}:{m:02}:{s:02}.{ms:03}Z {} http::server{{method={} path={}/{} client=10.0.0.{}}}: \
             {} status={} latency_ms={}\n",
            rng.pick(&LEVELS),
            rng.pick(&METHODS),
            rng.pick(&PATHS),
            rng.below(64),
            rng.below(16),
            rng.pick(&EVENTS),
            rng.pick(&STATUSES),
            rng.below(100),
        );
        text.extend_from_slice(line.as_bytes());
    }
    text.truncate(len);
    text
}

/// `len` bytes that lz4 cannot make smaller.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    (0..len).map(|_| rng.below(256) as u8).collect()
}

/// Calls `compress_step` until it answers that nothing more would be compressed; answers how many calls.
fn compress_all(replay: &mut Replay) -> usize {
    let mut calls = 1;
    while replay.compress_step() {
        calls += 1;
    }
    calls
}

/// What every read of `replay` must answer, checked against the last kept bytes of the model (`kept`, ending
/// at offset `tail`) and against an uncompressed twin fed the same chunks.
fn check_reads(replay: &Replay, twin: &Replay, kept: &[u8], tail: u64, rng: &mut Rng) {
    let head = tail - kept.len() as u64;
    assert_eq!((replay.head(), replay.tail()), (head, tail));
    assert_eq!((twin.head(), twin.tail()), (head, tail));
    let mut offsets = vec![0, head, tail, head.saturating_sub(1), replay.plain_start(), replay.plain_start() + 1];
    offsets.extend((0..4).map(|_| rng.below(tail + 1)));
    offsets.extend((0..2).map(|_| head + rng.below(kept.len() as u64 + 1)));
    for offset in offsets.into_iter().filter(|offset| *offset <= tail) {
        let got = read(replay, offset);
        let available = offset.max(head);
        assert_eq!(got.available, available);
        assert_eq!(got.end, tail);
        assert_eq!(got.truncated, offset < head);
        assert!(got.bytes == kept[(available - head) as usize..], "read from {offset} of {replay:?}");
        assert!(got == read(twin, offset), "same read as the uncompressed twin from {offset}");
        let mut written = Vec::new();
        replay.write_from(offset, &mut written).expect("a vector takes every byte");
        assert!(written == got.bytes, "write_from {offset} writes what read_from reads");
    }
    assert!(replay.read_from(tail + 1).is_err());
    assert!(replay.kept() == kept);
    if !replay.blocks.is_empty() {
        let compressed = replay.blocks.len() as u64 * BLOCK;
        assert!(compressed <= replay.capacity() as u64, "the compressed part holds at most the capacity");
        let first_end = replay.blocks.end() - compressed + BLOCK;
        assert!(first_end > head, "no block lies wholly before the head");
        assert!(replay.plain.len() >= REPLAY_PLAIN_TAIL_BYTES, "the newest bytes stay plain");
    }
    assert!(replay.plain.capacity() <= replay.capacity() * 2, "allocation stays near the bound");
}

const BLOCK: u64 = REPLAY_BLOCK_BYTES as u64;

#[test]
fn a_compressed_ring_reads_as_the_model_and_an_uncompressed_twin() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    // Text that compresses and bytes that do not, from which every chunk is cut.
    let pools = [log_text(1 << 20, 7), random_bytes(1 << 20, 11)];
    let block = REPLAY_BLOCK_BYTES;
    let least = REPLAY_BLOCK_BYTES + REPLAY_PLAIN_TAIL_BYTES;
    for capacity in [1, 300, block - 1, block, block + 1, least, least + 1, 3 * block + 17, 5 * block] {
        let (mut replay, mut twin) = (Replay::new(capacity), Replay::new(capacity));
        let (mut kept, mut tail) = (Vec::new(), 0_u64);
        let mut compressed_any = false;
        for _ in 0..120 {
            let len = match rng.below(8) {
                0 => rng.below(capacity as u64 * 2 + 2),
                1 | 2 => rng.below(block as u64 + 1),
                _ => rng.below(4096),
            } as usize;
            let pool = &pools[rng.below(3).min(1) as usize];
            let from = rng.below((pool.len() - len.min(pool.len())) as u64 + 1) as usize;
            let chunk: Vec<u8> = pool[from..].iter().chain(pool.iter()).cycle().take(len).copied().collect();
            assert_eq!(replay.append(&chunk), (tail, tail + len as u64));
            assert_eq!(twin.append(&chunk), (tail, tail + len as u64));
            tail += len as u64;
            kept.extend_from_slice(&chunk);
            kept.drain(..kept.len().saturating_sub(capacity));

            match rng.below(6) {
                0 => {
                    compress_all(&mut replay);
                    assert_eq!(
                        replay.plain.capacity(),
                        replay.plain.len(),
                        "the plain part shrinks after the last step"
                    );
                }
                1 | 2 => {
                    replay.compress_step();
                }
                _ => {}
            }
            compressed_any |= !replay.blocks.is_empty();
            check_reads(&replay, &twin, &kept, tail, &mut rng);
        }
        assert_eq!(compressed_any, capacity >= least, "a ring compresses when it can keep a block and the tail");
    }
}

#[test]
fn a_full_ring_of_log_text_compresses_to_a_quarter() {
    let capacity = DEFAULT_REPLAY_BYTES;
    let text = log_text(capacity + 12_345, 3);
    let mut replay = Replay::new(capacity);
    for chunk in text.chunks(4096) {
        replay.append(chunk);
    }
    assert!(replay.memory_bytes() >= capacity, "uncompressed, the ring holds its capacity");
    let calls = compress_all(&mut replay);
    let blocks = (capacity - REPLAY_PLAIN_TAIL_BYTES) / REPLAY_BLOCK_BYTES;
    assert_eq!((calls, replay.blocks.len()), (blocks, blocks), "one block a call, the last one saying so");
    assert_eq!(replay.blocks.plain_blocks(), 0, "log text compresses");
    assert!(replay.memory_bytes() <= capacity / 4, "{} bytes held for a {capacity}-byte ring", replay.memory_bytes());

    let all = read(&replay, replay.head());
    assert!(all.bytes == text[text.len() - capacity..], "every kept byte, as appended");
    assert!(!all.truncated);
    assert!(read(&replay, 0).bytes == all.bytes);
    assert!(!replay.compress_step(), "nothing more to do");
}

#[test]
fn a_read_near_the_tail_decompresses_no_block() {
    let mut replay = Replay::new(1 << 20);
    replay.append(&log_text(1 << 20, 5));
    compress_all(&mut replay);
    let blocks = replay.blocks.len();
    assert!(blocks >= 10);
    let (head, plain_start, tail) = (replay.head(), replay.plain_start(), replay.tail());

    let before = blocks::decompressed();
    assert_eq!(read(&replay, tail - 100).bytes.len(), 100);
    assert_eq!(read(&replay, plain_start).bytes.len() as u64, tail - plain_start);
    assert_eq!(blocks::decompressed(), before, "the plain tail is read without a decompression");

    read(&replay, plain_start - 1);
    assert_eq!(blocks::decompressed(), before + 1, "a read in the last block decompresses that block alone");
    read(&replay, plain_start - BLOCK - 1);
    assert_eq!(blocks::decompressed(), before + 3, "then the two last blocks");
    read(&replay, head);
    assert_eq!(blocks::decompressed(), before + 3 + blocks, "a read from the head decompresses every block");
}

#[test]
fn appending_past_compressed_blocks_drops_them_unread() {
    let capacity = 6 * REPLAY_BLOCK_BYTES;
    let text = log_text(4 * capacity, 9);
    let mut replay = Replay::new(capacity);
    replay.append(&text[..capacity]);
    compress_all(&mut replay);
    assert_eq!(replay.blocks.len(), 5);
    let compressed = replay.memory_bytes();

    let before = blocks::decompressed();
    let mut end = capacity;
    // Half a block: the head moves into the first block, which stays.
    replay.append(&text[end..end + REPLAY_BLOCK_BYTES / 2]);
    end += REPLAY_BLOCK_BYTES / 2;
    assert_eq!(replay.blocks.len(), 5);
    // Past the first two blocks' ends.
    replay.append(&text[end..end + REPLAY_BLOCK_BYTES * 3 / 2]);
    end += REPLAY_BLOCK_BYTES * 3 / 2;
    assert_eq!(replay.blocks.len(), 3, "the blocks the head has passed are dropped");
    assert_eq!(blocks::decompressed(), before, "dropping blocks decompresses none");
    assert!(read(&replay, 0).bytes == text[end - capacity..end]);

    // Past every block, in one chunk longer than the ring: all of them go, and so does their queue.
    replay.append(&text[end..end + capacity + 5]);
    end += capacity + 5;
    assert!(replay.blocks.is_empty());
    assert_eq!(replay.blocks.memory_bytes(), 0);
    assert!(read(&replay, 0).bytes == text[end - capacity..end]);
    assert!(replay.memory_bytes() > compressed, "busy again, the ring is plain");
}

#[test]
fn bytes_that_do_not_compress_are_kept_as_they_are() {
    let capacity = 4 * REPLAY_BLOCK_BYTES;
    let bytes = random_bytes(capacity, 13);
    let mut replay = Replay::new(capacity);
    replay.append(&bytes);
    compress_all(&mut replay);
    assert_eq!((replay.blocks.len(), replay.blocks.plain_blocks()), (3, 3));
    assert!(replay.memory_bytes() <= capacity + 1024, "no block costs more than it holds");
    let before = blocks::decompressed();
    assert!(read(&replay, 1).bytes == bytes[1..]);
    assert_eq!(blocks::decompressed(), before, "a plain block is copied, not decompressed");
}

#[test]
fn compress_steps_leave_a_small_or_busy_ring_alone() {
    // Smaller than a block and the plain tail: nothing to compress, ever.
    let mut small = Replay::new(REPLAY_BLOCK_BYTES + REPLAY_PLAIN_TAIL_BYTES - 1);
    small.append(&log_text(small.capacity(), 1));
    assert!(!small.compress_step());
    assert!(small.blocks.is_empty());

    // A ring compressed, then written to again, compresses only the new bytes' older part.
    let mut replay = Replay::new(8 * REPLAY_BLOCK_BYTES);
    let text = log_text(12 * REPLAY_BLOCK_BYTES, 2);
    replay.append(&text[..3 * REPLAY_BLOCK_BYTES]);
    assert_eq!(compress_all(&mut replay), 2);
    assert_eq!(replay.blocks.len(), 2);
    replay.append(&text[3 * REPLAY_BLOCK_BYTES..7 * REPLAY_BLOCK_BYTES]);
    assert!(replay.compress_step(), "one block compressed, more to come");
    assert_eq!(replay.blocks.len(), 3);
    assert_eq!(compress_all(&mut replay), 3);
    assert_eq!(replay.blocks.len(), 6);
    assert!(read(&replay, 0).bytes == text[..7 * REPLAY_BLOCK_BYTES]);
}

#[test]
fn a_compressed_ring_restores_as_it_reads() {
    let mut replay = Replay::new(4 * REPLAY_BLOCK_BYTES);
    replay.append(&log_text(5 * REPLAY_BLOCK_BYTES + 77, 4));
    compress_all(&mut replay);
    assert!(!replay.blocks.is_empty());
    let restored = Replay::restored(replay.capacity(), replay.head(), &replay.kept());
    assert!(restored.blocks.is_empty(), "a restored ring starts plain");
    for offset in [0, replay.head(), replay.plain_start() - 5, replay.tail()] {
        assert!(read(&restored, offset) == read(&replay, offset));
    }
}

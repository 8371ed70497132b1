//! Measures the replay ring's compression by blocks (SPEC D7), in process: the time of one `compress_step` (one
//! block of `REPLAY_BLOCK_BYTES`) on log text and on dense SGR text, the memory a full 2 MiB ring holds before
//! and after compressing it, and a `read_from` of a compressed ring (from its head, and near its tail) against
//! an uncompressed twin holding the same bytes, in the same run. Each time is the median of several runs.
//! Run: `just bench-replay` (release).

use std::hint::black_box;
use std::time::{Duration, Instant};

use opencode_pty::Replay;
use opencode_pty::limits::{REPLAY_BLOCK_BYTES, REPLAY_PLAIN_TAIL_BYTES};

/// The ring's size: the daemon's default (`DEFAULT_REPLAY_BYTES`).
const RING_BYTES: usize = 2 << 20;

/// Rings compressed per text; each step's time is the median over all of them.
const COMPRESS_RUNS: usize = 5;

/// Reads of each kind; the median is reported.
const READ_RUNS: usize = 21;

/// The chunk the ring is fed in, as the reader thread hands output to the actor.
const CHUNK_BYTES: usize = 16 << 10;

/// A fixed-seed xorshift generator, so every run measures the same bytes.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[usize::try_from(self.below(words.len() as u64)).unwrap_or(0)]
    }
}

/// A coloured service log: a dimmed timestamp, a level in its colour, a module, a message with an address, a
/// status and a duration; now and then a word in 256 colours; CRLF line ends.
fn log_text(len: usize) -> Vec<u8> {
    const LEVELS: [&str; 4] =
        ["\x1b[32mINFO\x1b[0m ", "\x1b[34mDEBUG\x1b[0m", "\x1b[33mWARN\x1b[0m ", "\x1b[31mERROR\x1b[0m"];
    const MODULES: [&str; 5] = ["server::conn", "server::pool", "store::compact", "http::request", "sched::worker"];
    const MESSAGES: [&str; 6] = [
        "GET /api/v1/session",
        "POST /api/v1/message",
        "cache miss for",
        "compiled src/main.rs:42:17 for",
        "worker connected to",
        "retrying the write to",
    ];
    let mut rng = Rng(0x6C6F_6774_6578_7431);
    let mut text = Vec::with_capacity(len + 256);
    let mut millis = 0_u64;
    while text.len() < len {
        millis += rng.below(250);
        let (h, m, s, ms) = (millis / 3_600_000 % 24, millis / 60_000 % 60, millis / 1000 % 60, millis % 1000);
        let colour = if rng.below(8) == 0 { format!("\x1b[38;5;{}m", rng.below(256)) } else { String::new() };
        let line = format!(
            "\x1b[2m2026-01-01T{h:02}:{m:02}:{s:02}.{ms:03}Z\x1b[0m {} {}: {colour}{} 10.0.{}.{}:{}\x1b[0m -> {} in {} ms\r\n",
            rng.pick(&LEVELS),
            rng.pick(&MODULES),
            rng.pick(&MESSAGES),
            rng.below(4),
            rng.below(256),
            8000 + rng.below(100),
            rng.pick(&["200", "200", "200", "204", "404", "500"]),
            rng.below(2000),
        );
        text.extend_from_slice(line.as_bytes());
    }
    text.truncate(len);
    text
}

/// Dense SGR text: every character in its own random style (256 colours, true colour, attributes), the
/// characters random printable ASCII, 80 of them a line. About the worst terminal output for a compressor.
fn sgr_text(len: usize) -> Vec<u8> {
    let mut rng = Rng(0x7367_7274_6578_7432);
    let mut text = Vec::with_capacity(len + 64);
    let mut column = 0;
    while text.len() < len {
        let style = match rng.below(3) {
            0 => format!("\x1b[38;5;{}m", rng.below(256)),
            1 => format!("\x1b[38;2;{};{};{}m", rng.below(256), rng.below(256), rng.below(256)),
            _ => format!("\x1b[{};48;5;{}m", rng.below(10), rng.below(256)),
        };
        text.extend_from_slice(style.as_bytes());
        text.push(b' ' + u8::try_from(rng.below(95)).unwrap_or(0));
        column += 1;
        if column == 80 {
            text.extend_from_slice(b"\x1b[0m\r\n");
            column = 0;
        }
    }
    text.truncate(len);
    text
}

/// A ring of `RING_BYTES` full of `text` (its last `RING_BYTES`), fed in chunks.
fn full_ring(text: &[u8]) -> Replay {
    let mut replay = Replay::new(RING_BYTES);
    for chunk in text.chunks(CHUNK_BYTES) {
        replay.append(chunk);
    }
    replay
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn micros(duration: Duration) -> String {
    format!("{:.1} µs", duration.as_secs_f64() * 1e6)
}

/// Compresses full rings of `text` step by step: each step's time, the steps, and the memory before and after.
fn compress(name: &str, text: &[u8]) -> Replay {
    let mut steps = Vec::new();
    let mut compressed = full_ring(text);
    let before = compressed.memory_bytes();
    for _ in 0..COMPRESS_RUNS {
        compressed = full_ring(text);
        loop {
            let started = Instant::now();
            let more = black_box(&mut compressed).compress_step();
            steps.push(started.elapsed());
            if !more {
                break;
            }
        }
    }
    let per_ring = steps.len() / COMPRESS_RUNS;
    let slowest = steps.iter().max().copied().unwrap_or_default();
    let after = compressed.memory_bytes();
    println!(
        "{name}: one compress_step (a {} KiB block) median {}, slowest {}; {per_ring} steps a ring; memory {} KiB -> {} KiB ({:.1}%)",
        REPLAY_BLOCK_BYTES >> 10,
        micros(median(steps)),
        micros(slowest),
        before >> 10,
        after >> 10,
        after as f64 * 100.0 / before as f64,
    );
    compressed
}

/// The median time of `read_from(offset)` on each ring, and their ratio.
fn read(name: &str, what: &str, compressed: &Replay, plain: &Replay, offset: u64) {
    let time = |replay: &Replay| {
        let times = (0..READ_RUNS)
            .map(|_| {
                let started = Instant::now();
                let read = black_box(replay).read_from(black_box(offset)).map(|read| read.bytes.len());
                let elapsed = started.elapsed();
                assert!(read.is_ok());
                elapsed
            })
            .collect();
        median(times)
    };
    let (compressed_time, plain_time) = (time(compressed), time(plain));
    assert_eq!(compressed.read_from(offset), plain.read_from(offset), "the same answer");
    println!(
        "{name}: read_from({what}, {} KiB) compressed {}, uncompressed {}, ratio {:.1}x",
        (plain.tail() - offset.max(plain.head())) >> 10,
        micros(compressed_time),
        micros(plain_time),
        compressed_time.as_secs_f64() / plain_time.as_secs_f64(),
    );
}

fn main() {
    println!(
        "replay ring of {} KiB, blocks of {} KiB, the newest {} KiB plain",
        RING_BYTES >> 10,
        REPLAY_BLOCK_BYTES >> 10,
        REPLAY_PLAIN_TAIL_BYTES >> 10
    );
    let texts = [("log text", log_text(RING_BYTES + RING_BYTES / 2)), ("dense SGR text", sgr_text(RING_BYTES))];
    for (name, text) in &texts {
        let compressed = compress(name, text);
        let plain = full_ring(text);
        read(name, "head", &compressed, &plain, plain.head());
        read(name, "tail - 4 KiB", &compressed, &plain, plain.tail() - 4096);
        let last_block = plain.tail() - REPLAY_PLAIN_TAIL_BYTES as u64 - 4096;
        read(name, "in the last block", &compressed, &plain, last_block);
    }
}

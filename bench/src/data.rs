//! The generated input every case uses: seeded, log-like text with SGR colours, CRLF line ends, some UTF-8
//! (accents, CJK wide characters, emoji) and the files written from it. The same seed gives the same bytes on
//! every machine, so two runs parse exactly the same input.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The seed of every generated file.
pub(crate) const SEED: u64 = 0x6f70_656e_636f_6465;

/// A small deterministic PRNG (xorshift64*), so the data needs no crate and never changes between versions.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from `seed` (zero is replaced, since xorshift would stay at zero).
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(if seed == 0 { 0x9e37_79b9_7f4a_7c15 } else { seed })
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0; the slight modulo bias does not matter here).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A character in `lo..hi`, or `?` where that is not a scalar value.
    fn char_in(&mut self, lo: u32, hi: u32) -> char {
        let offset = u32::try_from(self.below(u64::from(hi - lo))).unwrap_or(0);
        char::from_u32(lo + offset).unwrap_or('?')
    }
}

/// Words of a build or service log.
const WORDS: [&str; 24] = [
    "INFO",
    "WARN",
    "ERROR",
    "DEBUG",
    "request",
    "done",
    "in",
    "ms",
    "Compiling",
    "src/main.rs:42:17",
    "expected",
    "found",
    "`u32`",
    "-->",
    "worker",
    "connected",
    "retry",
    "0x7ffd1c",
    "GET",
    "/api/v1/session",
    "200",
    "cache",
    "miss",
    "ok",
];

/// Appends one log line: a timestamp, then words, about one in eight of them non-ASCII, frequent SGR colours
/// (16, 256 and true colour), ending with CRLF.
pub(crate) fn push_line(rng: &mut Rng, number: u64, out: &mut Vec<u8>) {
    let (h, m, s, ms) = ((number / 3_600_000) % 24, (number / 60_000) % 60, (number / 1000) % 60, number % 1000);
    out.extend_from_slice(format!("\x1b[2m2026-01-01T{h:02}:{m:02}:{s:02}.{ms:03}Z\x1b[0m").as_bytes());
    for _ in 0..4 + rng.below(10) {
        out.push(b' ');
        match rng.below(10) {
            0 => out.extend_from_slice(format!("\x1b[{}m", 30 + rng.below(8) + 60 * rng.below(2)).as_bytes()),
            1 => out.extend_from_slice(format!("\x1b[38;5;{}m", rng.below(256)).as_bytes()),
            2 => {
                let (r, g, b) = (rng.below(256), rng.below(256), rng.below(256));
                out.extend_from_slice(format!("\x1b[1;38;2;{r};{g};{b}m").as_bytes());
            }
            3 => out.extend_from_slice(b"\x1b[0m"),
            _ => {}
        }
        let mut word = String::new();
        match rng.below(100) {
            0..5 => (0..1 + rng.below(4)).for_each(|_| word.push(rng.char_in(0x4E00, 0x9FA0))),
            5..7 => word.push(rng.char_in(0x1F300, 0x1F650)),
            7..12 => (0..2 + rng.below(6)).for_each(|_| word.push(rng.char_in(0xC0, 0x17F))),
            12..60 => word.push_str(WORDS[usize::try_from(rng.below(WORDS.len() as u64)).unwrap_or(0)]),
            _ => (0..2 + rng.below(9)).for_each(|_| word.push(rng.char_in(0x61, 0x7B))),
        }
        out.extend_from_slice(word.as_bytes());
    }
    out.extend_from_slice(b"\x1b[0m\r\n");
}

/// At most `bytes` of whole log lines from `seed` (never cut inside a line, an escape or a character).
pub(crate) fn log_text(seed: u64, bytes: usize) -> Vec<u8> {
    whole_lines(seed, bytes, push_line)
}

/// At most `bytes` of whole lines from `seed`, each written by `push`.
fn whole_lines(seed: u64, bytes: usize, push: fn(&mut Rng, u64, &mut Vec<u8>)) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(bytes + 512);
    let mut line = Vec::with_capacity(512);
    for number in 0.. {
        line.clear();
        push(&mut rng, number, &mut line);
        if out.len() + line.len() > bytes {
            break;
        }
        out.extend_from_slice(&line);
    }
    out
}

/// Appends one plain log line: a timestamp and words of the same vocabulary with small numbers, no colour and
/// no non-ASCII text (what a build or a service usually prints), ending with CRLF.
pub(crate) fn push_plain_line(rng: &mut Rng, number: u64, out: &mut Vec<u8>) {
    let (h, m, s, ms) = ((number / 3_600_000) % 24, (number / 60_000) % 60, (number / 1000) % 60, number % 1000);
    out.extend_from_slice(format!("2026-01-01T{h:02}:{m:02}:{s:02}.{ms:03}Z").as_bytes());
    for _ in 0..4 + rng.below(10) {
        out.push(b' ');
        if rng.below(4) == 0 {
            out.extend_from_slice(rng.below(1000).to_string().as_bytes());
        } else {
            out.extend_from_slice(WORDS[usize::try_from(rng.below(WORDS.len() as u64)).unwrap_or(0)].as_bytes());
        }
    }
    out.extend_from_slice(b"\r\n");
}

/// At most `bytes` of whole plain log lines from `seed` ([`push_plain_line`]).
pub(crate) fn plain_log_text(seed: u64, bytes: usize) -> Vec<u8> {
    whole_lines(seed, bytes, push_plain_line)
}

/// Exactly `lines` log lines from `seed`.
pub(crate) fn log_lines(seed: u64, lines: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for number in 0..lines {
        push_line(&mut rng, number, &mut out);
    }
    out
}

/// Writes `bytes` to `dir/name` and returns the path.
pub(crate) fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Writes `block` repeated until `total` bytes (the last copy cut) to `dir/name`: a large file without
/// generating it all.
pub(crate) fn write_repeated(dir: &Path, name: &str, block: &[u8], total: u64) -> Result<PathBuf> {
    anyhow::ensure!(!block.is_empty(), "an empty block cannot fill {name}");
    let path = dir.join(name);
    let mut file = BufWriter::new(File::create(&path).with_context(|| format!("creating {}", path.display()))?);
    let mut left = total;
    while left > 0 {
        let take = usize::try_from(left.min(block.len() as u64)).unwrap_or(block.len());
        file.write_all(&block[..take])?;
        left -= take as u64;
    }
    file.flush()?;
    Ok(path)
}

/// A size for people: `256 KiB`, `64 MiB`.
pub(crate) fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", crate::report::number(bytes as f64 / f64::from(1 << 20)))
    } else {
        format!("{} KiB", crate::report::number(bytes as f64 / 1024.0))
    }
}

/// The size of a file in bytes.
pub(crate) fn file_len(path: &Path) -> Result<u64> {
    Ok(std::fs::metadata(path).with_context(|| format!("reading the size of {}", path.display()))?.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_seeded_crlf_utf8_with_sgr_and_wide_characters() {
        let text = log_text(SEED, 64 << 10);
        assert_eq!(text, log_text(SEED, 64 << 10), "same seed, same bytes");
        assert!(text.len() <= 64 << 10 && text.len() > 60 << 10);
        let text = String::from_utf8(text).expect("valid UTF-8");
        assert!(text.ends_with("\r\n"));
        assert_eq!(text.matches('\n').count(), text.matches("\r\n").count(), "every line ends in CRLF");
        assert!(text.contains("\x1b[38;5;") && text.contains("\x1b[1;38;2;"));
        assert!(text.chars().any(|c| ('\u{4E00}'..'\u{9FA0}').contains(&c)), "wide CJK characters");
        assert_eq!(log_lines(SEED, 10).iter().filter(|&&b| b == b'\n').count(), 10);
    }
}

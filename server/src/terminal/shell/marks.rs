//! Finds the shell integration's marks in a terminal's output, `ESC ] 133 ; <kind> [; <field>]* BEL` (or `ESC \`
//! in place of BEL), wherever the reader's chunks split them, and reads those that carry this terminal's nonce.
//!
//! The scanner only reads the bytes the actor already processes: it copies nothing but a mark's own payload (at
//! most [`MAX_MARK_BYTES`] of it), and jumps from one ESC to the next with `memchr`. What it finds never changes
//! the output: the marks stay in the bytes the replay, the emulator and the subscribers get.
//!
//! A mark of ours is `ESC ] 133 ; <P|B|C|D> [; <exit status>] ; opty=<nonce>.<sequence> [; key=value]* BEL`. The
//! prompt's mark is P, not A: A also starts a fresh line in emulators that implement it (libghostty-vt does), and
//! not in those that ignore OSC 133 (xterm.js), so the daemon's screen would differ from a client's replay. A
//! with the nonce is read as P all the same. The
//! sequence grows with every mark the script writes, so a mark is taken only when its sequence is above the last
//! one taken: a copy of this terminal's own earlier output (a `cat` of a recorded session) ends nothing either.

use opencode_pty_protocol::MAX_COMMAND_LINE_BYTES;

use crate::upgrade::{Blob, ScannerPhase, ScannerState};

/// The most bytes of one mark's payload the scanner keeps (16 KiB): a command line cut to
/// [`MAX_COMMAND_LINE_BYTES`] takes at most three bytes per byte percent-encoded, and so does a working
/// directory; what a longer payload holds past it is ignored (the command line is then cut there).
pub(crate) const MAX_MARK_BYTES: usize = 16 * 1024;

const _: () = assert!(3 * MAX_COMMAND_LINE_BYTES + 256 <= MAX_MARK_BYTES);

/// The field that carries the nonce and the sequence: `opty=<nonce>.<sequence>`.
pub(crate) const NONCE_KEY: &str = "opty";

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
/// What comes after ESC: `] 1 3 3 ;`.
const PREFIX: &[u8] = b"]133;";

/// Where the scanner is within the byte stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Outside any sequence of interest.
    Ground,
    /// This many bytes of ESC and [`PREFIX`] matched (1: the ESC alone).
    Prefix(usize),
    /// Inside a mark's payload.
    Payload,
    /// Inside a payload, just after an ESC: a `\` ends the mark (ST), anything else abandons it.
    PayloadEsc,
}

/// A complete OSC 133 sequence, of anyone's: where it starts (its ESC) and ends (just past its terminator) in
/// the output, and its payload after `133;` (at most [`MAX_MARK_BYTES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawMark<'a> {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) payload: &'a [u8],
}

/// The OSC 133 scanner of one terminal, fed every chunk of output in order.
#[derive(Debug)]
pub(crate) struct Scanner {
    state: State,
    /// The offset of the current sequence's ESC.
    start: u64,
    payload: Vec<u8>,
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner { state: State::Ground, start: 0, payload: Vec::new() }
    }
}

impl Scanner {
    /// Scans `bytes`, which start at output offset `offset`, and calls `found` with each OSC 133 sequence that
    /// ends within them, in order.
    pub(crate) fn scan(&mut self, offset: u64, bytes: &[u8], mut found: impl FnMut(RawMark<'_>)) {
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                State::Ground => match memchr::memchr(ESC, &bytes[i..]) {
                    Some(at) => {
                        self.begin(offset + (i + at) as u64);
                        i += at + 1;
                    }
                    None => return,
                },
                State::Prefix(matched) => {
                    let byte = bytes[i];
                    if byte == PREFIX[matched - 1] {
                        self.state = if matched == PREFIX.len() { State::Payload } else { State::Prefix(matched + 1) };
                        if self.state == State::Payload {
                            self.payload.clear();
                        }
                        i += 1;
                    } else {
                        // Not ours: this byte may start the next sequence.
                        self.state = State::Ground;
                    }
                }
                State::Payload => match memchr::memchr2(BEL, ESC, &bytes[i..]) {
                    Some(at) => {
                        self.keep(&bytes[i..i + at]);
                        let end = i + at + 1;
                        if bytes[i + at] == BEL {
                            self.state = State::Ground;
                            found(RawMark { start: self.start, end: offset + end as u64, payload: &self.payload });
                        } else {
                            self.state = State::PayloadEsc;
                        }
                        i = end;
                    }
                    None => {
                        self.keep(&bytes[i..]);
                        return;
                    }
                },
                State::PayloadEsc => {
                    if bytes[i] == b'\\' {
                        self.state = State::Ground;
                        found(RawMark { start: self.start, end: offset + i as u64 + 1, payload: &self.payload });
                        i += 1;
                    } else {
                        // The ESC abandoned the mark and starts a sequence of its own.
                        self.begin(offset + i as u64 - 1);
                    }
                }
            }
        }
    }

    /// An ESC at `at`: a sequence may start there.
    fn begin(&mut self, at: u64) {
        self.state = State::Prefix(1);
        self.start = at;
    }

    /// Keeps payload bytes up to [`MAX_MARK_BYTES`]. Control characters inside an OSC string are ignored by
    /// terminals (except those that end it), and by us.
    fn keep(&mut self, bytes: &[u8]) {
        let room = MAX_MARK_BYTES.saturating_sub(self.payload.len());
        self.payload.extend(bytes.iter().take(room).filter(|&&b| b >= 0x20 && b != 0x7f));
    }
}

impl Scanner {
    /// Where it is, for an upgrade's state.
    pub(crate) fn to_state(&self) -> ScannerState {
        let phase = match self.state {
            State::Ground => ScannerPhase::Ground,
            State::Prefix(matched) => ScannerPhase::Prefix { matched },
            State::Payload => ScannerPhase::Payload,
            State::PayloadEsc => ScannerPhase::PayloadEsc,
        };
        ScannerState { phase, start: self.start, payload: Blob(self.payload.clone()) }
    }

    /// A scanner where `state` left one (a prefix longer than the introducer, or a payload longer than
    /// [`MAX_MARK_BYTES`], is cut to what this scanner would have kept).
    pub(crate) fn from_state(state: &ScannerState) -> Scanner {
        let state_now = match state.phase {
            ScannerPhase::Ground => State::Ground,
            ScannerPhase::Prefix { matched } => State::Prefix(matched.clamp(1, PREFIX.len())),
            ScannerPhase::Payload => State::Payload,
            ScannerPhase::PayloadEsc => State::PayloadEsc,
        };
        let payload = state.payload.0[..state.payload.0.len().min(MAX_MARK_BYTES)].to_vec();
        Scanner { state: state_now, start: state.start, payload }
    }
}

/// What a mark of ours says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// P (or A): the prompt starts; the shell's working directory, when it said.
    Prompt { cwd: Option<Vec<u8>> },
    /// B: the prompt ends, the command line starts.
    Input,
    /// C: the command's output starts; the command line (its bytes, percent-decoded).
    Output { command: Vec<u8> },
    /// D: the command ended, with its exit status when the shell gave one.
    End { exit_code: Option<u32> },
}

/// A mark of ours: its kind and its sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mark {
    pub(crate) kind: Kind,
    pub(crate) sequence: u64,
}

impl Mark {
    /// The mark `payload` (what follows `133;`) says, when it carries `nonce`; `None` for anyone else's.
    pub(crate) fn parse(payload: &[u8], nonce: &str) -> Option<Mark> {
        let mut fields = payload.split(|&b| b == b';');
        let kind = fields.next()?;
        let mut sequence = None;
        let (mut cwd, mut command, mut exit_code) = (None, None, None);
        for (n, field) in fields.enumerate() {
            match split_key(field) {
                Some((key, value)) if key == NONCE_KEY.as_bytes() => sequence = sequence_of(value, nonce),
                Some((b"cwd", value)) => cwd = Some(percent_decode(value)),
                Some((b"cmdline_url", value)) => command = Some(percent_decode(value)),
                Some(_) => {}
                // D's first field is the exit status.
                None if n == 0 && kind == b"D" => exit_code = std::str::from_utf8(field).ok()?.parse().ok(),
                None => {}
            }
        }
        let kind = match kind {
            b"P" | b"A" => Kind::Prompt { cwd },
            b"B" => Kind::Input,
            b"C" => Kind::Output { command: command.unwrap_or_default() },
            b"D" => Kind::End { exit_code },
            _ => return None,
        };
        Some(Mark { kind, sequence: sequence? })
    }
}

/// `key=value`, or `None` for a field without `=`.
fn split_key(field: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = field.iter().position(|&b| b == b'=')?;
    Some((&field[..at], &field[at + 1..]))
}

/// The sequence in `<nonce>.<sequence>`, when the nonce is this terminal's.
fn sequence_of(value: &[u8], nonce: &str) -> Option<u64> {
    let rest = value.strip_prefix(nonce.as_bytes())?.strip_prefix(b".")?;
    std::str::from_utf8(rest).ok()?.parse().ok()
}

/// `%XX` escapes decoded; anything else (a `%` without two hex digits after it included) kept as it is.
pub(crate) fn percent_decode(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if value[i] == b'%'
            && let (Some(high), Some(low)) =
                (value.get(i + 1).copied().and_then(hex), value.get(i + 2).copied().and_then(hex))
        {
            out.push((high * 16 + low) as u8);
            i += 3;
        } else {
            out.push(value[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests;

//! What a peer can make the daemon hold while it sends a frame (SPEC N10): every frame is read into a buffer
//! that grows as its bytes arrive (doubling, never to the declared length up front), and past its first
//! [`UNBUDGETED_FRAME_BYTES`] the buffer's growth is taken from a daemon-wide budget, one for connections that
//! have not authenticated yet ([`MAX_UNAUTHENTICATED_BYTES`]) and one for the owner channel's later frames
//! ([`MAX_AUTHENTICATED_PARTIAL_BYTES`]). A frame that cannot get its share within [`BUDGET_WAIT`] is not stored
//! further: the rest of it is read and dropped, and the connection is answered [`short_of_room`] (a first
//! request then closes, the owner channel reads on).

use std::io::{ErrorKind, Read};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use opencode_pty_protocol::{FRAME_HEADER_BYTES, FrameError, MAX_FRAME_BYTES};

/// The first bytes of every frame's buffer, which no budget counts: each connection may hold that much, so a
/// small request (a `ping`, a `list`, an `own`) is read in full however much of the budgets others hold.
pub const UNBUDGETED_FRAME_BYTES: usize = 64 * 1024;

/// The daemon-wide budget of bytes held by frames of connections that have not authenticated yet (every
/// connection's first request: the token can only be checked once the whole envelope is in, as members may
/// come in any order). With [`UNBUDGETED_FRAME_BYTES`] for each of the `MAX_CONNECTIONS`, what unauthenticated
/// peers can make the daemon hold is at most 128 MiB.
pub const MAX_UNAUTHENTICATED_BYTES: usize = 64 * 1024 * 1024;

/// The daemon-wide budget of bytes held by partial frames of authenticated connections (the owner channel,
/// which reads envelopes for as long as it lasts; superseded owner channels included). Two frames of the
/// largest size fit at once.
pub const MAX_AUTHENTICATED_PARTIAL_BYTES: usize = 2 * MAX_FRAME_BYTES;

/// How long a frame waits for its share of a spent budget before it is dropped and its connection answered.
pub const BUDGET_WAIT: Duration = Duration::from_secs(2);

/// The piece a frame that gets no room is read and dropped in.
const DISCARD_CHUNK_BYTES: usize = 8 * 1024;

// The largest frame fits each budget, so a lone large request is always read.
const _: () =
    assert!(MAX_FRAME_BYTES <= MAX_UNAUTHENTICATED_BYTES && MAX_FRAME_BYTES <= MAX_AUTHENTICATED_PARTIAL_BYTES);

/// The answer to a connection whose frame could not get room in the budget of `kind` (SPEC N10).
pub(crate) fn short_of_room(kind: Kind) -> String {
    let (whose, limit) = match kind {
        Kind::Unauthenticated => ("unauthenticated connections", MAX_UNAUTHENTICATED_BYTES),
        Kind::Authenticated => ("authenticated connections", MAX_AUTHENTICATED_PARTIAL_BYTES),
    };
    format!(
        "the daemon is short of room for requests: frames of {whose} being read hold its {limit}-byte budget; send it again"
    )
}

/// Which budget a frame draws on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A connection's first frame, before its token is checked.
    Unauthenticated,
    /// A later frame on the owner channel.
    Authenticated,
}

/// A daemon-wide budget of bytes, taken as frames grow and given back when they are dropped.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: usize,
    held: Mutex<usize>,
    /// Signalled when bytes are given back.
    freed: Condvar,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub(crate) const fn new(limit: usize) -> Budget {
        Budget { limit, held: Mutex::new(0), freed: Condvar::new() }
    }

    /// Bytes taken now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        *self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `bytes`, waiting until `deadline` for them to be free; false when they were not.
    fn take(&self, bytes: usize, deadline: Instant) -> bool {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        while self.limit.saturating_sub(*held) < bytes {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            held = self.freed.wait_timeout(held, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        *held += bytes;
        true
    }

    fn give_back(&self, bytes: usize) {
        if bytes > 0 {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            *held = held.saturating_sub(bytes);
            drop(held);
            self.freed.notify_all();
        }
    }
}

/// One frame's payload and the share of a budget its buffer holds (given back when it is dropped).
#[derive(Debug)]
pub(crate) struct Payload<'a> {
    bytes: Vec<u8>,
    budget: &'a Budget,
    taken: usize,
}

impl Payload<'_> {
    /// The payload's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Payload<'_> {
    fn drop(&mut self) {
        self.budget.give_back(self.taken);
    }
}

/// Why no payload was read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IntakeError {
    /// The stream ended cleanly before a frame began.
    #[error("the connection ended")]
    Ended,
    /// The frame broke the framing rules (SPEC F2, F10), or reading failed ([`FrameError::Io`]).
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The budget had no room for the frame's next bytes within [`BUDGET_WAIT`].
    #[error("no room in the budget for the frame")]
    ShortOfRoom,
}

/// Reads one frame's payload from `reader`, its buffer growing (doubling) as bytes arrive; past
/// [`UNBUDGETED_FRAME_BYTES`] each growth is taken from `budget` first, waiting at most [`BUDGET_WAIT`]. A frame
/// that gets no room is read to its end without being stored (so the client can read the answer), unless the
/// stream breaks first.
pub(crate) fn read_payload<'a>(reader: &mut impl Read, budget: &'a Budget) -> Result<Payload<'a>, IntakeError> {
    read_payload_waiting(reader, budget, BUDGET_WAIT)
}

/// [`read_payload`], waiting at most `wait` for each share of the budget.
fn read_payload_waiting<'a>(
    reader: &mut impl Read,
    budget: &'a Budget,
    wait: Duration,
) -> Result<Payload<'a>, IntakeError> {
    let mut header = [0; FRAME_HEADER_BYTES];
    let got = fill(reader, &mut header)?;
    match got {
        0 => return Err(IntakeError::Ended),
        FRAME_HEADER_BYTES => {}
        _ => return Err(FrameError::EofInHeader { got }.into()),
    }
    let declared = u32::from_be_bytes(header);
    let expected = match usize::try_from(declared) {
        Ok(len) if len <= MAX_FRAME_BYTES => len,
        _ => return Err(FrameError::FrameTooLarge { declared }.into()),
    };
    let mut payload = Payload { bytes: Vec::new(), budget, taken: 0 };
    let mut got = 0;
    while got < expected {
        if got == payload.bytes.len() {
            let size = expected.min(UNBUDGETED_FRAME_BYTES.max(got.saturating_mul(2)));
            let counted = size.saturating_sub(UNBUDGETED_FRAME_BYTES);
            if counted > payload.taken {
                if !budget.take(counted - payload.taken, Instant::now() + wait) {
                    drop(payload);
                    discard(reader, got, expected)?;
                    return Err(IntakeError::ShortOfRoom);
                }
                payload.taken = counted;
            }
            payload.bytes.reserve_exact(size - got);
            payload.bytes.resize(size, 0);
        }
        let n = fill(reader, &mut payload.bytes[got..])?;
        if n == 0 {
            return Err(FrameError::EofInPayload { got, expected }.into());
        }
        got += n;
    }
    Ok(payload)
}

/// Reads and drops the rest of a frame that could not be stored, `got` of its `expected` bytes read.
fn discard(reader: &mut impl Read, mut got: usize, expected: usize) -> Result<(), FrameError> {
    let mut sink = [0; DISCARD_CHUNK_BYTES];
    while got < expected {
        let n = fill(reader, &mut sink[..(expected - got).min(DISCARD_CHUNK_BYTES)])?;
        if n == 0 {
            return Err(FrameError::EofInPayload { got, expected });
        }
        got += n;
    }
    Ok(())
}

/// Reads into `buf` until it is full or the stream ends; how many bytes were read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> Result<usize, FrameError> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests;

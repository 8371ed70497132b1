//! The state's bytes: a fixed preamble, a JSON header (the [`UpgradeState`] with each [`Blob`](super::Blob) as
//! its length), the blobs' bytes one after the other in the order [`UpgradeState::blobs`] lists them, and an
//! end marker.
//!
//! ```text
//! MAGIC (8 bytes) | format (u32 LE) | header length (u64 LE) | header (JSON) | blob bytes ... | END (8 bytes)
//! ```
//!
//! JSON keeps the header readable and the format's evolution simple (serde's derive, one struct per thing);
//! the blobs stay raw, so a hundred 2 MiB replay rings cost one copy each, not a base64 round trip. Reading
//! checks every length against its bound before it allocates, and refuses a format this build does not read
//! and, for a state with terminals, an emulator snapshot of another libghostty revision.

use std::io::{BufWriter, Read, Write};

use super::error::UpgradeError;
use super::state::{ProcessState, UpgradeState};
use super::{ACCEPTED_STATE_FORMATS, STATE_FORMAT};

/// The first bytes of every state.
pub(crate) const MAGIC: [u8; 8] = *b"OPTYSTAT";

/// The last bytes of every state, after the blobs: a state cut short (or with a blob of the wrong length) is
/// refused rather than half read.
pub(crate) const END: [u8; 8] = *b"OPTYEND\n";

/// The largest header a reader accepts (64 MiB: thousands of processes with their strings and metadata).
pub(crate) const MAX_HEADER_BYTES: u64 = 64 * 1024 * 1024;

/// What the writer buffers between system calls (the blobs are written straight through when larger).
const WRITE_BUFFER_BYTES: usize = 64 * 1024;

impl UpgradeState {
    /// Writes the state in format [`STATE_FORMAT`].
    pub(crate) fn write_to(&self, out: impl Write) -> Result<(), UpgradeError> {
        let header = serde_json::to_vec(self).map_err(UpgradeError::Header)?;
        let mut out = BufWriter::with_capacity(WRITE_BUFFER_BYTES, out);
        out.write_all(&MAGIC)?;
        out.write_all(&STATE_FORMAT.to_le_bytes())?;
        out.write_all(&(header.len() as u64).to_le_bytes())?;
        out.write_all(&header)?;
        for blob in self.blobs() {
            out.write_all(&blob.0)?;
        }
        out.write_all(&END)?;
        out.flush()?;
        Ok(())
    }

    /// The state's bytes.
    #[cfg(test)]
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>, UpgradeError> {
        let mut bytes = Vec::new();
        self.write_to(&mut bytes)?;
        Ok(bytes)
    }

    /// Reads a state this build accepts ([`ACCEPTED_STATE_FORMATS`]), whole: the end marker must follow the
    /// last blob. Checks that this build can take it (see [`Self::check_compatible`]).
    pub(crate) fn read_from(input: impl Read) -> Result<UpgradeState, UpgradeError> {
        let state = UpgradeState::decode(input)?;
        state.check_compatible()?;
        Ok(state)
    }

    /// [`Self::read_from`] without the check that this build can take the state's terminals.
    pub(crate) fn decode(mut input: impl Read) -> Result<UpgradeState, UpgradeError> {
        let mut magic = [0u8; 8];
        read_exact(&mut input, &mut magic)?;
        if magic != MAGIC {
            return Err(UpgradeError::NotAState);
        }
        let mut format = [0u8; 4];
        read_exact(&mut input, &mut format)?;
        let format = u32::from_le_bytes(format);
        if !ACCEPTED_STATE_FORMATS.contains(&format) {
            return Err(UpgradeError::Format { found: format });
        }
        let mut len = [0u8; 8];
        read_exact(&mut input, &mut len)?;
        let len = u64::from_le_bytes(len);
        if len > MAX_HEADER_BYTES {
            return Err(UpgradeError::HeaderTooLarge { len });
        }
        let mut header = vec![0u8; len as usize];
        read_exact(&mut input, &mut header)?;
        // Format 1 is the only one so far; an older format is decoded into its own types and converted here.
        let mut state: UpgradeState = serde_json::from_slice(&header).map_err(UpgradeError::Header)?;
        for blob in state.blobs_mut() {
            read_exact(&mut input, &mut blob.0)?;
        }
        let mut end = [0u8; 8];
        read_exact(&mut input, &mut end)?;
        if end != END {
            return Err(UpgradeError::Malformed("the end marker does not follow the last blob".into()));
        }
        if input.read(&mut [0u8; 1])? != 0 {
            return Err(UpgradeError::Malformed("bytes follow the end marker".into()));
        }
        Ok(state)
    }

    /// Whether this build can take the state: a state with terminals needs the libghostty revision that made
    /// their snapshots (libghostty's snapshot format has no compatibility guarantee).
    pub(crate) fn check_compatible(&self) -> Result<(), UpgradeError> {
        let ours = opencode_pty_vt::ffi::GHOSTTY_REVISION;
        let snapshots = self
            .processes
            .iter()
            .any(|process| matches!(process, ProcessState::Pty(terminal) if terminal.has_snapshot()));
        if snapshots && self.build.ghostty_revision != ours {
            return Err(UpgradeError::VtRevision { found: self.build.ghostty_revision.clone(), ours: ours.to_owned() });
        }
        Ok(())
    }
}

/// `read_exact`, an early end being a truncated state.
fn read_exact(input: &mut impl Read, buffer: &mut [u8]) -> Result<(), UpgradeError> {
    input.read_exact(buffer).map_err(|error| match error.kind() {
        std::io::ErrorKind::UnexpectedEof => UpgradeError::Malformed("the state ends early".into()),
        _ => UpgradeError::Io(error),
    })
}

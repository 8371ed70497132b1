//! The frame the upgrade state travels in across `execve`: a sealed memory file holding a magic, the state's
//! format number, its length and the state itself, so that the new image can tell a state it cannot take (and
//! hand it back to the old one) before it touches anything.
//!
//! Layout, little-endian: `ENVELOPE_MAGIC` (8 bytes), format (`u32`), reserved (`u32`, zero), payload length
//! (`u64`), payload. The magic names the layout itself: a new layout gets a new magic.

use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt as _;

use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};

pub(crate) use super::{ACCEPTED_STATE_FORMATS as STATE_FORMATS, STATE_FORMAT};

/// The first bytes of every envelope (this layout's name).
pub(crate) const ENVELOPE_MAGIC: [u8; 8] = *b"OCPTYUP1";

/// The envelope's header: magic, format, reserved, length.
pub(crate) const HEADER_BYTES: usize = 8 + 4 + 4 + 8;

/// The largest state an upgrade passes: a daemon with a thousand terminals of 2 MiB replay each fits, and a
/// length past it is refused before anything is read.
pub(crate) const MAX_STATE_BYTES: u64 = 4 << 30;

/// The name the memory file shows in `/proc/<pid>/fd` (as `memfd:<name>`).
pub(crate) const STATE_MEMFD_NAME: &str = "opencode-pty-upgrade-state";

/// Why a state could not be written into, or read out of, its envelope.
#[derive(Debug, thiserror::Error)]
pub enum EnvelopeError {
    /// The state is larger than [`MAX_STATE_BYTES`].
    #[error("the upgrade state is {0} bytes, more than the {MAX_STATE_BYTES} an upgrade passes")]
    TooLarge(u64),
    /// The memory file could not be made, written, sealed or read.
    #[error("cannot {action} the upgrade state's memory file: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// What the system said.
        source: io::Error,
    },
    /// The file does not start with [`ENVELOPE_MAGIC`].
    #[error("the upgrade state is not in a layout this build knows (it starts with {0:02x?})")]
    Magic(Vec<u8>),
    /// The file is shorter or longer than its header says.
    #[error("the upgrade state is {found} bytes where its header says {expected}")]
    Length {
        /// What the header says (header included).
        expected: u64,
        /// The file's size.
        found: u64,
    },
}

/// A state as read back: its format and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Handed {
    /// The state's format number.
    pub(crate) format: u32,
    /// The state itself.
    pub(crate) payload: Vec<u8>,
}

/// Writes `payload` of `format` in its envelope into a new memory file, sealed against any change, and returns
/// it (close-on-exec; the handover clears that at the last moment).
pub(crate) fn seal(format: u32, payload: &[u8]) -> Result<OwnedFd, EnvelopeError> {
    let length = payload.len() as u64;
    if length > MAX_STATE_BYTES {
        return Err(EnvelopeError::TooLarge(length));
    }
    let io = |action| move |source| EnvelopeError::Io { action, source };
    let fd = memfd_create(STATE_MEMFD_NAME, MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING)
        .map_err(|e| io("create")(e.into()))?;
    let mut file = File::from(fd);
    file.write_all(&header(format, length)).and_then(|()| file.write_all(payload)).map_err(io("write"))?;
    let seals = SealFlag::F_SEAL_SEAL | SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW | SealFlag::F_SEAL_WRITE;
    fcntl(file.as_fd(), FcntlArg::F_ADD_SEALS(seals)).map_err(|e| io("seal")(e.into()))?;
    Ok(file.into())
}

/// The header of a state of `format` and `length` bytes.
pub(crate) fn header(format: u32, length: u64) -> [u8; HEADER_BYTES] {
    let mut header = [0u8; HEADER_BYTES];
    header[..8].copy_from_slice(&ENVELOPE_MAGIC);
    header[8..12].copy_from_slice(&format.to_le_bytes());
    header[16..24].copy_from_slice(&length.to_le_bytes());
    header
}

/// Reads the state back from its memory file, from offset 0 whatever the file's offset (an image that read it
/// before may have moved it), checking the magic and the length. Whether the format is one this build reads is
/// the caller's question.
pub(crate) fn open(file: &File) -> Result<Handed, EnvelopeError> {
    let io = |action| move |source| EnvelopeError::Io { action, source };
    let size = file.metadata().map_err(io("inspect"))?.len();
    let mut head = [0u8; HEADER_BYTES];
    let got = read_at_most(file, &mut head, 0).map_err(io("read"))?;
    if got < ENVELOPE_MAGIC.len() || head[..8] != ENVELOPE_MAGIC {
        return Err(EnvelopeError::Magic(head[..got.min(ENVELOPE_MAGIC.len())].to_vec()));
    }
    if got < HEADER_BYTES {
        return Err(EnvelopeError::Length { expected: HEADER_BYTES as u64, found: size });
    }
    let format = u32::from_le_bytes(head[8..12].try_into().unwrap_or_default());
    let length = u64::from_le_bytes(head[16..24].try_into().unwrap_or_default());
    if length > MAX_STATE_BYTES {
        return Err(EnvelopeError::TooLarge(length));
    }
    let expected = HEADER_BYTES as u64 + length;
    if size != expected {
        return Err(EnvelopeError::Length { expected, found: size });
    }
    let mut payload = vec![0u8; length as usize];
    file.read_exact_at(&mut payload, HEADER_BYTES as u64).map_err(io("read"))?;
    Ok(Handed { format, payload })
}

/// Reads up to `buf.len()` bytes at `offset`, fewer only at the end of the file.
fn read_at_most(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Seek as _};

    use super::*;

    #[test]
    fn a_sealed_state_reads_back_from_any_offset() {
        let payload = b"terminals and pipes".to_vec();
        let mut file = File::from(seal(7, &payload).unwrap());
        // Another image read part of it first: the shared offset has moved.
        file.rewind().unwrap();
        let mut some = [0u8; 5];
        file.read_exact(&mut some).unwrap();
        assert_eq!(open(&file).unwrap(), Handed { format: 7, payload: payload.clone() });
        assert_eq!(file.stream_position().unwrap(), 5, "read at offsets, the shared position untouched");
        // Sealed: neither written, grown nor shrunk.
        assert!(file.write_all_at(b"x", 0).is_err());
        assert!(file.set_len(3).is_err());
        assert!(file.set_len(1 << 20).is_err());
    }

    #[test]
    fn an_empty_state_is_a_state() {
        let file = File::from(seal(STATE_FORMAT, &[]).unwrap());
        assert_eq!(open(&file).unwrap(), Handed { format: STATE_FORMAT, payload: Vec::new() });
    }

    #[test]
    fn a_foreign_or_truncated_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        std::fs::write(&path, b"{\"json\": true}").unwrap();
        let error = open(&File::open(&path).unwrap()).unwrap_err().to_string();
        assert!(error.starts_with("the upgrade state is not in a layout this build knows"), "{error}");
        let mut bytes = header(STATE_FORMAT, 10).to_vec();
        bytes.extend_from_slice(b"short");
        std::fs::write(&path, &bytes).unwrap();
        let error = open(&File::open(&path).unwrap()).unwrap_err().to_string();
        assert_eq!(error, "the upgrade state is 29 bytes where its header says 34");
        std::fs::write(&path, header(STATE_FORMAT, MAX_STATE_BYTES + 1)).unwrap();
        let error = open(&File::open(&path).unwrap()).unwrap_err();
        assert!(matches!(error, EnvelopeError::TooLarge(_)), "{error}");
    }
}

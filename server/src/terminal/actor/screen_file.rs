//! A terminal's screen file for an in-place upgrade: a sealed memory file holding the emulator's binary snapshot
//! and then the replay ring's bytes, passed across `execve` like the PTY master (`upgrade::ScreenFile`), so that
//! the megabytes of a busy terminal never go through the state's own bytes, and are written by each terminal's
//! actor at once rather than by the daemon one after the other.
//!
//! Most of it is written before the capture, while the terminal runs on ([`Actor::prepare`]): the snapshot at
//! the ring's tail of that moment and the ring up to there. The capture then adds the ring's bytes since
//! ([`Prepared::finish`]), which the successor feeds to the decoded emulator without answering them (this
//! image did). Encoding a snapshot and copying a ring take milliseconds per terminal, which this way the
//! upgrade's pause does not wait for. A prepared snapshot is dropped when the emulator changes other than by
//! output (a resize), or when the ring no longer holds every byte since it was taken; the capture then makes one.

use std::fs::File;
use std::io::Write as _;
use std::os::fd::{AsFd as _, OwnedFd};

use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};

use super::Actor;
use crate::terminal::replay::Replay;
use crate::upgrade::ScreenFile;

/// The name a screen file shows in `/proc/<pid>/fd` (as `memfd:<name>`).
const SCREEN_MEMFD_NAME: &str = "opencode-pty-screen";

/// A snapshot written while the terminal ran on, with the ring up to it.
#[derive(Debug)]
pub(super) struct Prepared {
    file: File,
    snapshot_len: u64,
    /// The offset of the first ring byte in the file.
    head: u64,
    /// The offset the snapshot was taken at: the ring's tail then.
    pub(super) at: u64,
}

/// A screen file written: what the state says of it (its `fd` is the caller's to set) and where its ring starts.
#[derive(Debug)]
pub(super) struct Written {
    pub(super) file: ScreenFile,
    pub(super) ring_head: u64,
}

impl Actor {
    /// Writes the screen file's snapshot and ring as they are now; the terminal runs on. Nothing is prepared
    /// while the output is inside a control sequence longer than a snapshot carries (the capture then reads it
    /// to its end) or when no memory file can be made. Answers the bytes written.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn prepare(&mut self) -> u64 {
        self.prepared = None;
        let snapshot = match self.emulator().snapshot() {
            Ok(snapshot) => snapshot,
            Err(_) => return 0,
        };
        match new_file().and_then(|mut file| {
            file.write_all(&snapshot)?;
            write_ring(&mut file, &self.replay, self.replay.head())?;
            Ok(file)
        }) {
            Ok(file) => {
                let (head, at) = (self.replay.head(), self.replay.tail());
                self.prepared = Some(Prepared { file, snapshot_len: snapshot.len() as u64, head, at });
                snapshot.len() as u64 + (at - head)
            }
            Err(error) => {
                tracing::warn!(id = self.parts.id, %error, "cannot prepare the screen for the upgrade");
                0
            }
        }
    }
}

impl Prepared {
    /// Adds the ring's bytes since the snapshot and seals the file. The ring must still hold them
    /// (`self.at >= replay.head()`).
    pub(super) fn finish(mut self, replay: &Replay) -> std::io::Result<(OwnedFd, Written)> {
        write_ring(&mut self.file, replay, self.at)?;
        let ring_len = replay.tail() - self.head;
        let fd = seal(self.file)?;
        Ok((
            fd,
            Written { file: ScreenFile { fd: -1, snapshot_len: self.snapshot_len, ring_len }, ring_head: self.head },
        ))
    }
}

/// A sealed screen file of `snapshot` and every byte `replay` keeps.
pub(super) fn write(snapshot: &[u8], replay: &Replay) -> std::io::Result<(OwnedFd, Written)> {
    let mut file = new_file()?;
    file.write_all(snapshot)?;
    write_ring(&mut file, replay, replay.head())?;
    let ring_len = replay.tail() - replay.head();
    let fd = seal(file)?;
    let written = ScreenFile { fd: -1, snapshot_len: snapshot.len() as u64, ring_len };
    Ok((fd, Written { file: written, ring_head: replay.head() }))
}

/// A new memory file (close-on-exec: the upgrade clears that for the descriptors it passes).
fn new_file() -> std::io::Result<File> {
    let fd = memfd_create(SCREEN_MEMFD_NAME, MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING)?;
    Ok(File::from(fd))
}

/// Appends the ring's bytes from `from` to its tail (decompressing its blocks one at a time).
fn write_ring(file: &mut File, replay: &Replay, from: u64) -> std::io::Result<()> {
    replay.write_from(from, file)
}

/// Seals the file against any change: the successor reads what was written.
fn seal(file: File) -> std::io::Result<OwnedFd> {
    let seals = SealFlag::F_SEAL_SEAL | SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW | SealFlag::F_SEAL_WRITE;
    fcntl(file.as_fd(), FcntlArg::F_ADD_SEALS(seals))?;
    Ok(file.into())
}

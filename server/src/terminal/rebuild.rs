//! The emulator of a terminal an in-place upgrade restored, rebuilt off the terminal's actor (issue 30): decoding
//! libghostty's snapshot and feeding it the output that followed costs milliseconds per terminal, and a
//! hundred terminals restored at once must not each wait for all of that before their output flows again. So a
//! restored actor starts serving at once (its reader reads, the ring grows, subscribers get their bytes) while
//! one thread of the restore, the rebuilder, makes each emulator in turn; the actor then takes its emulator and
//! feeds it the output it read meanwhile, answering that output's queries and telling its title then.
//!
//! An actor that needs its emulator before the rebuilder got to it (a resize, a snapshot, another upgrade, or a
//! ring about to drop bytes the emulator has not seen) makes it itself; one the rebuilder is making is waited
//! for (a decode's time). Each job is taken once, by whichever comes first.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt as _;
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender, bounded};
use opencode_pty_vt::{Detached, Terminal};

use crate::upgrade::TerminalState;

/// Where a restored terminal's emulator snapshot and ring bytes are: in the state itself (format 1, or when
/// the predecessor could not make a file), or in the terminal's screen file (`upgrade::ScreenFile`).
#[derive(Debug)]
pub(crate) enum ScreenBytes {
    /// In memory.
    Inline {
        /// The snapshot (empty: none).
        snapshot: Vec<u8>,
        /// The ring's bytes, from the ring's head.
        ring: Vec<u8>,
    },
    /// In the screen file: the snapshot, then the ring's bytes.
    File {
        /// The file.
        file: File,
        /// How many bytes of it are the snapshot.
        snapshot_len: u64,
    },
}

impl ScreenBytes {
    /// The snapshot and ring bytes of `state` (its inline blobs are moved out) with its screen file, if any.
    pub(crate) fn take(state: &mut TerminalState, file: Option<OwnedFd>) -> ScreenBytes {
        match (state.screen_file, file) {
            (Some(screen), Some(file)) => {
                ScreenBytes::File { file: File::from(file), snapshot_len: screen.snapshot_len }
            }
            _ => ScreenBytes::Inline {
                snapshot: std::mem::take(&mut state.vt_snapshot.0),
                ring: std::mem::take(&mut state.replay.bytes.0),
            },
        }
    }

    /// The emulator's snapshot.
    fn snapshot(&self) -> std::io::Result<Vec<u8>> {
        match self {
            ScreenBytes::Inline { snapshot, .. } => Ok(snapshot.clone()),
            ScreenBytes::File { file, snapshot_len } => {
                let mut bytes = vec![0; usize::try_from(*snapshot_len).map_err(std::io::Error::other)?];
                file.read_exact_at(&mut bytes, 0)?;
                Ok(bytes)
            }
        }
    }

    /// `len` of the ring's bytes, `skip` bytes after its head.
    pub(crate) fn ring(&self, skip: u64, len: u64) -> std::io::Result<Vec<u8>> {
        let too_far = || std::io::Error::other("past the ring's end");
        let (skip, len) = (usize::try_from(skip).map_err(|_| too_far())?, usize::try_from(len).map_err(|_| too_far())?);
        match self {
            ScreenBytes::Inline { ring, .. } => {
                ring.get(skip..skip.checked_add(len).ok_or_else(too_far)?).map(<[u8]>::to_vec).ok_or_else(too_far)
            }
            ScreenBytes::File { file, snapshot_len } => {
                let mut bytes = vec![0; len];
                file.read_exact_at(&mut bytes, snapshot_len + skip as u64)?;
                Ok(bytes)
            }
        }
    }
}

/// What making one terminal's emulator takes.
#[derive(Debug)]
pub(crate) struct Job {
    /// The terminal, for logs.
    id: u64,
    /// The snapshot and the ring.
    source: Arc<ScreenBytes>,
    /// Whether there is a snapshot.
    has_snapshot: bool,
    /// The ring's head in the state.
    head: u64,
    /// Where the snapshot was taken.
    snapshot_at: u64,
    /// The ring's tail in the state: the predecessor's emulator had taken everything before it.
    tail: u64,
    /// The size, for an emulator made from the ring alone.
    cols: u16,
    /// The size.
    rows: u16,
    /// The history it keeps.
    scrollback_lines: usize,
    /// Where the rebuilder hands the emulator.
    done: Sender<Option<Detached>>,
}

impl Job {
    /// The emulator as the predecessor's was at the ring's tail: decoded from its snapshot and fed the ring
    /// from the snapshot's offset, or, without a snapshot (or one that does not read), a fresh one fed the
    /// whole ring. What it answered and the title it set are dropped: the predecessor did both.
    fn build(&self) -> Option<Terminal> {
        let decoded = if self.has_snapshot {
            match self
                .source
                .snapshot()
                .map_err(|e| e.to_string())
                .and_then(|bytes| Terminal::from_snapshot(&bytes, self.scrollback_lines).map_err(|e| e.to_string()))
            {
                Ok(vt) => Some((vt, self.snapshot_at)),
                Err(error) => {
                    tracing::error!(id = self.id, %error,
                        "the terminal's screen cannot be read from the upgrade's state: rebuilt from its replay buffer");
                    None
                }
            }
        } else {
            None
        };
        let (mut vt, from) = match decoded {
            Some(decoded) => decoded,
            None => (Terminal::new(self.cols, self.rows, self.scrollback_lines).ok()?, self.head),
        };
        let from = from.clamp(self.head, self.tail);
        match self.source.ring(from - self.head, self.tail - from) {
            Ok(bytes) => vt.write(&bytes),
            Err(error) => tracing::error!(id = self.id, %error, "the terminal's replay buffer cannot be read"),
        }
        vt.take_replies();
        vt.take_title_changed();
        Some(vt)
    }
}

/// A job taken once, by the rebuilder or by its actor.
type Slot = Mutex<Option<Job>>;

/// A restored actor's emulator on its way.
#[derive(Debug)]
pub(crate) struct Rebuilding {
    slot: Arc<Slot>,
    /// Where the rebuilder hands it.
    pub(crate) ready: Receiver<Option<Detached>>,
    /// Where the rebuilt emulator stands in the output: the actor feeds it the ring from there.
    pub(crate) caught_up_to: u64,
    /// Whether the alternate screen was active there (what `info` says meanwhile).
    pub(crate) alternate_screen: bool,
}

impl Rebuilding {
    /// The emulator: made here when the rebuilder has not taken the job, else waited for (the rebuilder is
    /// making it; without it, after a panic there, `None`).
    pub(crate) fn wait(self) -> Option<Terminal> {
        let job = self.slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        match job {
            Some(job) => job.build(),
            None => self.ready.recv().ok().flatten().map(Detached::attach),
        }
    }

    /// The emulator the rebuilder handed (`Rebuilding::ready` said so).
    pub(crate) fn taken(handed: Option<Detached>) -> Option<Terminal> {
        handed.map(Detached::attach)
    }
}

/// The jobs of one restore, made in order by one thread once [`Rebuilder::start`] is called.
#[derive(Debug, Default)]
pub(crate) struct Rebuilder {
    slots: Vec<Arc<Slot>>,
}

impl Rebuilder {
    /// Adds the job of the terminal `state` describes, whose bytes are in `source`; answers what its actor
    /// waits on.
    pub(crate) fn add(&mut self, state: &TerminalState, source: Arc<ScreenBytes>) -> Rebuilding {
        let (done, ready) = bounded(1);
        let tail = state.ring_tail();
        let job = Job {
            id: state.id,
            source,
            has_snapshot: state.has_snapshot(),
            head: state.replay.head,
            snapshot_at: state.snapshot_at.unwrap_or(tail),
            tail,
            cols: state.cols,
            rows: state.rows,
            scrollback_lines: state.scrollback_lines,
            done,
        };
        let slot = Arc::new(Mutex::new(Some(job)));
        self.slots.push(slot.clone());
        Rebuilding { slot, ready, caught_up_to: tail, alternate_screen: state.alternate_screen.unwrap_or(false) }
    }

    /// Makes every job no actor took yet, in order, on a thread of its own (here, when no thread can be
    /// started).
    pub(crate) fn start(self) {
        if self.slots.is_empty() {
            return;
        }
        let slots = Arc::new(Mutex::new(Some(self.slots)));
        let run = {
            let slots = slots.clone();
            move || {
                let Some(slots) = slots.lock().unwrap_or_else(|e| e.into_inner()).take() else { return };
                for slot in slots {
                    let job = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
                    if let Some(job) = job {
                        // The actor may have stopped meanwhile: then nobody waits.
                        let _ = job.done.send(job.build().map(Terminal::detach));
                    }
                }
            }
        };
        if let Err(error) = std::thread::Builder::new().name("opencode-pty-rebuild".into()).spawn(run.clone()) {
            tracing::warn!(%error, "cannot start a thread to rebuild the restored emulators: rebuilt now");
            run();
        }
    }
}

#[cfg(test)]
mod tests;

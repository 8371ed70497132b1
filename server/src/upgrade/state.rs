//! What a daemon hands its successor across `execve`, as plain data: the build that wrote it, the daemon's own
//! facts, and one entry per process ([`TerminalState`], [`PipeProcessState`]). Large byte strings (a replay
//! ring, an emulator snapshot) are [`Blob`]s: the header names only their lengths, and their bytes follow it
//! (see `encoding.rs`). Nothing here refers to a live object: descriptors are recorded by number, and the
//! successor adopts each number it is told of.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::pipe::PipeProcessState;
use super::terminal::TerminalState;

/// The most bytes one blob may hold when a state is read (1 GiB: far above a replay ring or an emulator with
/// its history, far below what would exhaust the successor).
pub(crate) const MAX_BLOB_BYTES: u64 = 1 << 30;

/// A state as one build wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpgradeState {
    /// Which build captured it.
    pub(crate) build: Build,
    /// The daemon's own facts.
    pub(crate) daemon: DaemonState,
    /// Every process, in id order.
    pub(crate) processes: Vec<ProcessState>,
}

/// The build that captured a state: what the successor checks before it takes anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Build {
    /// The daemon's version (`CARGO_PKG_VERSION`).
    pub(crate) version: String,
    /// Its protocol version.
    pub(crate) protocol: u32,
    /// The Ghostty revision its libghostty-vt was built from: an emulator snapshot is only read by the same
    /// revision (libghostty's snapshot format has no compatibility guarantee).
    pub(crate) ghostty_revision: String,
    /// The loaded library's own version string, for messages.
    pub(crate) ghostty_version: String,
}

impl Build {
    /// This build.
    pub(crate) fn current() -> Build {
        Build {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            protocol: opencode_pty_protocol::PROTOCOL_VERSION,
            ghostty_revision: opencode_pty_vt::ffi::GHOSTTY_REVISION.to_owned(),
            ghostty_version: opencode_pty_vt::library_version(),
        }
    }
}

/// The daemon's facts, beside its processes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DaemonState {
    /// The id the next process gets (ids are never reused).
    pub(crate) next_id: u64,
    /// The ownership, when the daemon has one to hand on.
    pub(crate) owner: Option<OwnerState>,
    /// Descriptors the daemon keeps open across `execve` beside its processes' (its socket, its lock, the
    /// owner's connection, its guardian's pipe), by what they are: the successor adopts each by its number.
    pub(crate) descriptors: BTreeMap<String, i32>,
    /// The registration the daemon published (its instance, token and socket stay; the successor rewrites only
    /// what its own build changes: protocol, features). Absent in a state no daemon wrote (tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) registration: Option<opencode_pty_protocol::Registration>,
    /// The pid of the guardian whose pipe `descriptors` names: still the daemon's child, which the successor
    /// supervises and reaps. Absent without a guardian.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) guardian_pid: Option<u32>,
}

/// The ownership (`daemon/serving/ownership.rs`): the current owner's generation and where it is in its life.
/// Deadlines are kept as the time left when the state was captured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OwnerState {
    /// The generation of the last successful claim.
    pub(crate) generation: u64,
    /// Where the ownership was.
    pub(crate) phase: OwnerPhase,
}

/// Where the ownership was when the state was captured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(crate) enum OwnerPhase {
    /// Not claimed yet: it stops when `left_ms` have passed.
    Starting {
        /// Milliseconds left to the first claim's deadline.
        left_ms: u64,
    },
    /// Claimed, maybe with a handoff prepared.
    Owned {
        /// The prepared handoff, if any.
        handoff: Option<HandoffState>,
    },
    /// The owner left after preparing a handoff: it stops when the handoff expires.
    Waiting {
        /// The handoff the successor must claim.
        handoff: HandoffState,
    },
}

/// A prepared handoff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HandoffState {
    /// The secret a successor passes to `own`.
    pub(crate) ticket: String,
    /// When it expires, in milliseconds since the Unix epoch (as its owner was told).
    pub(crate) expires_at: u64,
    /// Milliseconds it had left when the state was captured.
    pub(crate) left_ms: u64,
}

/// One process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(crate) enum ProcessState {
    /// A terminal.
    Pty(Box<TerminalState>),
    /// A pipe process.
    Pipe(Box<PipeProcessState>),
}

impl ProcessState {
    /// The process's id.
    pub(crate) fn id(&self) -> u64 {
        match self {
            ProcessState::Pty(terminal) => terminal.id,
            ProcessState::Pipe(pipe) => pipe.id,
        }
    }

    /// Its blobs, in the order their bytes follow the header.
    pub(crate) fn blobs(&self) -> Vec<&Blob> {
        match self {
            ProcessState::Pty(terminal) => terminal.blobs(),
            ProcessState::Pipe(pipe) => vec![&pipe.unwritten],
        }
    }

    /// The same, to fill them.
    pub(crate) fn blobs_mut(&mut self) -> Vec<&mut Blob> {
        match self {
            ProcessState::Pty(terminal) => terminal.blobs_mut(),
            ProcessState::Pipe(pipe) => vec![&mut pipe.unwritten],
        }
    }
}

/// Which child a process has: its pid (also its process group id) and, to check that the successor finds the
/// same process, its session and start time (`/proc/<pid>/stat`), when `/proc` told them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChildState {
    /// The child's pid.
    pub(crate) pid: u32,
    /// Its session id.
    pub(crate) session: Option<u32>,
    /// Its start time, in clock ticks after boot.
    pub(crate) start: Option<u64>,
}

/// How a child ended (`process::ExitStatus`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExitState {
    /// The exit status, when it exited.
    pub(crate) exit_code: Option<u32>,
    /// The signal's name, when a signal killed it.
    pub(crate) signal: Option<String>,
}

/// Bytes that travel after the header: the header holds only their length (a JSON number), and their bytes
/// follow it in the order [`UpgradeState::blobs`] lists them.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct Blob(pub(crate) Vec<u8>);

impl std::fmt::Debug for Blob {
    // Megabytes of terminal output: the length only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Blob({} bytes)", self.0.len())
    }
}

impl Serialize for Blob {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0.len() as u64)
    }
}

impl<'de> Deserialize<'de> for Blob {
    /// A blob of the length the header says, zeroed until its bytes are read (a large zeroed allocation costs
    /// no memory before it is written).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let len = u64::deserialize(deserializer)?;
        if len > MAX_BLOB_BYTES {
            return Err(serde::de::Error::custom(format!("a blob of {len} bytes is over {MAX_BLOB_BYTES}")));
        }
        let len = usize::try_from(len).map_err(serde::de::Error::custom)?;
        Ok(Blob(vec![0; len]))
    }
}

impl UpgradeState {
    /// The state this build hands on: the daemon's facts and its captured processes.
    pub(crate) fn new(daemon: DaemonState, processes: Vec<ProcessState>) -> UpgradeState {
        UpgradeState { build: Build::current(), daemon, processes }
    }

    /// Every blob, in the order their bytes follow the header.
    pub(crate) fn blobs(&self) -> Vec<&Blob> {
        self.processes.iter().flat_map(ProcessState::blobs).collect()
    }

    /// The same, to fill them.
    pub(crate) fn blobs_mut(&mut self) -> Vec<&mut Blob> {
        self.processes.iter_mut().flat_map(ProcessState::blobs_mut).collect()
    }

    /// Every descriptor the state names (the daemon's and its processes'), which the successor adopts.
    pub(crate) fn descriptors(&self) -> Vec<i32> {
        let processes = self.processes.iter().flat_map(|process| match process {
            ProcessState::Pty(terminal) => {
                std::iter::once(terminal.master_fd).chain(terminal.screen_file.map(|file| file.fd)).collect::<Vec<_>>()
            }
            ProcessState::Pipe(pipe) => pipe.pipe_fd.into_iter().chain(pipe.output_fd).collect(),
        });
        self.daemon.descriptors.values().copied().chain(processes).collect()
    }
}

//! A pipe process as the state carries it: its child and what it reports of itself, the descriptors of its
//! output pipe and output file (whose position goes with the descriptor), the counts, the metadata, and where
//! it is on its way to `exited`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::state::{Blob, ChildState, ExitState};

/// One pipe process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PipeProcessState {
    /// The process id.
    pub(crate) id: u64,
    /// The child.
    pub(crate) child: ChildState,
    /// The program and its arguments.
    pub(crate) command: Vec<String>,
    /// The working directory it started in.
    pub(crate) cwd: String,
    /// The grouping key.
    pub(crate) group_id: String,
    /// The output file's path, as the request gave it.
    pub(crate) output_path: String,
    /// When it started, in milliseconds since the Unix epoch.
    pub(crate) started_at: u64,
    /// The read end of the child's output pipe, while the output has not ended.
    pub(crate) pipe_fd: Option<i32>,
    /// The output file, while the output has not ended and writing it has not failed.
    pub(crate) output_fd: Option<i32>,
    /// The output file's position when the state was captured (the descriptor carries it; this is a check).
    pub(crate) output_position: Option<u64>,
    /// After the child's exit, how long the reader still drains the pipe (`pipe::LINGER`), in milliseconds.
    pub(crate) linger_left_ms: Option<u64>,
    /// Output read from the pipe and counted, not yet in the file (a file that took no more when the state was
    /// captured): written before anything more is read.
    pub(crate) unwritten: Blob,
    /// Bytes read from the pipe so far.
    pub(crate) tail: u64,
    /// Newlines that reached the file.
    pub(crate) lines: u64,
    /// Why writing the file (or reading the pipe) stopped.
    pub(crate) output_error: Option<String>,
    /// The client's metadata.
    pub(crate) metadata: Map<String, Value>,
    /// How the child ended, once the wait thread said.
    pub(crate) child_end: Option<PipeChildEnd>,
    /// Whether the output has ended.
    pub(crate) output_ended: bool,
    /// When `exited` (or the failure) was published, if it was.
    pub(crate) exited_at: Option<u64>,
}

/// What was learnt of a pipe process's child.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(crate) enum PipeChildEnd {
    /// It exited (it is still a zombie, reaped by whoever terminates it).
    Exited(ExitState),
    /// Waiting for it failed: its pid is never touched again.
    Lost(String),
}

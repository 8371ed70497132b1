//! The typed one-shot requests of [`Client`]: one method per op that is answered by a single response and
//! needs nothing kept open. Each sends the protocol's generated request type through [`Client::exchange`], which
//! reads the response type the schema says answers it, and returns what the caller needs of it; `error` becomes
//! [`ClientError::Daemon`] and any other unexpected type [`ClientError::Unexpected`]. Every method can also fail
//! as [`Client::request`] does.
//!
//! Nothing the daemon checks is checked here again; what cannot be encoded at all (a zero terminal size) is
//! ruled out by the argument types.

use std::num::NonZeroU16;

use opencode_pty_protocol::{
    CommandsRequest, ControlRequest, GetRequest, InputRequest, ListRequest, Mode, OptIn, PingRequest, ProcessInfo,
    ReadRowsRequest, RenameRequest, ReplayRequest, Request, ResizeRequest, SetMetadataRequest, ShutdownRequest, Signal,
    SignalRequest, SnapshotRequest, TerminateRequest, WriteRequest,
};
use serde_json::{Map, Value};

use crate::client::Client;
use crate::error::ClientError;
use crate::params::{CreatePipe, CreatePty};
use crate::types::{Commands, Pong, Replay, Rows, Snapshot, encode_base64};

impl Client {
    /// `ping`: who the daemon is and what it speaks. The answer is not checked against the registration; see
    /// [`Client::verify`].
    pub async fn ping(&self) -> Result<Pong, ClientError> {
        self.exchange(PingRequest).await
    }

    /// `list`: the processes of one mode, in creation order, all in one answer (see [`Client::list_all`] for
    /// them in pages).
    pub async fn list(&self, mode: Mode) -> Result<Vec<ProcessInfo>, ClientError> {
        self.list_with(mode, &[]).await
    }

    /// `list` whose processes carry the members of the features `features` names (SPEC V7; `[OptIn::Input]`:
    /// `pty.input` and `pty.alternate_screen`, what each terminal waits for; `[OptIn::Commands]`: `pty.shell`,
    /// where a terminal started with shell integration is).
    pub async fn list_with(&self, mode: Mode, features: &[OptIn]) -> Result<Vec<ProcessInfo>, ClientError> {
        Ok(self.exchange(ListRequest { after: None, features: features.to_vec(), limit: None, mode }).await?.processes)
    }

    /// `get`: one process of either mode.
    pub async fn get(&self, id: u64) -> Result<ProcessInfo, ClientError> {
        self.get_with(id, &[]).await
    }

    /// `get` with the members of the features `features` names (SPEC V7; `[OptIn::Input]`: what the terminal
    /// waits for, looked at afresh; `[OptIn::Commands]`: `pty.shell`, whether its shell is at its prompt).
    pub async fn get_with(&self, id: u64, features: &[OptIn]) -> Result<ProcessInfo, ClientError> {
        Ok(self.exchange(GetRequest { features: features.to_vec(), id }).await?.process)
    }

    /// `create_pty`: starts a program in a new pseudo-terminal and returns it.
    pub async fn create_pty(&self, params: CreatePty) -> Result<ProcessInfo, ClientError> {
        Ok(self.exchange(params).await?.process)
    }

    /// `create_pipe`: starts a program without a terminal, its output going to a file, and returns it.
    pub async fn create_pipe(&self, params: CreatePipe) -> Result<ProcessInfo, ClientError> {
        Ok(self.exchange(params).await?.process)
    }

    /// `write`: sends bytes to a PTY's input as the attachment (`None` only while the terminal has no
    /// controller).
    pub async fn write(&self, id: u64, attachment_id: Option<&str>, data: &[u8]) -> Result<(), ClientError> {
        let attachment_id = attachment_id.map(str::to_owned);
        self.exchange(WriteRequest { attachment_id, data_base64: encode_base64(data), id }).await.map(drop)
    }

    /// `resize`: resizes a PTY as the attachment (`None` only while the terminal has no controller).
    pub async fn resize(
        &self,
        id: u64,
        attachment_id: Option<&str>,
        cols: NonZeroU16,
        rows: NonZeroU16,
    ) -> Result<(), ClientError> {
        let attachment_id = attachment_id.map(str::to_owned);
        self.exchange(ResizeRequest { attachment_id, cols, id, rows }).await.map(drop)
    }

    /// `control`: makes a subscribed attachment the PTY's controller and resizes the terminal to its size.
    pub async fn control(
        &self,
        id: u64,
        attachment_id: &str,
        cols: NonZeroU16,
        rows: NonZeroU16,
    ) -> Result<(), ClientError> {
        let attachment_id = attachment_id.to_owned();
        self.exchange(ControlRequest { attachment_id, cols, id, rows }).await.map(drop)
    }

    /// `input`: what [`Client::control`] does, then sends the bytes, in one step.
    pub async fn input(
        &self,
        id: u64,
        attachment_id: &str,
        cols: NonZeroU16,
        rows: NonZeroU16,
        data: &[u8],
    ) -> Result<(), ClientError> {
        let attachment_id = attachment_id.to_owned();
        let data_base64 = encode_base64(data);
        self.exchange(InputRequest { attachment_id, cols, data_base64, id, rows }).await.map(drop)
    }

    /// `snapshot`: a PTY's visible screen as text and as a decoded VT checkpoint, with the cursor.
    pub async fn snapshot(&self, id: u64) -> Result<Snapshot, ClientError> {
        self.snapshot_with(id, &[]).await
    }

    /// `snapshot` whose `process` carries the members of the features `features` names (SPEC V7).
    pub async fn snapshot_with(&self, id: u64, features: &[OptIn]) -> Result<Snapshot, ClientError> {
        Snapshot::try_from(self.request(Request::from(SnapshotRequest { features: features.to_vec(), id })).await?)
    }

    /// `read_rows`: the last `rows` physical rows of a PTY's active screen (`None`: its current height).
    pub async fn read_rows(&self, id: u64, rows: Option<NonZeroU16>) -> Result<Rows, ClientError> {
        self.read_rows_with(id, rows, &[]).await
    }

    /// `read_rows` whose `process` carries the members of the features `features` names (SPEC V7).
    pub async fn read_rows_with(
        &self,
        id: u64,
        rows: Option<NonZeroU16>,
        features: &[OptIn],
    ) -> Result<Rows, ClientError> {
        self.exchange(ReadRowsRequest { features: features.to_vec(), id, rows }).await
    }

    /// `commands`: the last commands of a terminal started with `shell_integration` (the newest `limit`, or all
    /// it keeps), oldest first, with the process info (SPEC §10). Needs the daemon's `commands` feature.
    pub async fn commands(&self, id: u64, limit: Option<NonZeroU16>) -> Result<Commands, ClientError> {
        self.exchange(CommandsRequest { id, limit }).await
    }

    /// `rename`: sets a PTY's user title, or clears it with `None` (or an empty title).
    pub async fn rename(&self, id: u64, title: Option<&str>) -> Result<(), ClientError> {
        self.exchange(RenameRequest { id, title: title.map(str::to_owned) }).await.map(drop)
    }

    /// `replay`: the kept output of a process from `offset` on, decoded.
    pub async fn replay(&self, id: u64, offset: u64) -> Result<Replay, ClientError> {
        Replay::try_from(self.request(Request::from(ReplayRequest { id, offset })).await?)
    }

    /// `terminate`: stops a process and forgets it.
    pub async fn terminate(&self, id: u64) -> Result<(), ClientError> {
        self.exchange(TerminateRequest { id }).await.map(drop)
    }

    /// `shutdown`: stops the daemon and every process it runs.
    pub async fn shutdown(&self) -> Result<(), ClientError> {
        self.exchange(ShutdownRequest).await.map(drop)
    }

    /// `signal`: sends a signal to a pipe process's group and child; the process stays listed.
    pub async fn signal(&self, id: u64, signal: Signal) -> Result<(), ClientError> {
        self.exchange(SignalRequest { id, signal }).await.map(drop)
    }

    /// `set_metadata`: replaces the metadata kept with a pipe process.
    pub async fn set_metadata(&self, id: u64, metadata: Map<String, Value>) -> Result<(), ClientError> {
        self.exchange(SetMetadataRequest { id, metadata }).await.map(drop)
    }
}

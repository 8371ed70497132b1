//! The typed one-shot requests of [`Client`]: one method per op that is answered by a single response and
//! needs nothing kept open. Each builds the generated [`Request`], so member names come from the schema, and
//! turns the answer into a typed value; `error` becomes [`ClientError::Daemon`] and any other unexpected type
//! [`ClientError::Unexpected`]. Every method can also fail as [`Client::request`] does.
//!
//! Nothing the daemon checks is checked here again; what cannot be encoded at all (a zero terminal size) is
//! ruled out by the argument types.

use std::num::NonZeroU16;

use opencode_pty_protocol::{Mode, ProcessInfo, Request, Response, Signal};
use serde_json::{Map, Value};

use crate::client::Client;
use crate::conn::refuse;
use crate::error::ClientError;
use crate::params::{CreatePipe, CreatePty};
use crate::types::{Pong, Replay, Rows, Snapshot, encode_base64, expect_ok};

impl Client {
    /// `ping`: who the daemon is and what it speaks. The answer is not checked against the registration; see
    /// [`Client::verify`].
    pub async fn ping(&self) -> Result<Pong, ClientError> {
        Pong::from_response(self.request(Request::Ping).await?)
    }

    /// `list`: the processes of one mode, in creation order.
    pub async fn list(&self, mode: Mode) -> Result<Vec<ProcessInfo>, ClientError> {
        match self.request(Request::List { mode }).await? {
            Response::Processes { processes } => Ok(processes),
            other => Err(refuse("processes", other)),
        }
    }

    /// `get`: one process of either mode.
    pub async fn get(&self, id: u64) -> Result<ProcessInfo, ClientError> {
        match self.request(Request::Get { id }).await? {
            Response::Process { process } => Ok(process),
            other => Err(refuse("process", other)),
        }
    }

    /// `create_pty`: starts a program in a new pseudo-terminal and returns it.
    pub async fn create_pty(&self, params: CreatePty) -> Result<ProcessInfo, ClientError> {
        created(self.request(params.into_request()).await?)
    }

    /// `create_pipe`: starts a program without a terminal, its output going to a file, and returns it.
    pub async fn create_pipe(&self, params: CreatePipe) -> Result<ProcessInfo, ClientError> {
        created(self.request(params.into_request()).await?)
    }

    /// `write`: sends bytes to a PTY's input as the attachment (`None` only while the terminal has no
    /// controller).
    pub async fn write(&self, id: u64, attachment_id: Option<&str>, data: &[u8]) -> Result<(), ClientError> {
        let attachment_id = attachment_id.map(str::to_owned);
        expect_ok(self.request(Request::Write { attachment_id, data_base64: encode_base64(data), id }).await?)
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
        expect_ok(self.request(Request::Resize { attachment_id, cols, id, rows }).await?)
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
        expect_ok(self.request(Request::Control { attachment_id, cols, id, rows }).await?)
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
        expect_ok(self.request(Request::Input { attachment_id, cols, data_base64, id, rows }).await?)
    }

    /// `snapshot`: a PTY's visible screen as text and as a decoded VT checkpoint, with the cursor.
    pub async fn snapshot(&self, id: u64) -> Result<Snapshot, ClientError> {
        Snapshot::from_response(self.request(Request::Snapshot { id }).await?)
    }

    /// `read_rows`: the last `rows` physical rows of a PTY's active screen (`None`: its current height).
    pub async fn read_rows(&self, id: u64, rows: Option<NonZeroU16>) -> Result<Rows, ClientError> {
        Rows::from_response(self.request(Request::ReadRows { id, rows }).await?)
    }

    /// `rename`: sets a PTY's user title, or clears it with `None` (or an empty title).
    pub async fn rename(&self, id: u64, title: Option<&str>) -> Result<(), ClientError> {
        expect_ok(self.request(Request::Rename { id, title: title.map(str::to_owned) }).await?)
    }

    /// `replay`: the kept output of a process from `offset` on, decoded.
    pub async fn replay(&self, id: u64, offset: u64) -> Result<Replay, ClientError> {
        Replay::from_response(self.request(Request::Replay { id, offset }).await?)
    }

    /// `terminate`: stops a process and forgets it.
    pub async fn terminate(&self, id: u64) -> Result<(), ClientError> {
        expect_ok(self.request(Request::Terminate { id }).await?)
    }

    /// `shutdown`: stops the daemon and every process it runs.
    pub async fn shutdown(&self) -> Result<(), ClientError> {
        expect_ok(self.request(Request::Shutdown).await?)
    }

    /// `signal`: sends a signal to a pipe process's group and child; the process stays listed.
    pub async fn signal(&self, id: u64, signal: Signal) -> Result<(), ClientError> {
        expect_ok(self.request(Request::Signal { id, signal }).await?)
    }

    /// `set_metadata`: replaces the metadata kept with a pipe process.
    pub async fn set_metadata(&self, id: u64, metadata: Map<String, Value>) -> Result<(), ClientError> {
        expect_ok(self.request(Request::SetMetadata { id, metadata }).await?)
    }
}

/// Reads a `created`.
fn created(response: Response) -> Result<ProcessInfo, ClientError> {
    match response {
        Response::Created { process } => Ok(process),
        other => Err(refuse("created", other)),
    }
}

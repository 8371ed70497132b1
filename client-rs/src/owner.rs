//! [`Owner`]: the owner channel that a successful `own` leaves open (SPEC §7). It carries further envelopes,
//! `prepare_handoff`, `upgrade` and `shutdown`, each answered on the same connection, and tells its holder when the daemon
//! closes it. Closing it (or dropping it) stops the daemon unless a handoff was prepared on it or a later `own`
//! superseded it.

use std::path::Path;
use std::time::Duration;

use opencode_pty_protocol::{
    Frame, OkResponse, PrepareHandoffRequest, Request, Response, ShutdownRequest, UpgradeRequest,
};

use crate::client::bounded;
use crate::conn::{Connection, describe, envelope, request_value};
use crate::error::ClientError;
use crate::types::{Handoff, answer};

/// The open owner channel of a daemon. Dropping it closes the connection.
#[derive(Debug)]
pub struct Owner {
    /// The connection `own` was answered on.
    connection: Connection,
    /// The registration token every envelope on the channel carries.
    token: String,
    /// How long one exchange on the channel may take.
    request_timeout: Duration,
    /// Set while a request is on its way; still set afterwards when that request never completed, whose answer
    /// may then still arrive and would be taken for the next request's.
    pending: bool,
}

impl Owner {
    /// Wraps the connection on which `owned` was read.
    pub(crate) fn new(connection: Connection, token: String, request_timeout: Duration) -> Owner {
        Owner { connection, token, request_timeout, pending: false }
    }

    /// `prepare_handoff`: the ticket a replacement server gives to `own`. Asking again returns the same ticket.
    ///
    /// # Errors
    ///
    /// As [`crate::Client::request`], and [`ClientError::Interrupted`] after an earlier request on this channel
    /// was cancelled or timed out.
    pub async fn prepare_handoff(&mut self) -> Result<Handoff, ClientError> {
        answer::<Handoff>(self.exchange(&PrepareHandoffRequest.into()).await?)
    }

    /// `shutdown` over the owner channel: the daemon answers `ok`, then stops every process and exits.
    ///
    /// # Errors
    ///
    /// As [`Owner::prepare_handoff`].
    pub async fn shutdown(&mut self) -> Result<(), ClientError> {
        answer::<OkResponse>(self.exchange(&ShutdownRequest.into()).await?).map(drop)
    }

    /// `upgrade`: the daemon re-executes itself in place from `program` (an absolute path; `None`: its own
    /// executable as it is on disk now, after a package upgrade replaced it), keeping its pid, socket, token,
    /// processes and this owner channel. Answered `ok` once the new image serves requests; an error means the
    /// old image still serves with nothing changed. Only a daemon whose features include `upgrade`
    /// ([`UPGRADE_FEATURE`](crate::UPGRADE_FEATURE)) does it; any other refuses. Other connections are closed
    /// during the upgrade: this client's subscriptions, `wait`s and `wait_command`s go on by themselves.
    ///
    /// # Errors
    ///
    /// As [`Owner::prepare_handoff`]; a refusal (a relative, missing or unsafe path, a program whose preflight
    /// failed, a new image that could not take the state) is [`ClientError::Daemon`] with the daemon's words;
    /// a path that is not UTF-8 is [`ClientError::Argument`].
    pub async fn upgrade(&mut self, program: Option<&Path>) -> Result<(), ClientError> {
        let program = match program {
            None => None,
            Some(path) => Some(
                path.to_str()
                    .ok_or_else(|| ClientError::Argument(format!("the program {} is not UTF-8", path.display())))?
                    .to_owned(),
            ),
        };
        answer::<OkResponse>(self.exchange(&UpgradeRequest { program }.into()).await?).map(drop)
    }

    /// Resolves when the daemon closes the channel: after a `shutdown`, when a later `own` with a ticket
    /// superseded this owner, or when the daemon exits. Cancel safe.
    ///
    /// # Errors
    ///
    /// Reading failed or broke the framing, or the daemon sent a frame nobody asked for.
    pub async fn closed(&mut self) -> Result<(), ClientError> {
        match self.connection.read_frame().await? {
            None => Ok(()),
            Some(Frame::Control(map)) => {
                let kind = map.get("type").and_then(|kind| kind.as_str()).unwrap_or("untyped").to_owned();
                Err(ClientError::Protocol(format!("the daemon sent an unrequested `{kind}` on the owner channel")))
            }
            Some(Frame::Output { .. }) => {
                Err(ClientError::Protocol("the daemon sent an output frame on the owner channel".into()))
            }
        }
    }

    /// Closes the channel: the writing half is shut down, then the connection dropped. Unless a handoff was
    /// prepared on it, the daemon stops.
    ///
    /// # Errors
    ///
    /// Shutting the writing half down failed (the connection is dropped anyway).
    pub async fn close(self) -> Result<(), ClientError> {
        self.connection.close().await
    }

    /// Sends a request on the channel and reads its answer within the request timeout.
    async fn exchange(&mut self, request: &Request) -> Result<Response, ClientError> {
        if self.pending {
            return Err(ClientError::Interrupted);
        }
        let envelope = envelope(&self.token, request_value(request)?);
        self.pending = true;
        let what = format!("{} on the owner channel", describe(&envelope));
        let connection = &mut self.connection;
        let answer = bounded(self.request_timeout, what, async {
            connection.send(&envelope).await?;
            connection.read_response().await
        })
        .await;
        if !matches!(answer, Err(ClientError::Timeout { .. })) {
            self.pending = false;
        }
        answer
    }
}

//! [`Client`]: finds a daemon through its registration and runs requests against it, one connection per request
//! (SPEC E8). This module holds the plumbing (discovery, timeouts, the generic, typed and raw requests) and the
//! three requests that keep their connection: `own`, `subscribe` and `wait` (the last two go on across an
//! in-place upgrade, `resume.rs`). The typed one-shot requests are in
//! `ops.rs`; `run` and `wait_command`, which hold theirs until a command ends, in `commands.rs`.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use opencode_pty_protocol::{
    OptIn, OwnRequest, OwnedResponse, REGISTRATION_FILE, Registration, Request, RequestVariant, Response, Role,
    SubscribeRequest, WaitRequest,
};
use serde_json::{Map, Value};

use crate::conn::{Connection, describe, envelope, request_value};
use crate::error::ClientError;
use crate::owner::Owner;
use crate::params::Takeover;
use crate::registration::{check_identity, read_registration};
use crate::resume::{Backoff, NotResumed, RESUME_WINDOW, connection_lost};
use crate::subscription::{Resume, Subscription};
use crate::types::{Attached, Exited, Pong, answer};

/// How long a request waits by default (30 s) for its whole exchange: connecting, sending and reading the
/// answer. It matches the daemon's own bound on how long a request waits for its terminal, so a busy but healthy
/// daemon answers in time. `wait` and an open subscription or owner channel wait without a limit once their
/// request is sent; connecting, sending and the first answer are still bounded. Change it per client with
/// [`Client::with_request_timeout`].
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A handle on one daemon: its registration, a request timeout and a resume window. Cheap to clone; holds no
/// connection.
#[derive(Debug, Clone)]
pub struct Client {
    /// Where the daemon listens and how to authenticate.
    registration: Registration,
    /// How long one exchange may take.
    request_timeout: Duration,
    /// How long a lost long-lived connection is tried again (`resume.rs`).
    resume_window: Duration,
}

impl Client {
    /// A client for the daemon a registration describes, trusted as is: nothing is read or checked.
    pub fn from_registration(registration: Registration) -> Client {
        Client { registration, request_timeout: REQUEST_TIMEOUT, resume_window: RESUME_WINDOW }
    }

    /// Finds the daemon of a runtime directory: reads `runtime_dir/`[`REGISTRATION_FILE`], refuses another
    /// protocol version before anything else, then pings the daemon and requires its `pong` to match the
    /// registration.
    ///
    /// # Errors
    ///
    /// Those of [`read_registration`](crate::read_registration), then those of [`Client::verify`].
    pub async fn discover(runtime_dir: &Path) -> Result<Client, ClientError> {
        let registration = read_registration(&runtime_dir.join(REGISTRATION_FILE)).await?;
        let client = Client::from_registration(registration);
        client.verify().await?;
        Ok(client)
    }

    /// Pings the daemon and checks that the `pong` names the registration's protocol, instance id and pid.
    ///
    /// # Errors
    ///
    /// Those of [`Client::ping`], or [`ClientError::IdentityMismatch`].
    pub async fn verify(&self) -> Result<Pong, ClientError> {
        let pong = self.ping().await?;
        check_identity(&self.registration, &pong)?;
        Ok(pong)
    }

    /// The same client with another request timeout (see [`REQUEST_TIMEOUT`]).
    pub fn with_request_timeout(self, request_timeout: Duration) -> Client {
        Client { request_timeout, ..self }
    }

    /// The same client with another resume window ([`RESUME_WINDOW`](crate::RESUME_WINDOW) by default): how
    /// long a subscription, `wait`, `run` or `wait_command` whose connection a daemon with the `upgrade`
    /// feature closed before its end waits for the same daemon instance to answer again. Zero never resumes:
    /// such a connection ends with [`ClientError::Closed`] at once, as against a daemon without the feature.
    pub fn with_resume_window(self, resume_window: Duration) -> Client {
        Client { resume_window, ..self }
    }

    /// How long a lost long-lived connection is tried again.
    pub fn resume_window(&self) -> Duration {
        self.resume_window
    }

    /// The registration this client uses.
    pub fn registration(&self) -> &Registration {
        &self.registration
    }

    /// How long one exchange may take.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Sends any request and returns the daemon's answer as it came, an `error` included (as
    /// `Ok(Response::Error)`). Only the first answer is read, so for `subscribe`, `own` and `wait` this is a
    /// probe: the connection is dropped after it.
    ///
    /// # Errors
    ///
    /// Connecting, sending or reading failed, the answer does not decode, the connection closed before it
    /// ([`ClientError::Closed`]), or it took longer than the request timeout.
    pub async fn request(&self, request: Request) -> Result<Response, ClientError> {
        self.send_raw(request_value(&request)?).await
    }

    /// Sends a request of any op as its generated type and returns the response the schema says answers it
    /// ([`RequestVariant::Answer`]), so an op needs no method of its own to be used. Only the first answer is
    /// read, as for [`Client::request`].
    ///
    /// # Errors
    ///
    /// As [`Client::request`]; an `error` answer is [`ClientError::Daemon`], any other unexpected type
    /// [`ClientError::Unexpected`].
    pub async fn exchange<R: RequestVariant>(&self, request: R) -> Result<R::Answer, ClientError> {
        answer(self.request(request.into()).await?)
    }

    /// Sends `{"token": <registration token>, "request": request}` whatever `request` holds, for probing how the
    /// daemon treats malformed requests; otherwise as [`Client::request`].
    ///
    /// # Errors
    ///
    /// As [`Client::request`].
    pub async fn send_raw(&self, request: Value) -> Result<Response, ClientError> {
        self.send_envelope(envelope(&self.registration.token, request)).await
    }

    /// Sends a whole envelope as given, without adding the token, for probing authentication; otherwise as
    /// [`Client::request`].
    ///
    /// # Errors
    ///
    /// As [`Client::request`].
    pub async fn send_envelope(&self, envelope: Map<String, Value>) -> Result<Response, ClientError> {
        let what = describe(&envelope);
        self.bounded(what, async {
            let mut connection = self.open(&envelope).await?;
            connection.read_response().await
        })
        .await
    }

    /// Claims ownership of the daemon (SPEC §7): sends `own` with the registration's instance id and, when taking
    /// over from a previous owner, its handoff ticket. The connection then stays open as the owner channel.
    ///
    /// # Errors
    ///
    /// As [`Client::request`]; a refused claim is [`ClientError::Daemon`], any answer but `owned` is
    /// [`ClientError::Unexpected`].
    pub async fn own(&self, ticket: Option<String>) -> Result<Owner, ClientError> {
        let instance_id = self.registration.instance_id.clone();
        let envelope = self.envelope(&OwnRequest { instance_id, ticket }.into())?;
        let connection = self
            .bounded(describe(&envelope), async {
                let mut connection = self.open(&envelope).await?;
                answer::<OwnedResponse>(connection.read_response().await?)?;
                Ok(connection)
            })
            .await?;
        Ok(Owner::new(connection, self.registration.token.clone(), self.request_timeout))
    }

    /// Attaches to a process: the first answer must be `attached`, whose replay is returned decoded by
    /// [`Subscription::attached`]; events and output frames follow through [`Subscription::next`]. Only the
    /// exchange up to `attached` is bounded by the request timeout. `takeover` says what a controller does about a
    /// terminal that already has one. Against a daemon with the `upgrade` feature the subscription goes on by
    /// itself when the daemon closes its connection before `exited` ([`Event::Resumed`](crate::Event::Resumed)).
    ///
    /// # Errors
    ///
    /// As [`Client::request`]; a refused subscription is [`ClientError::Daemon`], an end of stream before
    /// `attached` is [`ClientError::Closed`].
    pub async fn subscribe(
        &self,
        id: u64,
        offset: u64,
        attachment_id: &str,
        role: Role,
        takeover: Takeover,
    ) -> Result<Subscription, ClientError> {
        self.subscribe_with(id, offset, attachment_id, role, takeover, &[]).await
    }

    /// [`Client::subscribe`], the subscription also carrying the events of the features `events` names (SPEC V7,
    /// I5, SH12): [`OptIn::Commands`] adds `command_started` and `command_finished` (without `text`), and
    /// `pty.shell` in `attached`'s process; [`OptIn::Input`] adds `input_changed`, and `pty.input` /
    /// `pty.alternate_screen`. A daemon without the feature ignores `events` (V6) and sends neither:
    /// `Client::ping`'s `features` says which it has. The events convert with `TryFrom`
    /// ([`CommandStarted`](crate::CommandStarted), [`CommandFinished`](crate::CommandFinished),
    /// [`InputChanged`](crate::InputChanged)).
    ///
    /// # Errors
    ///
    /// As [`Client::subscribe`].
    pub async fn subscribe_with(
        &self,
        id: u64,
        offset: u64,
        attachment_id: &str,
        role: Role,
        takeover: Takeover,
        events: &[OptIn],
    ) -> Result<Subscription, ClientError> {
        let connection = self.open_subscription(id, offset, attachment_id, role, takeover.flag(), events);
        let (connection, attached) = self.bounded("subscribe request".to_owned(), connection).await?;
        let resume = self.resumes().then(|| Resume {
            client: self.clone(),
            id,
            attachment_id: attachment_id.to_owned(),
            events: events.to_vec(),
        });
        Ok(Subscription::new(connection, attached, resume))
    }

    /// Connects, sends `subscribe` and reads `attached`, without a time limit.
    pub(crate) async fn open_subscription(
        &self,
        id: u64,
        offset: u64,
        attachment_id: &str,
        role: Role,
        takeover: bool,
        events: &[OptIn],
    ) -> Result<(Connection, Attached), ClientError> {
        let request = SubscribeRequest {
            attachment_id: attachment_id.to_owned(),
            events: events.to_vec(),
            id,
            offset,
            role,
            takeover,
        };
        let envelope = self.envelope(&request.into())?;
        let mut connection = self.open(&envelope).await?;
        let attached = Attached::try_from(connection.read_response().await?)?;
        Ok((connection, attached))
    }

    /// Waits for a pipe process to exit (SPEC §5.2 `wait`). Connecting and sending are bounded by the request
    /// timeout; the wait for the answer is not, since the daemon holds the request until the process exits.
    /// Cancel safe: dropping the future closes the connection and nothing else. When a daemon with the `upgrade`
    /// feature closes the connection before answering (an in-place upgrade), `wait` is asked again once the same
    /// instance answers, within the resume window.
    ///
    /// # Errors
    ///
    /// As [`Client::request`]; a process removed by `terminate` first is [`ClientError::Daemon`] `terminated`.
    pub async fn wait(&self, id: u64) -> Result<Exited, ClientError> {
        let envelope = self.envelope(&WaitRequest { id }.into())?;
        loop {
            let mut connection = self.bounded(describe(&envelope), self.open(&envelope)).await?;
            match connection.read_response().await {
                Err(lost) if connection_lost(&lost) => self.after_lost(lost).await?,
                answered => return answer::<Exited>(answered?),
            }
        }
    }

    /// After a long-lived request's connection was `lost`: `Ok` once the same daemon instance answers again
    /// (it was upgraded in place, `resume.rs`), so the request can be asked again; otherwise the error it ends
    /// with (`lost` itself when this client does not resume, no daemon is left or another instance answers).
    pub(crate) async fn after_lost(&self, lost: ClientError) -> Result<(), ClientError> {
        if !self.resumes() {
            return Err(lost);
        }
        match self.reach_same_instance(&mut Backoff::new(self.resume_window)).await {
            Ok(()) => Ok(()),
            Err(NotResumed::Gone) => Err(lost),
            Err(NotResumed::Ends(error)) => Err(error),
        }
    }

    /// Wraps a request in an envelope with the registration's token.
    pub(crate) fn envelope(&self, request: &Request) -> Result<Map<String, Value>, ClientError> {
        Ok(envelope(&self.registration.token, request_value(request)?))
    }

    /// Connects to the daemon and sends one envelope.
    pub(crate) async fn open(&self, envelope: &Map<String, Value>) -> Result<Connection, ClientError> {
        let mut connection = Connection::connect(&self.registration.socket).await?;
        connection.send(envelope).await?;
        Ok(connection)
    }

    /// Runs `exchange` within the request timeout; `what` names it in the timeout error.
    pub(crate) async fn bounded<T>(
        &self,
        what: String,
        exchange: impl Future<Output = Result<T, ClientError>>,
    ) -> Result<T, ClientError> {
        bounded(self.request_timeout, what, exchange).await
    }
}

/// Runs `exchange` within `limit`; `what` names it in the timeout error.
pub(crate) async fn bounded<T>(
    limit: Duration,
    what: String,
    exchange: impl Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    match tokio::time::timeout(limit, exchange).await {
        Ok(result) => result,
        Err(_elapsed) => Err(ClientError::Timeout { what, seconds: limit.as_secs_f64() }),
    }
}

//! Going on across an in-place upgrade (issue 30): when a daemon that announces the [`UPGRADE_FEATURE`] closes
//! a long-lived connection before its end (a subscription before `exited`, a `wait`, `run` or `wait_command`
//! before its answer), the client waits, for at most its resume window ([`RESUME_WINDOW`] unless
//! [`Client::with_resume_window`] says otherwise), for the same daemon instance to answer `ping` again on the
//! same socket, then asks again. An upgrade keeps the pid, the socket, the token and the instance id, and it
//! closes every connection but the owner's once its requests in flight are answered; a daemon that crashed
//! and was started again has another instance id, and one that stopped leaves nobody at the socket.
//!
//! The socket: an upgrade keeps the listening socket open across the exec, so a connection made meanwhile waits
//! in its backlog until the new image accepts it, and is never refused. A refused connection, or a socket that
//! is gone, therefore means that no daemon is left, and the request ends at once as it did before resuming
//! existed; so does an answer from another instance. Anything else (no answer yet, a connection closed again,
//! a full backlog) is tried again with a backoff from [`RESUME_FIRST_BACKOFF`] doubling to
//! [`RESUME_MAX_BACKOFF`], until the window has passed.

use std::io::ErrorKind;
use std::time::Duration;

use opencode_pty_protocol::{PROTOCOL_VERSION, PingRequest, Request};
use tokio::time::Instant;

use crate::client::{Client, bounded};
use crate::conn::{Connection, envelope, request_value};
use crate::error::ClientError;
use crate::types::{Pong, answer};

/// The feature a daemon announces (in its registration and `pong`) when it can be upgraded in place; only its
/// connections are resumed.
pub const UPGRADE_FEATURE: &str = "upgrade";

/// How long a lost connection is tried again by default (10 s): far more than an upgrade pauses a daemon (its
/// goal is under 100 ms with 16 busy terminals), little enough that a daemon that hangs is given up soon.
pub const RESUME_WINDOW: Duration = Duration::from_secs(10);

/// The first pause between two tries (20 ms).
pub const RESUME_FIRST_BACKOFF: Duration = Duration::from_millis(20);

/// The longest pause between two tries (500 ms).
pub const RESUME_MAX_BACKOFF: Duration = Duration::from_millis(500);

/// Why a lost connection is not resumed.
#[derive(Debug)]
pub(crate) enum NotResumed {
    /// No daemon is left at the socket, another instance answers there, or the window passed: the request ends
    /// with the error that lost it, as it did before resuming existed.
    Gone,
    /// The same socket answers in a way that ends the request with this error (another protocol version).
    Ends(ClientError),
}

/// The tries of one resumption: the window's deadline and the next pause.
#[derive(Debug)]
pub(crate) struct Backoff {
    /// When the window ends.
    deadline: Instant,
    /// The next pause.
    next: Duration,
    /// How many times the daemon was asked so far.
    attempts: u32,
}

impl Backoff {
    /// A resumption that may last `window` from now.
    pub(crate) fn new(window: Duration) -> Backoff {
        Backoff { deadline: Instant::now() + window, next: RESUME_FIRST_BACKOFF, attempts: 0 }
    }

    /// How long is left of the window.
    pub(crate) fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// How many times the daemon was asked.
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Pauses before the next try; `false`, without pausing, once the window has passed.
    pub(crate) async fn pause(&mut self) -> bool {
        let remaining = self.remaining();
        if remaining.is_zero() {
            return false;
        }
        tokio::time::sleep(self.next.min(remaining)).await;
        self.next = (self.next * 2).min(RESUME_MAX_BACKOFF);
        !self.remaining().is_zero()
    }
}

/// What one `ping` found.
enum Probe {
    /// The registration's instance answered, speaking this client's protocol.
    Same,
    /// Nobody listens, or another instance answered.
    Gone,
    /// The daemon speaks another protocol now.
    Mismatch(ClientError),
    /// No answer (yet): try again.
    Again,
}

/// Whether an error means that the connection ended under a request (the daemon closed it, or it broke), as an
/// upgrade ends it.
pub(crate) fn connection_lost(error: &ClientError) -> bool {
    matches!(error, ClientError::Closed | ClientError::Io { .. })
}

impl Client {
    /// Whether this client resumes the connections its daemon loses: the daemon announces [`UPGRADE_FEATURE`]
    /// and the resume window is not zero.
    pub(crate) fn resumes(&self) -> bool {
        !self.resume_window().is_zero() && self.registration().features.iter().any(|f| f == UPGRADE_FEATURE)
    }

    /// Waits, with `backoff`, until the registration's daemon instance answers `ping` again.
    pub(crate) async fn reach_same_instance(&self, backoff: &mut Backoff) -> Result<(), NotResumed> {
        loop {
            backoff.attempts = backoff.attempts.saturating_add(1);
            match self.probe(backoff.remaining()).await {
                Probe::Same => return Ok(()),
                Probe::Gone => return Err(NotResumed::Gone),
                Probe::Mismatch(error) => return Err(NotResumed::Ends(error)),
                Probe::Again if backoff.pause().await => {}
                Probe::Again => return Err(NotResumed::Gone),
            }
        }
    }

    /// One `ping`, within `limit` (and the request timeout).
    async fn probe(&self, limit: Duration) -> Probe {
        let registration = self.registration();
        let mut connection = match Connection::connect(&registration.socket).await {
            Ok(connection) => connection,
            Err(ClientError::Io { cause, .. })
                if matches!(cause.kind(), ErrorKind::NotFound | ErrorKind::ConnectionRefused) =>
            {
                return Probe::Gone;
            }
            Err(_) => return Probe::Again,
        };
        let Ok(ping) = request_value(&Request::from(PingRequest)) else { return Probe::Again };
        let ping = envelope(&registration.token, ping);
        let exchange = async {
            connection.send(&ping).await?;
            answer::<Pong>(connection.read_response().await?)
        };
        match bounded(limit.min(self.request_timeout()), "ping request".to_owned(), exchange).await {
            Ok(pong) if pong.protocol != PROTOCOL_VERSION => Probe::Mismatch(ClientError::VersionMismatch {
                expected: u64::from(PROTOCOL_VERSION),
                found: u64::from(pong.protocol),
            }),
            Ok(pong) if pong.instance_id == registration.instance_id => Probe::Same,
            Ok(_) => Probe::Gone,
            Err(_) => Probe::Again,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_backoff_doubles_and_stops_with_the_window() {
        let mut backoff = Backoff::new(Duration::from_millis(300));
        let start = Instant::now();
        let mut pauses = 0;
        while backoff.pause().await {
            pauses += 1;
        }
        // 20 + 40 + 80 ms, then the last pause is cut to what is left of the window (fewer on a slow machine,
        // where a sleep lasts longer).
        assert!((1..=3).contains(&pauses), "{pauses} pauses");
        assert!(start.elapsed() >= Duration::from_millis(300), "{:?}", start.elapsed());
        assert!(!backoff.pause().await, "nothing is left of the window");
        assert_eq!(backoff.remaining(), Duration::ZERO);
        assert!(backoff.next >= Duration::from_millis(80) && backoff.next <= RESUME_MAX_BACKOFF, "{:?}", backoff.next);
    }

    #[test]
    fn only_an_ended_connection_is_lost() {
        assert!(connection_lost(&ClientError::Closed));
        assert!(connection_lost(&ClientError::io("cannot read", std::io::Error::from(ErrorKind::ConnectionReset))));
        assert!(!connection_lost(&ClientError::Daemon { message: "process 3 not found".into() }));
        assert!(!connection_lost(&ClientError::Protocol("broken".into())));
    }
}

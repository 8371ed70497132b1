//! `ClientError`: every way a call through the client can fail, from a refused connection to a daemon that
//! answered with `error` or broke the protocol. Each variant's `Display` is one sentence that says what was being
//! done, so that a log line is enough.

use std::path::PathBuf;

use opencode_pty_protocol::{AUTHENTICATION_FAILED, FrameError, UNSUPPORTED_REQUEST_PREFIX};

/// Why a call through the client failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The daemon answered with `{"type": "error", "message": ...}`. The `Display` text is the message as sent.
    #[error("{message}")]
    Daemon {
        /// The daemon's message, such as `process 7 not found` or `unsupported request: teleport`.
        message: String,
    },

    /// Connecting to the socket, sending a request or reading an answer failed. The operating system's error is
    /// part of the text and not also a `source()`, so an error chain printed whole (`{:#}`) says it once.
    #[error("{context}: {cause}")]
    Io {
        /// What was being done, such as `cannot connect to /run/opencode-pty/socket`.
        context: String,
        /// The operating system's error.
        cause: std::io::Error,
    },

    /// A frame could not be encoded (a request over `MAX_FRAME_BYTES`) or the daemon sent one that does not
    /// decode (SPEC §2). The connection is dropped.
    #[error("framing: {0}")]
    Frame(FrameError),

    /// The daemon sent well-formed frames that break the protocol: a response that does not decode, an output
    /// frame outside a subscription, output frames that are not contiguous, invalid base64, and so on.
    #[error("the daemon broke the protocol: {0}")]
    Protocol(String),

    /// A request could not be serialized to JSON.
    #[error("cannot encode the request: {0}")]
    Encode(serde_json::Error),

    /// The registration names a protocol version other than this client's (SPEC V3).
    #[error("the daemon speaks protocol {found}, but this client speaks protocol {expected}")]
    VersionMismatch {
        /// This client's version, `PROTOCOL_VERSION`.
        expected: u64,
        /// The version the registration names.
        found: u64,
    },

    /// The registration file cannot be read, is too large, is not JSON or does not fit the registration schema.
    #[error("cannot use the registration file {}: {reason}", path.display())]
    Registration {
        /// The file's path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// `ping` was answered by a daemon other than the one the registration describes.
    #[error("the daemon answered ping with {field} {answered}, but its registration says {registered}")]
    IdentityMismatch {
        /// The member that differs: `protocol`, `instance_id` or `pid`.
        field: &'static str,
        /// The value in the registration.
        registered: String,
        /// The value in the `pong`.
        answered: String,
    },

    /// The daemon answered with a response of another type than the request calls for.
    #[error("expected a `{expected}` response, got `{got}`")]
    Unexpected {
        /// The response type the request calls for.
        expected: &'static str,
        /// The response type the daemon sent.
        got: String,
    },

    /// The connection ended before the answer (or, on a subscription, before `exited`).
    #[error("the daemon closed the connection before answering")]
    Closed,

    /// No answer came in time.
    #[error("{what} got no answer within {seconds} s")]
    Timeout {
        /// What was waiting, such as `get request`.
        what: String,
        /// How long it waited, in seconds.
        seconds: f64,
    },

    /// A daemon upgraded in place closed the connection of a `run` before answering it (an
    /// upgrade closes every connection but the owner's), and the same daemon instance answers again. The
    /// command may have been typed and may still run: find it with `commands` (or the terminal's `pty.shell`)
    /// and wait for it with `wait_command`, rather than running it again.
    #[error(
        "the daemon was upgraded while `run` waited on terminal {id}; the command may have been typed: find it \
         with `commands` and wait for it with `wait_command` rather than running it again"
    )]
    RunInterrupted {
        /// The terminal the command was typed in.
        id: u64,
    },

    /// An argument cannot be put in a request, such as a path that is not UTF-8 (JSON carries only text).
    #[error("cannot send the request: {0}")]
    Argument(String),

    /// An earlier request on this owner channel did not complete (it was cancelled or timed out), so its answer
    /// may still be on the way and the channel cannot be used for another request.
    #[error("an earlier request on this owner channel did not complete, so the channel cannot be used")]
    Interrupted,
}

impl ClientError {
    /// Whether this is the daemon's answer to a wrong token (SPEC E3): re-read the registration and retry.
    pub fn is_authentication_failure(&self) -> bool {
        matches!(self, ClientError::Daemon { message } if message == AUTHENTICATION_FAILED)
    }

    /// The op named by an `unsupported request: <op>` answer (SPEC E5): the daemon does not know that request.
    /// `None` for any other error.
    pub fn unsupported_op(&self) -> Option<&str> {
        match self {
            ClientError::Daemon { message } => message.strip_prefix(UNSUPPORTED_REQUEST_PREFIX),
            _ => None,
        }
    }

    /// An [`Io`](Self::Io) error with its context.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> ClientError {
        ClientError::Io { context: context.into(), cause: source }
    }
}

impl From<FrameError> for ClientError {
    fn from(error: FrameError) -> ClientError {
        ClientError::Frame(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_error_displays_the_message_as_sent() {
        let error = ClientError::Daemon { message: "process 7 not found".into() };
        assert_eq!(error.to_string(), "process 7 not found");
        assert!(!error.is_authentication_failure());
        assert!(ClientError::Daemon { message: AUTHENTICATION_FAILED.into() }.is_authentication_failure());
    }

    #[test]
    fn an_unsupported_request_names_its_op() {
        assert_eq!(
            ClientError::Daemon { message: "unsupported request: teleport".into() }.unsupported_op(),
            Some("teleport")
        );
        assert_eq!(ClientError::Daemon { message: "process 7 not found".into() }.unsupported_op(), None);
        assert_eq!(ClientError::Closed.unsupported_op(), None);
    }

    #[test]
    fn io_errors_say_what_was_being_done() {
        let source = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let error = ClientError::io("cannot connect to /tmp/x/socket", source);
        assert_eq!(error.to_string(), "cannot connect to /tmp/x/socket: No such file or directory");
        // Printed as a chain (anyhow's `{:#}`), the cause is said once, not twice.
        let chain = anyhow_like(&error);
        assert_eq!(chain, "cannot connect to /tmp/x/socket: No such file or directory");
        let frame = ClientError::from(FrameError::EofInHeader { got: 1 });
        assert_eq!(anyhow_like(&frame), frame.to_string());
    }

    /// An error and every `source()` below it, joined with `: `, as `anyhow`'s `{:#}` prints them.
    fn anyhow_like(error: &dyn std::error::Error) -> String {
        let mut text = error.to_string();
        let mut next = error.source();
        while let Some(source) = next {
            text.push_str(&format!(": {source}"));
            next = source.source();
        }
        text
    }

    #[test]
    fn mismatches_name_both_sides() {
        let error = ClientError::VersionMismatch { expected: 8, found: 9 };
        assert_eq!(error.to_string(), "the daemon speaks protocol 9, but this client speaks protocol 8");
        let error = ClientError::IdentityMismatch { field: "pid", registered: "1".into(), answered: "2".into() };
        assert_eq!(error.to_string(), "the daemon answered ping with pid 2, but its registration says 1");
        let error = ClientError::Timeout { what: "get request".into(), seconds: 0.5 };
        assert_eq!(error.to_string(), "get request got no answer within 0.5 s");
        let error = ClientError::RunInterrupted { id: 3 };
        assert!(
            error.to_string().starts_with("the daemon was upgraded while `run` waited on terminal 3; the command may")
        );
    }
}

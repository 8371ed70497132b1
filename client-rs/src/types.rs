//! The typed values the client returns, and the [`Event`]s a subscription yields.
//!
//! Every value is generated from `schema/`, never mirrored by hand: an answer without base64 members is the
//! protocol's named type of its response (`Pong` is `PongResponse`, `Rows` is `RowsResponse`, ...), and one with
//! base64 members is the struct `codegen` writes in `generated.rs` with those members decoded (`Snapshot`,
//! `Replay`, `Attached`, `Resized`). [`answer`] narrows a response to the type expected, turning `error` into
//! [`ClientError::Daemon`] and any other type into [`ClientError::Unexpected`].

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use opencode_pty_protocol::{ProcessInfo, Response, ResponseVariant, Role};

use crate::conn::refuse;
use crate::error::ClientError;

pub use crate::generated::{Attached, Replay, Resized, Snapshot};
pub use opencode_pty_protocol::{
    CommandFinishedResponse as CommandFinished, CommandRunningResponse as CommandRunning,
    CommandStartedResponse as CommandStarted, CommandsResponse as Commands, ExitedResponse as Exited,
    HandoffResponse as Handoff, InputChangedResponse as InputChanged, PongResponse as Pong, RowsResponse as Rows,
};

/// What a [`Subscription`](crate::Subscription) yields after `attached`.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A chunk of live output; it starts where the previous chunk (or the replay) ended.
    Output {
        /// The offset of the first byte.
        start: u64,
        /// The raw bytes.
        bytes: Vec<u8>,
    },
    /// An event: a response the schema marks as one ([`Response::is_event`]: `resized`, `controller_changed`,
    /// `title_changed`, `foreground_process_changed`, the opt-in `input_changed`, `command_started` and
    /// `command_finished`, or, last, `exited`). Boxed, so that the frequent output chunks stay small;
    /// [`Resized`], [`Exited`], [`InputChanged`], [`CommandStarted`] and [`CommandFinished`] convert one with
    /// `TryFrom`.
    Message(Box<Response>),
    /// Not a daemon event: the client's own word that the daemon closed the subscription's connection before
    /// `exited` (an in-place upgrade), and that the subscription goes on, on a new connection to the same
    /// daemon instance, with the same attachment id. Output continues at [`Resumed::offset`], the offset where
    /// it stopped, so no byte is lost or repeated; events the daemon published during the break (a title or a
    /// size that changed) are not repeated, but [`Resumed::process`] says how the process is now.
    Resumed(Box<Resumed>),
}

/// How a subscription went on after its connection was lost ([`Event::Resumed`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Resumed {
    /// Where output continues: the end of the output seen before the break.
    pub offset: u64,
    /// The process as the daemon describes it now.
    pub process: ProcessInfo,
    /// The role this attachment has now: a controller is the controller again, unless another attachment
    /// took control during the break (then it goes on as an observer).
    pub role: Role,
    /// The controller generation now (unchanged when the controller came back).
    pub generation: u64,
    /// How many times the daemon was asked before it answered (1 when it answered at once).
    pub attempts: u32,
}

/// The `type` tag of a response, as on the wire.
pub fn response_type(response: &Response) -> &'static str {
    response.type_tag()
}

/// Narrows a response to the variant `T`: `error` becomes [`ClientError::Daemon`], any other type
/// [`ClientError::Unexpected`].
pub(crate) fn answer<T: ResponseVariant>(response: Response) -> Result<T, ClientError> {
    T::try_from(response).map_err(|other| refuse(T::TYPE, other))
}

/// Decodes a standard, padded base64 member; `member` names it in the error.
pub(crate) fn decode_base64(member: &str, text: &str) -> Result<Vec<u8>, ClientError> {
    STANDARD.decode(text).map_err(|e| ClientError::Protocol(format!("`{member}` is not valid base64: {e}")))
}

/// Encodes bytes as standard, padded base64 for a `data_base64` member.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use opencode_pty_protocol::{OkResponse, RESPONSE_TYPES};

    use super::*;

    #[test]
    fn base64_is_standard_with_padding() {
        assert_eq!(encode_base64(b"hi"), "aGk=");
        assert_eq!(decode_base64("data_base64", "aGk=").expect("decodes"), b"hi");
        let error = decode_base64("data_base64", "aGk").unwrap_err().to_string();
        assert!(error.starts_with("the daemon broke the protocol: `data_base64` is not valid base64"), "{error}");
    }

    #[test]
    fn every_response_type_is_named_as_on_the_wire() {
        let samples = [
            Response::Owned,
            Response::Ok,
            Response::Error { message: String::new() },
            Response::TitleChanged { title: String::new() },
            Response::Handoff { expires_at: 0, ticket: String::new() },
        ];
        for sample in samples {
            let wire = serde_json::to_value(&sample).expect("encodes");
            assert_eq!(wire["type"], response_type(&sample));
            assert!(RESPONSE_TYPES.contains(&response_type(&sample)));
        }
    }

    #[test]
    fn typed_answers_refuse_other_types() {
        assert_eq!(
            answer::<Handoff>(Response::Handoff { expires_at: 5, ticket: "t".into() }).expect("handoff"),
            Handoff { ticket: "t".into(), expires_at: 5 }
        );
        assert!(matches!(answer::<Exited>(Response::Ok), Err(ClientError::Unexpected { expected: "exited", .. })));
        assert!(answer::<OkResponse>(Response::Ok).is_ok());
        let error = answer::<OkResponse>(Response::Error { message: "x".into() });
        assert!(matches!(error, Err(ClientError::Daemon { .. })));
    }

    #[test]
    fn decoded_answers_decode_their_base64_members() {
        let replay = Response::Replay {
            available_offset: 1,
            data_base64: "aGk=".into(),
            end_offset: 3,
            requested_offset: 0,
            truncated: true,
        };
        let expected =
            Replay { available_offset: 1, bytes: b"hi".to_vec(), end_offset: 3, requested_offset: 0, truncated: true };
        assert_eq!(Replay::try_from(replay).expect("replay"), expected);
        let bad = Response::Replay {
            available_offset: 0,
            data_base64: "aGk".into(),
            end_offset: 0,
            requested_offset: 0,
            truncated: false,
        };
        let error = Replay::try_from(bad).unwrap_err().to_string();
        assert!(error.contains("`data_base64` is not valid base64"), "{error}");
        assert!(matches!(Snapshot::try_from(Response::Ok), Err(ClientError::Unexpected { expected: "snapshot", .. })));
    }
}

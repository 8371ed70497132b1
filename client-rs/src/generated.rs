//! Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand.
//! Change the schema and regenerate; `codegen/tests/drift.rs` fails while this file is stale.

///The answer to `snapshot`: the screen, its checkpoint and the cursor, captured in one step with the process info.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Decoded from `checkpoint_base64`:
    ///A VT checkpoint, standard base64 with padding: written into a fresh terminal of the same size, it rebuilds the screen, its modes and the cursor position.
    pub checkpoint: ::std::vec::Vec<u8>,
    ///The cursor column, zero-based.
    pub cursor_x: u16,
    ///The cursor row within the visible screen, zero-based.
    pub cursor_y: u16,
    ///The process info, captured in the same step as the screen.
    pub process: ::opencode_pty_protocol::ProcessInfo,
    ///The plain text of the visible screen, one line per row, soft wraps not joined and trailing whitespace trimmed.
    pub text: ::std::string::String,
}
impl ::std::convert::TryFrom<::opencode_pty_protocol::Response> for Snapshot {
    type Error = crate::ClientError;
    fn try_from(
        response: ::opencode_pty_protocol::Response,
    ) -> ::std::result::Result<Self, crate::ClientError> {
        let ::opencode_pty_protocol::SnapshotResponse {
            checkpoint_base64,
            cursor_x,
            cursor_y,
            process,
            text,
        } = crate::types::answer(response)?;
        Ok(Snapshot {
            checkpoint: crate::types::decode_base64(
                "checkpoint_base64",
                &checkpoint_base64,
            )?,
            cursor_x,
            cursor_y,
            process,
            text,
        })
    }
}
///The answer to `replay`: the kept output from the requested offset (or from the oldest kept byte) to the tail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    ///Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back.
    pub available_offset: u64,
    /// Decoded from `data_base64`:
    ///The bytes from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output.
    pub bytes: ::std::vec::Vec<u8>,
    ///The offset just past the returned bytes: the output tail when the replay was read.
    pub end_offset: u64,
    ///The offset the request asked for.
    pub requested_offset: u64,
    ///True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost.
    pub truncated: bool,
}
impl ::std::convert::TryFrom<::opencode_pty_protocol::Response> for Replay {
    type Error = crate::ClientError;
    fn try_from(
        response: ::opencode_pty_protocol::Response,
    ) -> ::std::result::Result<Self, crate::ClientError> {
        let ::opencode_pty_protocol::ReplayResponse {
            available_offset,
            data_base64,
            end_offset,
            requested_offset,
            truncated,
        } = crate::types::answer(response)?;
        Ok(Replay {
            available_offset,
            bytes: crate::types::decode_base64("data_base64", &data_base64)?,
            end_offset,
            requested_offset,
            truncated,
        })
    }
}
///The first frame of a subscription: the process, the role obtained and the replay. Live output frames and events follow, starting at `end_offset`.
#[derive(Clone, Debug, PartialEq)]
pub struct Attached {
    ///Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back.
    pub available_offset: u64,
    ///The offset just past the returned bytes: the output tail when the replay was read.
    pub end_offset: u64,
    ///The controller generation after attaching: a counter that grows each time the terminal's controller changes.
    pub generation: u64,
    ///The process info, captured in the same step as the replay.
    pub process: ::opencode_pty_protocol::ProcessInfo,
    /// Decoded from `replay_base64`:
    ///The kept output from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output.
    pub replay: ::std::vec::Vec<u8>,
    ///The offset the request asked for.
    pub requested_offset: u64,
    ///The role this attachment has now.
    pub role: ::opencode_pty_protocol::Role,
    ///True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost.
    pub truncated: bool,
}
impl ::std::convert::TryFrom<::opencode_pty_protocol::Response> for Attached {
    type Error = crate::ClientError;
    fn try_from(
        response: ::opencode_pty_protocol::Response,
    ) -> ::std::result::Result<Self, crate::ClientError> {
        let ::opencode_pty_protocol::AttachedResponse {
            available_offset,
            end_offset,
            generation,
            process,
            replay_base64,
            requested_offset,
            role,
            truncated,
        } = crate::types::answer(response)?;
        Ok(Attached {
            available_offset,
            end_offset,
            generation,
            process,
            replay: crate::types::decode_base64("replay_base64", &replay_base64)?,
            requested_offset,
            role,
            truncated,
        })
    }
}
///Subscription event: the terminal was resized. Later output is laid out for the new size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resized {
    /// Decoded from `checkpoint_base64`:
    ///A VT checkpoint of the screen just after the resize, standard base64 with padding; a client resets its terminal to the new size and writes it before any later output.
    pub checkpoint: ::std::vec::Vec<u8>,
    ///The new width in columns.
    pub cols: ::std::num::NonZeroU16,
    ///The controller generation when the resize happened (not a count of resizes).
    pub generation: u64,
    ///The new height in rows.
    pub rows: ::std::num::NonZeroU16,
}
impl ::std::convert::TryFrom<::opencode_pty_protocol::Response> for Resized {
    type Error = crate::ClientError;
    fn try_from(
        response: ::opencode_pty_protocol::Response,
    ) -> ::std::result::Result<Self, crate::ClientError> {
        let ::opencode_pty_protocol::ResizedResponse {
            checkpoint_base64,
            cols,
            generation,
            rows,
        } = crate::types::answer(response)?;
        Ok(Resized {
            checkpoint: crate::types::decode_base64(
                "checkpoint_base64",
                &checkpoint_base64,
            )?,
            cols,
            generation,
            rows,
        })
    }
}

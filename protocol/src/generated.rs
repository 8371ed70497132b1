//! Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand.
//! Change the schema and regenerate; `codegen/tests/drift.rs` fails while this file is stale.

/// Error types.
pub mod error {
    /// Error from a `TryFrom` or `FromStr` implementation.
    pub struct ConversionError(::std::borrow::Cow<'static, str>);
    impl ::std::error::Error for ConversionError {}
    impl ::std::fmt::Display for ConversionError {
        fn fmt(
            &self,
            f: &mut ::std::fmt::Formatter<'_>,
        ) -> Result<(), ::std::fmt::Error> {
            ::std::fmt::Display::fmt(&self.0, f)
        }
    }
    impl ::std::fmt::Debug for ConversionError {
        fn fmt(
            &self,
            f: &mut ::std::fmt::Formatter<'_>,
        ) -> Result<(), ::std::fmt::Error> {
            ::std::fmt::Debug::fmt(&self.0, f)
        }
    }
    impl From<&'static str> for ConversionError {
        fn from(value: &'static str) -> Self {
            Self(value.into())
        }
    }
    impl From<String> for ConversionError {
        fn from(value: String) -> Self {
            Self(value.into())
        }
    }
}
///What a client sends: one request with the daemon's credential. Control frames are UTF-8 JSON objects, each preceded by its length as a four-byte big-endian integer.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
pub struct Envelope {
    ///The request itself.
    pub request: Request,
    ///The random credential from the daemon's registration; a request with a wrong token is refused.
    pub token: ::std::string::String,
}
impl ::std::convert::From<&Envelope> for Envelope {
    fn from(value: &Envelope) -> Self {
        value.clone()
    }
}
///Where a process is in its life, tagged by `status`.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
#[serde(tag = "status")]
pub enum Lifecycle {
    ///The process is running (or has exited but the end of its output is not known yet).
    #[serde(rename = "running")]
    Running,
    ///The process exited and all of its output was read.
    #[serde(rename = "exited")]
    Exited {
        ///The exit status, or null when a signal killed the process.
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        exit_code: ::std::option::Option<u32>,
        ///The name of the signal that killed the process, such as `SIGTERM`; left out when none did.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        signal: ::std::option::Option<::std::string::String>,
    },
    ///The daemon lost track of the process: reading its output, writing its input or waiting for it failed before its exit was published.
    #[serde(rename = "failed")]
    Failed {
        ///What failed, for people.
        message: ::std::string::String,
    },
}
impl ::std::convert::From<&Self> for Lifecycle {
    fn from(value: &Lifecycle) -> Self {
        value.clone()
    }
}
///What kind of process: `pty` runs in a pseudo-terminal whose screen the daemon keeps; `pipe` runs without a terminal and its output goes to a file.
#[derive(
    ::serde::Deserialize,
    ::serde::Serialize,
    Clone,
    Copy,
    Debug,
    Eq,
    Hash,
    Ord,
    PartialEq,
    PartialOrd
)]
pub enum Mode {
    ///`pty`
    #[serde(rename = "pty")]
    Pty,
    ///`pipe`
    #[serde(rename = "pipe")]
    Pipe,
}
impl ::std::convert::From<&Self> for Mode {
    fn from(value: &Mode) -> Self {
        value.clone()
    }
}
impl ::std::fmt::Display for Mode {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::Pty => f.write_str("pty"),
            Self::Pipe => f.write_str("pipe"),
        }
    }
}
impl ::std::str::FromStr for Mode {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "pty" => Ok(Self::Pty),
            "pipe" => Ok(Self::Pipe),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for Mode {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<&::std::string::String> for Mode {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for Mode {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
///A chunk of live output on a subscription. On the wire this is not JSON but a binary frame: the payload is the tag byte 0x00, then `start` and `end` as unsigned 64-bit big-endian integers, then exactly `end - start` raw bytes (the payload is 17 + n bytes long). Readers tell it from a JSON frame by that first byte. The JSON shape here is only how clients represent the frame in memory.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
pub struct OutputFrame {
    ///The raw bytes, standard base64 with padding (on the wire they follow the header unencoded).
    pub data_base64: ::std::string::String,
    ///The offset just past the last byte of the chunk; `end - start` is the number of bytes.
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub end: u64,
    ///The offset of the first byte of the chunk.
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub start: u64,
    ///Tag: `output`.
    #[serde(rename = "type")]
    pub type_: ::std::string::String,
}
impl ::std::convert::From<&OutputFrame> for OutputFrame {
    fn from(value: &OutputFrame) -> Self {
        value.clone()
    }
}
///The pipe part of a pipe process.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
pub struct PipeInfo {
    ///The metadata given at creation or by the latest `set_metadata`.
    pub metadata: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
    ///Why writing the output file stopped; left out while writing works.
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    pub output_error: ::std::option::Option<::std::string::String>,
    ///How many newline bytes were written to the output file, counted in the same step that advances `output_tail`.
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub output_lines: u64,
    ///The absolute path of the file that receives the process's stdout and stderr.
    pub output_path: ::std::string::String,
}
impl ::std::convert::From<&PipeInfo> for PipeInfo {
    fn from(value: &PipeInfo) -> Self {
        value.clone()
    }
}
///Everything the daemon says about one process. Exactly one of `pty` and `pipe` is present, matching `mode`.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
pub struct ProcessInfo {
    ///The program followed by its arguments.
    pub command: ::std::vec::Vec<::std::string::String>,
    ///The absolute working directory the child started in.
    pub cwd: ::std::string::String,
    ///When the exit became final (when `exited` was sent), as milliseconds since the Unix epoch; null until then, and never before `started_at`.
    #[serde(deserialize_with = "crate::serde_rules::nullable_exact_u64")]
    pub exited_at: ::std::option::Option<u64>,
    ///An opaque grouping key chosen by the client (OpenCode uses the session id).
    pub group_id: ::std::string::String,
    ///The process id.
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub id: u64,
    ///Running, exited or failed.
    pub lifecycle: Lifecycle,
    ///Whether this is a PTY or a pipe process; says which of `pty` and `pipe` is present.
    pub mode: Mode,
    ///The oldest output offset still available for replay (equals `output_tail` for pipe processes, which keep no replay).
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub output_head: u64,
    ///The offset just past the last output byte read from the process.
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub output_tail: u64,
    ///The child's process id, or null when it is not known.
    #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
    pub pid: ::std::option::Option<u32>,
    ///The output file state; present exactly when `mode` is `pipe`.
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    pub pipe: ::std::option::Option<PipeInfo>,
    ///The terminal state; present exactly when `mode` is `pty`.
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    pub pty: ::std::option::Option<PtyInfo>,
    ///When the process was started.
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub started_at: u64,
}
impl ::std::convert::From<&ProcessInfo> for ProcessInfo {
    fn from(value: &ProcessInfo) -> Self {
        value.clone()
    }
}
///The terminal part of a PTY process.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
pub struct PtyInfo {
    ///Columns.
    pub cols: ::std::num::NonZeroU16,
    ///The name of the deepest process attached to the terminal in its foreground process group, or null when unknown.
    #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
    pub foreground_process: ::std::option::Option<::std::string::String>,
    ///Rows.
    pub rows: ::std::num::NonZeroU16,
    ///The effective title: the user title, else the latest non-empty OSC 0/2 title, else the title given at creation. At most 256 characters (`MAX_TITLE_CHARS`): longer program titles are cut.
    pub title: ::std::string::String,
    ///The title set by `rename`, or null when none is set. At most 256 characters.
    #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
    pub user_title: ::std::option::Option<::std::string::String>,
}
impl ::std::convert::From<&PtyInfo> for PtyInfo {
    fn from(value: &PtyInfo) -> Self {
        value.clone()
    }
}
///The registration file the daemon writes atomically, with private permissions, in its runtime directory: how clients find, check and authenticate to it.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
pub struct Registration {
    ///Names of the additive capabilities the daemon has beyond its protocol version; empty for plain protocol 8.
    pub features: ::std::vec::Vec<::std::string::String>,
    ///A random id for this daemon instance, 32 lowercase hex characters; `own` must name it.
    pub instance_id: ::std::string::String,
    ///The daemon's process id.
    pub pid: u32,
    ///The protocol version the daemon speaks: 8 for this schema. Clients refuse any other value.
    pub protocol: u32,
    ///Where the daemon listens: the absolute path of its Unix socket (on Windows, the name of its named pipe).
    pub socket: ::std::string::String,
    ///The random credential every request envelope must carry, 32 lowercase hex characters.
    pub token: ::std::string::String,
}
impl ::std::convert::From<&Registration> for Registration {
    fn from(value: &Registration) -> Self {
        value.clone()
    }
}
///A request, tagged by `op`.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
#[serde(tag = "op")]
pub enum Request {
    ///Checks that the daemon answers and asks who it is. Answered with `pong`.
    #[serde(rename = "ping")]
    Ping,
    ///Claims ownership of the daemon. Without a ticket it claims a daemon that has had no owner since it started; with a handoff ticket it takes over from the previous owner, even one still connected. Answered with `owned`, after which this connection is the owner channel.
    #[serde(rename = "own")]
    Own {
        ///The instance id read from the registration; a claim naming a different instance is refused.
        instance_id: ::std::string::String,
        ///The ticket from an earlier `handoff`, when taking over from a previous owner; omitted or null for the first claim after startup.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        ticket: ::std::option::Option<::std::string::String>,
    },
    ///Owner channel only: prepares a handoff so that a replacement server can claim this daemon with `own` before the deadline. Answered with `handoff`; asking again returns the same ticket and deadline.
    #[serde(rename = "prepare_handoff")]
    PrepareHandoff,
    ///Starts a program in a new pseudo-terminal whose screen the daemon keeps. Answered with `created`.
    #[serde(rename = "create_pty")]
    CreatePty {
        ///The arguments after the program name, in order: at most 4096 (`MAX_ARGS`), each at most 131072 characters (`MAX_ARG_CHARS`), and with the program at most 262144 bytes as the JSON array `command` (`MAX_COMMAND_BYTES`, checked by the daemon).
        args: ::std::vec::Vec<::std::string::String>,
        ///The terminal width in columns.
        cols: ::std::num::NonZeroU16,
        ///The absolute directory the child starts in. At most 4096 characters (`MAX_PATH_CHARS`).
        cwd: ::std::string::String,
        ///Environment variables for the child.
        env: ::std::collections::HashMap<::std::string::String, ::std::string::String>,
        ///An opaque grouping key chosen by the client, reported back as `group_id`. At most 256 characters (`MAX_GROUP_ID_CHARS`).
        group_id: ::std::string::String,
        ///The program to start. At most 4096 characters (`MAX_PATH_CHARS`).
        program: ::std::string::String,
        ///The terminal height in rows.
        rows: ::std::num::NonZeroU16,
        ///The title to show until a program sets one with OSC 0/2 or a user title is set with `rename`. At most 256 characters (`MAX_TITLE_CHARS`).
        title: ::std::string::String,
    },
    ///Starts a program without a terminal (Unix only): stdin reads /dev/null, and stdout and stderr share one pipe whose bytes the daemon writes to `output_path`. Answered with `created`.
    #[serde(rename = "create_pipe")]
    CreatePipe {
        ///The arguments after the program name, in order: at most 4096 (`MAX_ARGS`), each at most 131072 characters (`MAX_ARG_CHARS`), and with the program at most 262144 bytes as the JSON array `command` (`MAX_COMMAND_BYTES`, checked by the daemon).
        args: ::std::vec::Vec<::std::string::String>,
        ///The absolute directory the child starts in. At most 4096 characters (`MAX_PATH_CHARS`).
        cwd: ::std::string::String,
        ///The child's whole environment: nothing is inherited from the daemon and no terminal variables are added.
        env: ::std::collections::HashMap<::std::string::String, ::std::string::String>,
        ///An opaque grouping key chosen by the client, reported back as `group_id`. At most 256 characters (`MAX_GROUP_ID_CHARS`).
        group_id: ::std::string::String,
        ///An opaque JSON object to keep with the process and report as `pipe.metadata`; left out, the process starts with an empty object.
        #[serde(default, skip_serializing_if = "::serde_json::Map::is_empty")]
        metadata: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
        ///The absolute path of the file that receives the output. It is truncated, or created, before the child starts; a symlink as its last component is refused. At most 4096 characters (`MAX_PATH_CHARS`).
        output_path: ::std::string::String,
        ///The program to start. At most 4096 characters (`MAX_PATH_CHARS`).
        program: ::std::string::String,
    },
    ///Lists the processes of one mode in creation order, refreshing each PTY's foreground process first. Answered with `processes`.
    #[serde(rename = "list")]
    List {
        ///Which kind of process to list.
        mode: Mode,
    },
    ///Describes one process of either mode, refreshing a PTY's foreground process first. Answered with `process`, or with `error` when the id is unknown.
    #[serde(rename = "get")]
    Get {
        ///The process to describe.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
    },
    ///Pipe processes only: keeps the connection open until the process has exited, then answers with one `exited` and closes. A process that already exited is answered at once; one removed by `terminate` first is answered with `error` `terminated`.
    #[serde(rename = "wait")]
    Wait {
        ///The pipe process to wait for.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
    },
    ///Pipe processes only: sends a signal to the process group and to the child, which stays listed (unlike `terminate`). Answered with `ok`.
    #[serde(rename = "signal")]
    Signal {
        ///The pipe process to signal.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///Which signal to send.
        signal: Signal,
    },
    ///Pipe processes only: replaces the metadata kept with the process. Answered with `ok`.
    #[serde(rename = "set_metadata")]
    SetMetadata {
        ///The pipe process whose metadata is replaced.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///The new metadata; the previous object is dropped, not merged.
        metadata: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
    },
    ///PTY only: sends bytes to the terminal's input. Answered with `ok`.
    #[serde(rename = "write")]
    Write {
        ///The writing attachment, which must be the terminal's controller; null is accepted only while the terminal has no controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        attachment_id: ::std::option::Option<::std::string::String>,
        ///The bytes to send, standard base64 with padding.
        data_base64: ::std::string::String,
        ///The PTY to write to.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
    },
    ///PTY only: resizes the terminal and its screen in one ordered step and always publishes `resized` with a checkpoint, even when the size does not change. Answered with `ok`.
    #[serde(rename = "resize")]
    Resize {
        ///The resizing attachment, which must be the terminal's controller; null is accepted only while the terminal has no controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        attachment_id: ::std::option::Option<::std::string::String>,
        ///The new width in columns.
        cols: ::std::num::NonZeroU16,
        ///The PTY to resize.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///The new height in rows.
        rows: ::std::num::NonZeroU16,
    },
    ///PTY only: in one ordered step, makes a subscribed attachment the controller if it is not already (then demoting the previous one and publishing `controller_changed`) and resizes the terminal to its size when that differs. Answered with `ok`.
    #[serde(rename = "control")]
    Control {
        ///The attachment to promote; it must have an open subscription to this terminal. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
        attachment_id: ::std::string::String,
        ///The attachment's width in columns; the terminal is resized only when this or `rows` differs from its size.
        cols: ::std::num::NonZeroU16,
        ///The PTY to take control of.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///The attachment's height in rows.
        rows: ::std::num::NonZeroU16,
    },
    ///PTY only: does what `control` does, then sends the bytes, all in one ordered step, so a size report caused by the resize reaches the child before the input. Answered with `ok`.
    #[serde(rename = "input")]
    Input {
        ///The attachment that is typing; it must have an open subscription to this terminal and becomes the controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
        attachment_id: ::std::string::String,
        ///The attachment's width in columns; the terminal is resized only when this or `rows` differs from its size.
        cols: ::std::num::NonZeroU16,
        ///The bytes to send after any promotion and resize, standard base64 with padding; may be empty.
        data_base64: ::std::string::String,
        ///The PTY to type into.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///The attachment's height in rows.
        rows: ::std::num::NonZeroU16,
    },
    ///PTY only: captures the visible screen as text, a VT checkpoint and the cursor in one step. Answered with `snapshot`.
    #[serde(rename = "snapshot")]
    Snapshot {
        ///The PTY to capture.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
    },
    ///Reads the last physical rows of a PTY's active screen, history included, as plain text. Answered with `rows`.
    #[serde(rename = "read_rows")]
    ReadRows {
        ///The PTY process to read.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///How many rows to read (1 to 65535); omitted or null reads the terminal's current height.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        rows: ::std::option::Option<::std::num::NonZeroU16>,
    },
    ///PTY only: sets or clears the user title, which wins over titles set by programs. `title_changed` is published only if the effective title changes. Answered with `ok`.
    #[serde(rename = "rename")]
    Rename {
        ///The PTY to rename.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///The new user title; null or an empty string clears it, so the latest program title or the creation title shows again. At most 256 characters (`MAX_TITLE_CHARS`).
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        title: ::std::option::Option<::std::string::String>,
    },
    ///Reads the kept raw output from an offset onwards. Answered with `replay`; a pipe process keeps no output, so its answer has the right offsets and no bytes.
    #[serde(rename = "replay")]
    Replay {
        ///The process whose output is read.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///The first offset wanted; an offset past the current output tail is an error.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        offset: u64,
    },
    ///Attaches to a process and keeps the connection open: answered with `attached` (carrying the replay from `offset`), then live output frames and events (`resized`, `controller_changed`, `title_changed`, `foreground_process_changed`, `exited`) until the process exits or the connection closes.
    #[serde(rename = "subscribe")]
    Subscribe {
        ///A name for this attachment, chosen by the client; reusing a subscribed name replaces that subscription. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
        attachment_id: ::std::string::String,
        ///The process to attach to.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///Where the replay starts; an offset past the current output tail is an error.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        offset: u64,
        ///The role to attach with.
        role: Role,
        ///For the controller role: whether to demote a different existing controller (which stays subscribed as an observer); when false, such a conflict fails the request.
        takeover: bool,
    },
    ///Stops a process and forgets it: a PTY's runtime is shut down; a pipe process's group and child get SIGKILL and the child is reaped. Pending `wait`s get `error` `terminated`. Answered with `ok`.
    #[serde(rename = "terminate")]
    Terminate {
        ///The process to stop and remove.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
    },
    ///Stops the daemon and every process it runs. Accepted from the current owner channel and from any authenticated ordinary connection. Answered with `ok`, then the daemon stops.
    #[serde(rename = "shutdown")]
    Shutdown,
}
impl ::std::convert::From<&Self> for Request {
    fn from(value: &Request) -> Self {
        value.clone()
    }
}
///A response or a subscription event, tagged by `type`.
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
#[serde(tag = "type")]
pub enum Response {
    ///The answer to `ping`: who the daemon is and what it speaks.
    #[serde(rename = "pong")]
    Pong {
        ///Names of the additive capabilities the daemon has beyond its protocol version; empty for plain protocol 8.
        features: ::std::vec::Vec<::std::string::String>,
        ///The daemon's instance id, the same as in its registration.
        instance_id: ::std::string::String,
        ///The daemon's own process id.
        pid: u32,
        ///The protocol version the daemon speaks: 8 for this schema. Clients refuse any other value.
        protocol: u32,
    },
    ///The answer to a successful `own`: this connection is now the owner channel, which accepts only `prepare_handoff` and `shutdown`. Closing it stops the daemon unless a handoff was prepared on it, or a later `own` with a ticket has superseded it (then closing it changes nothing).
    #[serde(rename = "owned")]
    Owned,
    ///The answer to `prepare_handoff`: the ticket a replacement server gives to `own`.
    #[serde(rename = "handoff")]
    Handoff {
        ///When the ticket stops being accepted, as milliseconds since the Unix epoch: 120 seconds after the handoff was first prepared.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        expires_at: u64,
        ///The secret to pass as `own.ticket`: 32 lowercase hex characters, consumed by the first successful claim.
        ticket: ::std::string::String,
    },
    ///The answer to `create_pty` and `create_pipe`: the new process.
    #[serde(rename = "created")]
    Created {
        ///The process just started.
        process: ProcessInfo,
    },
    ///The answer to `list`.
    #[serde(rename = "processes")]
    Processes {
        ///Every process of the requested mode, in creation order.
        processes: ::std::vec::Vec<ProcessInfo>,
    },
    ///The answer to `get`.
    #[serde(rename = "process")]
    Process {
        ///The process asked for.
        process: ProcessInfo,
    },
    ///The request succeeded and has nothing to return.
    #[serde(rename = "ok")]
    Ok,
    ///The request failed. Unknown ops and malformed requests are answered this way too (once the token has been checked), so clients can probe for an op.
    #[serde(rename = "error")]
    Error {
        ///What went wrong, for people, such as `unsupported request: <op>`, `invalid <op> request: ...` or `terminated`.
        message: ::std::string::String,
    },
    ///The answer to `snapshot`: the screen, its checkpoint and the cursor, captured in one step with the process info.
    #[serde(rename = "snapshot")]
    Snapshot {
        ///A VT checkpoint, standard base64 with padding: written into a fresh terminal of the same size, it rebuilds the screen, its modes and the cursor position.
        checkpoint_base64: ::std::string::String,
        ///The cursor column, zero-based.
        cursor_x: u16,
        ///The cursor row within the visible screen, zero-based.
        cursor_y: u16,
        ///The process info, captured in the same step as the screen.
        process: ProcessInfo,
        ///The plain text of the visible screen, one line per row, soft wraps not joined and trailing whitespace trimmed.
        text: ::std::string::String,
    },
    ///The answer to `read_rows`: the rows and the cursor, captured in one step with the process info.
    #[serde(rename = "rows")]
    Rows {
        ///The cursor column, zero-based.
        cursor_x: u16,
        ///The cursor row within the active area (not the returned rows), zero-based.
        cursor_y: u16,
        ///One string per physical row, oldest first: soft wraps not joined, trailing whitespace trimmed, blank rows as empty strings.
        lines: ::std::vec::Vec<::std::string::String>,
        ///The process info, captured in the same step as the rows.
        process: ProcessInfo,
    },
    ///The answer to `replay`: the kept output from the requested offset (or from the oldest kept byte) to the tail.
    #[serde(rename = "replay")]
    Replay {
        ///Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        available_offset: u64,
        ///The bytes from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output.
        data_base64: ::std::string::String,
        ///The offset just past the returned bytes: the output tail when the replay was read.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        end_offset: u64,
        ///The offset the request asked for.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        requested_offset: u64,
        ///True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost.
        truncated: bool,
    },
    ///The first frame of a subscription: the process, the role obtained and the replay. Live output frames and events follow, starting at `end_offset`.
    #[serde(rename = "attached")]
    Attached {
        ///Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        available_offset: u64,
        ///The offset just past the returned bytes: the output tail when the replay was read.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        end_offset: u64,
        ///The controller generation after attaching: a counter that grows each time the terminal's controller changes.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        generation: u64,
        ///The process info, captured in the same step as the replay.
        process: ProcessInfo,
        ///The kept output from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output.
        replay_base64: ::std::string::String,
        ///The offset the request asked for.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        requested_offset: u64,
        ///The role this attachment has now.
        role: Role,
        ///True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost.
        truncated: bool,
    },
    ///Subscription event: the terminal was resized. Later output is laid out for the new size.
    #[serde(rename = "resized")]
    Resized {
        ///A VT checkpoint of the screen just after the resize, standard base64 with padding; a client resets its terminal to the new size and writes it before any later output.
        checkpoint_base64: ::std::string::String,
        ///The new width in columns.
        cols: ::std::num::NonZeroU16,
        ///The controller generation when the resize happened (not a count of resizes).
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        generation: u64,
        ///The new height in rows.
        rows: ::std::num::NonZeroU16,
    },
    ///Subscription event: the terminal's controller changed (through takeover, promotion by `control` or `input`, or a detach). Sent to every subscriber, the new controller included.
    #[serde(rename = "controller_changed")]
    ControllerChanged {
        ///The attachment that controls the terminal now, or null when none does.
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        attachment_id: ::std::option::Option<::std::string::String>,
        ///The controller generation after the change.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        generation: u64,
    },
    ///Subscription event: the effective title changed, through `rename` or an OSC 0/2 sequence not hidden by a user title.
    #[serde(rename = "title_changed")]
    TitleChanged {
        ///The new effective title, at most 256 characters (`MAX_TITLE_CHARS`).
        title: ::std::string::String,
    },
    ///Subscription event: the process in the terminal's foreground changed.
    #[serde(rename = "foreground_process_changed")]
    ForegroundProcessChanged {
        ///The name of the deepest terminal-attached process in the foreground process group, or null when it is not known.
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        process: ::std::option::Option<::std::string::String>,
    },
    ///The process exited and the end of its output was read. The last event of a subscription, and the one answer to `wait`.
    #[serde(rename = "exited")]
    Exited {
        ///The exit status, or null when a signal killed the process.
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        exit_code: ::std::option::Option<u32>,
        ///When the exit became final, as milliseconds since the Unix epoch; the same value as `exited_at` in the process info from then on.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        exited_at: u64,
        ///The output tail at exit: the offset just past the last byte the process wrote.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        final_offset: u64,
        ///Pipe processes only: why writing the output file stopped; left out when it never did.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        output_error: ::std::option::Option<::std::string::String>,
        ///Pipe processes only: how many newline bytes went to the output file; left out for PTYs.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        #[serde(deserialize_with = "crate::serde_rules::nullable_exact_u64")]
        output_lines: ::std::option::Option<u64>,
        ///The name of the signal that killed the process, such as `SIGTERM`; left out when no signal did.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        signal: ::std::option::Option<::std::string::String>,
    },
}
impl ::std::convert::From<&Self> for Response {
    fn from(value: &Response) -> Self {
        value.clone()
    }
}
///How a subscription attaches: a `controller` may write and resize (at most one per terminal); an `observer` only watches until an interaction promotes it.
#[derive(
    ::serde::Deserialize,
    ::serde::Serialize,
    Clone,
    Copy,
    Debug,
    Eq,
    Hash,
    Ord,
    PartialEq,
    PartialOrd
)]
pub enum Role {
    ///`controller`
    #[serde(rename = "controller")]
    Controller,
    ///`observer`
    #[serde(rename = "observer")]
    Observer,
}
impl ::std::convert::From<&Self> for Role {
    fn from(value: &Role) -> Self {
        value.clone()
    }
}
impl ::std::fmt::Display for Role {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::Controller => f.write_str("controller"),
            Self::Observer => f.write_str("observer"),
        }
    }
}
impl ::std::str::FromStr for Role {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "controller" => Ok(Self::Controller),
            "observer" => Ok(Self::Observer),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for Role {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<&::std::string::String> for Role {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for Role {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
///A signal the daemon can send to a pipe process's group and child.
#[derive(
    ::serde::Deserialize,
    ::serde::Serialize,
    Clone,
    Copy,
    Debug,
    Eq,
    Hash,
    Ord,
    PartialEq,
    PartialOrd
)]
pub enum Signal {
    ///`SIGTERM`
    #[serde(rename = "SIGTERM")]
    Sigterm,
    ///`SIGINT`
    #[serde(rename = "SIGINT")]
    Sigint,
    ///`SIGKILL`
    #[serde(rename = "SIGKILL")]
    Sigkill,
}
impl ::std::convert::From<&Self> for Signal {
    fn from(value: &Signal) -> Self {
        value.clone()
    }
}
impl ::std::fmt::Display for Signal {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::Sigterm => f.write_str("SIGTERM"),
            Self::Sigint => f.write_str("SIGINT"),
            Self::Sigkill => f.write_str("SIGKILL"),
        }
    }
}
impl ::std::str::FromStr for Signal {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "SIGTERM" => Ok(Self::Sigterm),
            "SIGINT" => Ok(Self::Sigint),
            "SIGKILL" => Ok(Self::Sigkill),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for Signal {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<&::std::string::String> for Signal {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for Signal {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
/// The protocol version (`x-protocol-version` of `schema/protocol.json`).
pub const PROTOCOL_VERSION: u32 = 8;
/// Additive capabilities of this protocol version (`x-features`).
pub const FEATURES: &[&str] = &[];
/// Every request `op`, in schema order.
pub const REQUEST_OPS: &[&str] = &[
    "ping",
    "own",
    "prepare_handoff",
    "create_pty",
    "create_pipe",
    "list",
    "get",
    "wait",
    "signal",
    "set_metadata",
    "write",
    "resize",
    "control",
    "input",
    "snapshot",
    "read_rows",
    "rename",
    "replay",
    "subscribe",
    "terminate",
    "shutdown",
];
/// Every response and event `type`, in schema order.
pub const RESPONSE_TYPES: &[&str] = &[
    "pong",
    "owned",
    "handoff",
    "created",
    "processes",
    "process",
    "ok",
    "error",
    "snapshot",
    "rows",
    "replay",
    "attached",
    "resized",
    "controller_changed",
    "title_changed",
    "foreground_process_changed",
    "exited",
];

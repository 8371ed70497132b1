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
///What a terminal waits for (SPEC I2): `prompt` (shell integration says the shell waits for a command), `password` (a process of the foreground group is blocked reading the terminal, which is in canonical mode with echo off), `line` (reading it in canonical mode with echo on), `key` (reading it with canonical mode off: a pager, a menu, an editor, a line editor).
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
pub enum InputWait {
    ///`prompt`
    #[serde(rename = "prompt")]
    Prompt,
    ///`password`
    #[serde(rename = "password")]
    Password,
    ///`line`
    #[serde(rename = "line")]
    Line,
    ///`key`
    #[serde(rename = "key")]
    Key,
}
impl ::std::convert::From<&Self> for InputWait {
    fn from(value: &InputWait) -> Self {
        value.clone()
    }
}
impl ::std::fmt::Display for InputWait {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::Prompt => f.write_str("prompt"),
            Self::Password => f.write_str("password"),
            Self::Line => f.write_str("line"),
            Self::Key => f.write_str("key"),
        }
    }
}
impl ::std::str::FromStr for InputWait {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "prompt" => Ok(Self::Prompt),
            "password" => Ok(Self::Password),
            "line" => Ok(Self::Line),
            "key" => Ok(Self::Key),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for InputWait {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<&::std::string::String> for InputWait {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for InputWait {
    type Error = self::error::ConversionError;
    fn try_from(
        value: ::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
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
///An additive feature a request opts into (SPEC V7): only a request that names it gets the members and events the feature adds. `commands`: `shell` in `pty` of every `ProcessInfo` of the answer (and of `attached`) for a terminal with shell integration, and on a subscription the `command_started` and `command_finished` events. `input`: `input` and `alternate_screen` in `pty`, and on a subscription the `input_changed` events.
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
pub enum OptIn {
    ///`commands`
    #[serde(rename = "commands")]
    Commands,
    ///`input`
    #[serde(rename = "input")]
    Input,
}
impl ::std::convert::From<&Self> for OptIn {
    fn from(value: &OptIn) -> Self {
        value.clone()
    }
}
impl ::std::fmt::Display for OptIn {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::Commands => f.write_str("commands"),
            Self::Input => f.write_str("input"),
        }
    }
}
impl ::std::str::FromStr for OptIn {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "commands" => Ok(Self::Commands),
            "input" => Ok(Self::Input),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for OptIn {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<&::std::string::String> for OptIn {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for OptIn {
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
    ///Whether the alternate screen is active (a full-screen program such as `vi`, `less` or `top` shows it). Present exactly when the request opted into `input` (SPEC I3).
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    pub alternate_screen: ::std::option::Option<bool>,
    ///Columns.
    pub cols: ::std::num::NonZeroU16,
    ///The name of the deepest process attached to the terminal in its foreground process group, or null when unknown.
    #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
    pub foreground_process: ::std::option::Option<::std::string::String>,
    ///What the terminal waits for, or null when no process of its foreground group is blocked waiting for input from it (running, sleeping, waiting on the network or on a file). Present exactly when the request opted into `input` (SPEC I1, I2).
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    #[serde(deserialize_with = "crate::serde_rules::absent_or_null")]
    pub input: ::std::option::Option<::std::option::Option<InputWait>>,
    ///Rows.
    pub rows: ::std::num::NonZeroU16,
    ///What the shell says about itself: present exactly when the request opted into `commands` and the terminal was started with `shell_integration` (SPEC §10, V7), left out otherwise.
    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
    pub shell: ::std::option::Option<ShellState>,
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
        ///How many bytes of the terminal's newest raw output the daemon keeps for replay (a `subscribe` or `replay` from an older offset, a subscription resumed after an upgrade): 4096 (`MIN_REPLAY_BYTES`) to 67108864 (64 MiB, `MAX_REPLAY_BYTES`); omitted or null: 2097152 (2 MiB, `DEFAULT_REPLAY_BYTES`). A subscriber further behind than this when its connection breaks cannot resume without a gap. Only a daemon whose `features` include `bounds` knows it.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        replay_bytes: ::std::option::Option<u32>,
        ///The terminal height in rows.
        rows: ::std::num::NonZeroU16,
        ///How many lines of history the terminal's emulator keeps above its screen: 0 to 100000 (`MAX_SCROLLBACK_LINES`); omitted or null: 10000 (`DEFAULT_SCROLLBACK_LINES`). The emulator enforces it a page of rows at a time, so a few more lines may stay. Fewer lines cost less memory: a client that shows little history pays little. Only a daemon whose `features` include `bounds` knows it.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        scrollback_lines: ::std::option::Option<u32>,
        ///Starts the program, which must be `bash`, `zsh` or `fish` (by its file name), with the daemon's shell integration, so that the terminal's `pty.shell` and the `commands` request report the shell's prompt, its commands, their output offsets and exit codes (SPEC §10). Left out or false: the program starts exactly as asked. Only a daemon whose `features` include `commands` knows it.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        shell_integration: ::std::option::Option<bool>,
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
    ///Lists the processes of one mode in creation order, refreshing each PTY's foreground process first, all of them or one page (`after`, `limit`; feature `pages`). Answered with `processes`.
    #[serde(rename = "list")]
    List {
        ///Paged listing (feature `pages`, SPEC D17): only processes whose id is greater than this one, the `next` of the page before. Left out: from the first process. With `after` or `limit`, the answer is one page and says whether more follow (`next`).
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        #[serde(deserialize_with = "crate::serde_rules::nullable_exact_u64")]
        after: ::std::option::Option<u64>,
        ///The features whose members each `ProcessInfo` of the answer carries (SPEC V7; `input`: what each terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`).
        #[serde(default, skip_serializing_if = "::std::vec::Vec::is_empty")]
        features: ::std::vec::Vec<OptIn>,
        ///Paged listing (feature `pages`, SPEC D17): at most this many processes in the answer (at least 1). Left out: every process after `after`.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        limit: ::std::option::Option<::std::num::NonZeroU32>,
        ///Which kind of process to list.
        mode: Mode,
    },
    ///Describes one process of either mode, refreshing a PTY's foreground process first. Answered with `process`, or with `error` when the id is unknown.
    #[serde(rename = "get")]
    Get {
        ///The features whose members the answer's `ProcessInfo` carries (SPEC V7; `input`: what the terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`).
        #[serde(default, skip_serializing_if = "::std::vec::Vec::is_empty")]
        features: ::std::vec::Vec<OptIn>,
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
        ///The attachment to promote; it must have an open subscription to this terminal, or be its controller already (as a controller is after an in-place upgrade until it subscribes again). At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
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
        ///The attachment that is typing; it must have an open subscription to this terminal, or be its controller already (as a controller is after an in-place upgrade until it subscribes again), and becomes the controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
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
        ///The features whose members the answer's `process` carries (SPEC V7; `input`: what the terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`).
        #[serde(default, skip_serializing_if = "::std::vec::Vec::is_empty")]
        features: ::std::vec::Vec<OptIn>,
        ///The PTY to capture.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
    },
    ///Reads the last physical rows of a PTY's active screen, history included, as plain text. Answered with `rows`.
    #[serde(rename = "read_rows")]
    ReadRows {
        ///The features whose members the answer's `process` carries (SPEC V7; `input`: what the terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`).
        #[serde(default, skip_serializing_if = "::std::vec::Vec::is_empty")]
        features: ::std::vec::Vec<OptIn>,
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
        ///The features whose events this subscription also carries, each in order with the output around it (SPEC I5; `input`: `input_changed`), and whose members `attached`'s `process` carries. Left out or empty: none, exactly the events of protocol 8 without features. At most 8 entries (`MAX_OPT_IN_ITEMS`); a pipe process has none of these events.
        #[serde(default, skip_serializing_if = "::std::vec::Vec::is_empty")]
        events: ::std::vec::Vec<OptIn>,
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
    ///Lists the last commands of a terminal started with `shell_integration`, newest last. Answered with `commands`, or with `error` for a pipe process or a terminal without shell integration. Only a daemon whose `features` include `commands` knows it.
    #[serde(rename = "commands")]
    Commands {
        ///The terminal.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///At most this many of the newest commands (1 to 256, `MAX_COMMANDS`); omitted or null: every command the terminal keeps.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        limit: ::std::option::Option<::std::num::NonZeroU16>,
    },
    ///Types a command at the prompt of a terminal started with `shell_integration` and holds the connection until the command ends (answered with `command_finished`) or `timeout_ms` passes (answered with `command_running`; the command goes on, and `wait_command` waits again). Refused at once with `error` unless the shell is at its prompt with nothing typed (SPEC SH10). Only a daemon whose `features` include `commands` knows it.
    #[serde(rename = "run")]
    Run {
        ///The command line, typed as is and followed by Enter. Several lines are sent as one bracketed paste, which the shell must have enabled. Not empty, no control characters but newlines and tabs, at most 65536 bytes of UTF-8 (`MAX_RUN_COMMAND_BYTES`).
        command: ::std::string::String,
        ///The terminal.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///How long to wait for the command's end, in milliseconds: 0 to 86400000 (24 hours, `MAX_COMMAND_WAIT_MS`); omitted or null: 30000 (`DEFAULT_COMMAND_WAIT_MS`).
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        timeout_ms: ::std::option::Option<u32>,
    },
    ///Holds the connection until a command of a terminal started with `shell_integration` ends (answered with `command_finished`, at once for one that already ended) or `timeout_ms` passes (answered with `command_running`). Several may wait for one command (SPEC SH11). Only a daemon whose `features` include `commands` knows it.
    #[serde(rename = "wait_command")]
    WaitCommand {
        ///The command, as `run`'s `command_running` or `commands` named it.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        command_id: u64,
        ///The terminal.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        id: u64,
        ///As `run`'s: 0 to 86400000 milliseconds, 30000 when omitted or null.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        timeout_ms: ::std::option::Option<u32>,
    },
    ///Owner channel only: re-executes the daemon in place from a new binary, keeping its pid, socket, token, processes, terminals, offsets and ownership (SPEC §7). Answered with `ok` once the new image serves requests, or with `error` (the path refused, the new program's preflight failed, the new image could not take the state) while the old image still serves with nothing lost. Other connections are closed once their requests in flight are answered; a client resubscribes from the last offset it saw. Only a daemon whose `features` include `upgrade` carries it out; any other answers it with `error`. From an ordinary connection it is refused like `prepare_handoff`.
    #[serde(rename = "upgrade")]
    Upgrade {
        ///The absolute path of the new binary: an executable regular file that no other user can write, owned by the daemon's user or by root. At most 4096 characters (`MAX_PATH_CHARS`). Omitted or null: the daemon's own executable as it is on disk now (a package upgrade replaced it).
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        program: ::std::option::Option<::std::string::String>,
    },
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
    ///The answer to a successful `own`: this connection is now the owner channel, which accepts only `prepare_handoff`, `upgrade` (on a daemon whose `features` include it) and `shutdown`. Closing it stops the daemon unless a handoff was prepared on it, or a later `own` with a ticket has superseded it (then closing it changes nothing).
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
        ///Paged listing only (feature `pages`, SPEC D17): processes of the mode with greater ids followed this page when it was answered; the `after` of the next page (the id of this page's last process). Left out when this page is the last, and in every answer to a request without `after` and `limit`.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        #[serde(deserialize_with = "crate::serde_rules::nullable_exact_u64")]
        next: ::std::option::Option<u64>,
        ///Every process of the requested mode, in creation order (one page of them when the request named `after` or `limit`).
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
    ///Subscription event, sent only to a subscriber that asked for it (`subscribe` with `events: ["input"]`): what the terminal waits for changed (SPEC I5).
    #[serde(rename = "input_changed")]
    InputChanged {
        ///What the terminal waits for now (as `pty.input`), or null when no process of its foreground group is waiting for input from it.
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        input: ::std::option::Option<InputWait>,
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
    ///The answer to `commands`: the terminal's last commands (at most 256, `MAX_COMMANDS`), oldest first, captured in one step with the process info.
    #[serde(rename = "commands")]
    Commands {
        ///The commands, oldest first; the running one, if any, last.
        commands: ::std::vec::Vec<ShellCommand>,
        ///The process info, captured in the same step as the commands.
        process: ProcessInfo,
    },
    ///Subscription event, sent only to a subscriber that asked for it (`subscribe` with `events: ["commands"]`): a command of a terminal with shell integration started, after the output before its first byte (SPEC SH12).
    #[serde(rename = "command_started")]
    CommandStarted {
        ///The command line as in `commands` (at most 4096 bytes, `MAX_COMMAND_LINE_BYTES`).
        command: ::std::string::String,
        ///The command (as in `commands`).
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        command_id: u64,
        ///The shell's working directory, as in `commands`.
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        cwd: ::std::option::Option<::std::string::String>,
        ///The output offset of its first byte of output.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        output_start: u64,
    },
    ///A command of a terminal with shell integration ended. The answer to `run` and `wait_command`, with the command's text; also a subscription event (without `text` and `truncated`), sent only to a subscriber that asked for it (`subscribe` with `events: ["commands"]`), after the command's last byte of output and before the next (SPEC SH11, SH12).
    #[serde(rename = "command_finished")]
    CommandFinished {
        ///The command.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        command_id: u64,
        ///Its exit status as the shell reported it, or null when it ended without one (the next prompt came without an end mark).
        #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
        exit_code: ::std::option::Option<u32>,
        ///The output offset just past its last byte of output: `replay` from `output_start` has its exact bytes while they are kept.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        output_end: u64,
        ///The output offset of its first byte of output (as in `commands`).
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        output_start: u64,
        ///Answers only: the output as plain text rows joined by newlines (as `read_rows` formats rows, at the terminal's size when the command started; trailing blank rows left out), at most about 1 MiB (`MAX_ROWS_BYTES`): the first and the last rows, with a marker row where rows were left out.
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        text: ::std::option::Option<::std::string::String>,
        ///Answers only: whether rows were left out of `text` (a marker row says where and how many).
        #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
        truncated: ::std::option::Option<bool>,
    },
    ///The answer to `run` or `wait_command` whose `timeout_ms` passed before the command ended: it goes on running, and `wait_command` with this `command_id` waits again (SPEC SH11).
    #[serde(rename = "command_running")]
    CommandRunning {
        ///The command: for a `run` whose command the shell has not started yet, the number it will get.
        #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
        command_id: u64,
        ///The output offset of its first byte of output, or null when the shell has not started it yet.
        #[serde(deserialize_with = "crate::serde_rules::nullable_exact_u64")]
        output_start: ::std::option::Option<u64>,
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
///One command a shell with integration ran, as its marks told it (SPEC §10).
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
pub struct ShellCommand {
    ///The command line as the shell read it (bash: from its history, empty for a line bash keeps out of it). At most 4096 bytes of UTF-8 (`MAX_COMMAND_LINE_BYTES`): a longer one is cut at a character boundary.
    pub command: ::std::string::String,
    ///Numbers the terminal's commands from 1, in the order they started.
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub command_id: u64,
    ///The shell's working directory when the command started, or null when it had not reported one. At most 4096 bytes of UTF-8 (`MAX_SHELL_CWD_BYTES`).
    #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
    pub cwd: ::std::option::Option<::std::string::String>,
    ///The command's exit status as the shell reported it, or null while it runs or when it ended without one (the next prompt came without an end mark, or the terminal exited).
    #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
    pub exit_code: ::std::option::Option<u32>,
    ///When the daemon read the mark that ended the command (or learnt it had ended otherwise), as milliseconds since the Unix epoch; null while it runs.
    #[serde(deserialize_with = "crate::serde_rules::nullable_exact_u64")]
    pub finished_at: ::std::option::Option<u64>,
    ///The output offset where the mark that ended the command starts (just past its last byte of output), or null while it runs.
    #[serde(deserialize_with = "crate::serde_rules::nullable_exact_u64")]
    pub output_end: ::std::option::Option<u64>,
    ///The output offset just past the mark that started the command's output: its first byte of output, if any.
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub output_start: u64,
    ///When the daemon read the mark that started the command.
    #[serde(deserialize_with = "crate::serde_rules::exact_u64")]
    pub started_at: u64,
}
impl ::std::convert::From<&ShellCommand> for ShellCommand {
    fn from(value: &ShellCommand) -> Self {
        value.clone()
    }
}
///What the shell of a terminal started with `shell_integration` says about itself, from the marks its integration script writes (SPEC §10).
#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
pub struct ShellState {
    ///The `command_id` of the running command, or null when none runs.
    #[serde(deserialize_with = "crate::serde_rules::nullable_exact_u64")]
    pub command_id: ::std::option::Option<u64>,
    ///The shell's working directory as it last reported it (at its latest prompt), or null before it has. At most 4096 bytes of UTF-8 (`MAX_SHELL_CWD_BYTES`): a longer one is reported as null.
    #[serde(deserialize_with = "crate::serde_rules::required_nullable")]
    pub cwd: ::std::option::Option<::std::string::String>,
    ///`starting` until the shell's first prompt, `prompt` while it shows its prompt or reads a command line, `running` from the start of a command's output until its end.
    pub state: ShellStateState,
}
impl ::std::convert::From<&ShellState> for ShellState {
    fn from(value: &ShellState) -> Self {
        value.clone()
    }
}
///`starting` until the shell's first prompt, `prompt` while it shows its prompt or reads a command line, `running` from the start of a command's output until its end.
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
pub enum ShellStateState {
    ///`starting`
    #[serde(rename = "starting")]
    Starting,
    ///`prompt`
    #[serde(rename = "prompt")]
    Prompt,
    ///`running`
    #[serde(rename = "running")]
    Running,
}
impl ::std::convert::From<&Self> for ShellStateState {
    fn from(value: &ShellStateState) -> Self {
        value.clone()
    }
}
impl ::std::fmt::Display for ShellStateState {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        match *self {
            Self::Starting => f.write_str("starting"),
            Self::Prompt => f.write_str("prompt"),
            Self::Running => f.write_str("running"),
        }
    }
}
impl ::std::str::FromStr for ShellStateState {
    type Err = self::error::ConversionError;
    fn from_str(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        match value {
            "starting" => Ok(Self::Starting),
            "prompt" => Ok(Self::Prompt),
            "running" => Ok(Self::Running),
            _ => Err("invalid value".into()),
        }
    }
}
impl ::std::convert::TryFrom<&str> for ShellStateState {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &str,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<&::std::string::String> for ShellStateState {
    type Error = self::error::ConversionError;
    fn try_from(
        value: &::std::string::String,
    ) -> ::std::result::Result<Self, self::error::ConversionError> {
        value.parse()
    }
}
impl ::std::convert::TryFrom<::std::string::String> for ShellStateState {
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
///Checks that the daemon answers and asks who it is. Answered with `pong`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PingRequest;
impl ::std::convert::From<PingRequest> for Request {
    fn from(_: PingRequest) -> Self {
        Request::Ping
    }
}
impl ::std::convert::TryFrom<Request> for PingRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Ping => Ok(PingRequest),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for PingRequest {
    const OP: &'static str = "ping";
    type Answer = PongResponse;
}
///Claims ownership of the daemon. Without a ticket it claims a daemon that has had no owner since it started; with a handoff ticket it takes over from the previous owner, even one still connected. Answered with `owned`, after which this connection is the owner channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnRequest {
    ///The instance id read from the registration; a claim naming a different instance is refused.
    pub instance_id: ::std::string::String,
    ///The ticket from an earlier `handoff`, when taking over from a previous owner; omitted or null for the first claim after startup.
    pub ticket: ::std::option::Option<::std::string::String>,
}
impl ::std::convert::From<OwnRequest> for Request {
    fn from(value: OwnRequest) -> Self {
        let OwnRequest { instance_id, ticket } = value;
        Request::Own {
            instance_id,
            ticket,
        }
    }
}
impl ::std::convert::TryFrom<Request> for OwnRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Own { instance_id, ticket } => {
                Ok(OwnRequest { instance_id, ticket })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for OwnRequest {
    const OP: &'static str = "own";
    type Answer = OwnedResponse;
}
///Owner channel only: prepares a handoff so that a replacement server can claim this daemon with `own` before the deadline. Answered with `handoff`; asking again returns the same ticket and deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrepareHandoffRequest;
impl ::std::convert::From<PrepareHandoffRequest> for Request {
    fn from(_: PrepareHandoffRequest) -> Self {
        Request::PrepareHandoff
    }
}
impl ::std::convert::TryFrom<Request> for PrepareHandoffRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::PrepareHandoff => Ok(PrepareHandoffRequest),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for PrepareHandoffRequest {
    const OP: &'static str = "prepare_handoff";
    type Answer = HandoffResponse;
}
///Starts a program in a new pseudo-terminal whose screen the daemon keeps. Answered with `created`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatePtyRequest {
    ///The arguments after the program name, in order: at most 4096 (`MAX_ARGS`), each at most 131072 characters (`MAX_ARG_CHARS`), and with the program at most 262144 bytes as the JSON array `command` (`MAX_COMMAND_BYTES`, checked by the daemon).
    pub args: ::std::vec::Vec<::std::string::String>,
    ///The terminal width in columns.
    pub cols: ::std::num::NonZeroU16,
    ///The absolute directory the child starts in. At most 4096 characters (`MAX_PATH_CHARS`).
    pub cwd: ::std::string::String,
    ///Environment variables for the child.
    pub env: ::std::collections::HashMap<::std::string::String, ::std::string::String>,
    ///An opaque grouping key chosen by the client, reported back as `group_id`. At most 256 characters (`MAX_GROUP_ID_CHARS`).
    pub group_id: ::std::string::String,
    ///The program to start. At most 4096 characters (`MAX_PATH_CHARS`).
    pub program: ::std::string::String,
    ///How many bytes of the terminal's newest raw output the daemon keeps for replay (a `subscribe` or `replay` from an older offset, a subscription resumed after an upgrade): 4096 (`MIN_REPLAY_BYTES`) to 67108864 (64 MiB, `MAX_REPLAY_BYTES`); omitted or null: 2097152 (2 MiB, `DEFAULT_REPLAY_BYTES`). A subscriber further behind than this when its connection breaks cannot resume without a gap. Only a daemon whose `features` include `bounds` knows it.
    pub replay_bytes: ::std::option::Option<u32>,
    ///The terminal height in rows.
    pub rows: ::std::num::NonZeroU16,
    ///How many lines of history the terminal's emulator keeps above its screen: 0 to 100000 (`MAX_SCROLLBACK_LINES`); omitted or null: 10000 (`DEFAULT_SCROLLBACK_LINES`). The emulator enforces it a page of rows at a time, so a few more lines may stay. Fewer lines cost less memory: a client that shows little history pays little. Only a daemon whose `features` include `bounds` knows it.
    pub scrollback_lines: ::std::option::Option<u32>,
    ///Starts the program, which must be `bash`, `zsh` or `fish` (by its file name), with the daemon's shell integration, so that the terminal's `pty.shell` and the `commands` request report the shell's prompt, its commands, their output offsets and exit codes (SPEC §10). Left out or false: the program starts exactly as asked. Only a daemon whose `features` include `commands` knows it.
    pub shell_integration: ::std::option::Option<bool>,
    ///The title to show until a program sets one with OSC 0/2 or a user title is set with `rename`. At most 256 characters (`MAX_TITLE_CHARS`).
    pub title: ::std::string::String,
}
impl ::std::convert::From<CreatePtyRequest> for Request {
    fn from(value: CreatePtyRequest) -> Self {
        let CreatePtyRequest {
            args,
            cols,
            cwd,
            env,
            group_id,
            program,
            replay_bytes,
            rows,
            scrollback_lines,
            shell_integration,
            title,
        } = value;
        Request::CreatePty {
            args,
            cols,
            cwd,
            env,
            group_id,
            program,
            replay_bytes,
            rows,
            scrollback_lines,
            shell_integration,
            title,
        }
    }
}
impl ::std::convert::TryFrom<Request> for CreatePtyRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::CreatePty {
                args,
                cols,
                cwd,
                env,
                group_id,
                program,
                replay_bytes,
                rows,
                scrollback_lines,
                shell_integration,
                title,
            } => {
                Ok(CreatePtyRequest {
                    args,
                    cols,
                    cwd,
                    env,
                    group_id,
                    program,
                    replay_bytes,
                    rows,
                    scrollback_lines,
                    shell_integration,
                    title,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for CreatePtyRequest {
    const OP: &'static str = "create_pty";
    type Answer = CreatedResponse;
}
///Starts a program without a terminal (Unix only): stdin reads /dev/null, and stdout and stderr share one pipe whose bytes the daemon writes to `output_path`. Answered with `created`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatePipeRequest {
    ///The arguments after the program name, in order: at most 4096 (`MAX_ARGS`), each at most 131072 characters (`MAX_ARG_CHARS`), and with the program at most 262144 bytes as the JSON array `command` (`MAX_COMMAND_BYTES`, checked by the daemon).
    pub args: ::std::vec::Vec<::std::string::String>,
    ///The absolute directory the child starts in. At most 4096 characters (`MAX_PATH_CHARS`).
    pub cwd: ::std::string::String,
    ///The child's whole environment: nothing is inherited from the daemon and no terminal variables are added.
    pub env: ::std::collections::HashMap<::std::string::String, ::std::string::String>,
    ///An opaque grouping key chosen by the client, reported back as `group_id`. At most 256 characters (`MAX_GROUP_ID_CHARS`).
    pub group_id: ::std::string::String,
    ///An opaque JSON object to keep with the process and report as `pipe.metadata`; left out, the process starts with an empty object.
    pub metadata: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
    ///The absolute path of the file that receives the output. It is truncated, or created, before the child starts; a symlink as its last component is refused. At most 4096 characters (`MAX_PATH_CHARS`).
    pub output_path: ::std::string::String,
    ///The program to start. At most 4096 characters (`MAX_PATH_CHARS`).
    pub program: ::std::string::String,
}
impl ::std::convert::From<CreatePipeRequest> for Request {
    fn from(value: CreatePipeRequest) -> Self {
        let CreatePipeRequest {
            args,
            cwd,
            env,
            group_id,
            metadata,
            output_path,
            program,
        } = value;
        Request::CreatePipe {
            args,
            cwd,
            env,
            group_id,
            metadata,
            output_path,
            program,
        }
    }
}
impl ::std::convert::TryFrom<Request> for CreatePipeRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::CreatePipe {
                args,
                cwd,
                env,
                group_id,
                metadata,
                output_path,
                program,
            } => {
                Ok(CreatePipeRequest {
                    args,
                    cwd,
                    env,
                    group_id,
                    metadata,
                    output_path,
                    program,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for CreatePipeRequest {
    const OP: &'static str = "create_pipe";
    type Answer = CreatedResponse;
}
///Lists the processes of one mode in creation order, refreshing each PTY's foreground process first, all of them or one page (`after`, `limit`; feature `pages`). Answered with `processes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListRequest {
    ///Paged listing (feature `pages`, SPEC D17): only processes whose id is greater than this one, the `next` of the page before. Left out: from the first process. With `after` or `limit`, the answer is one page and says whether more follow (`next`).
    pub after: ::std::option::Option<u64>,
    ///The features whose members each `ProcessInfo` of the answer carries (SPEC V7; `input`: what each terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`).
    pub features: ::std::vec::Vec<OptIn>,
    ///Paged listing (feature `pages`, SPEC D17): at most this many processes in the answer (at least 1). Left out: every process after `after`.
    pub limit: ::std::option::Option<::std::num::NonZeroU32>,
    ///Which kind of process to list.
    pub mode: Mode,
}
impl ::std::convert::From<ListRequest> for Request {
    fn from(value: ListRequest) -> Self {
        let ListRequest { after, features, limit, mode } = value;
        Request::List {
            after,
            features,
            limit,
            mode,
        }
    }
}
impl ::std::convert::TryFrom<Request> for ListRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::List { after, features, limit, mode } => {
                Ok(ListRequest {
                    after,
                    features,
                    limit,
                    mode,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for ListRequest {
    const OP: &'static str = "list";
    type Answer = ProcessesResponse;
}
///Describes one process of either mode, refreshing a PTY's foreground process first. Answered with `process`, or with `error` when the id is unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetRequest {
    ///The features whose members the answer's `ProcessInfo` carries (SPEC V7; `input`: what the terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`).
    pub features: ::std::vec::Vec<OptIn>,
    ///The process to describe.
    pub id: u64,
}
impl ::std::convert::From<GetRequest> for Request {
    fn from(value: GetRequest) -> Self {
        let GetRequest { features, id } = value;
        Request::Get { features, id }
    }
}
impl ::std::convert::TryFrom<Request> for GetRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Get { features, id } => Ok(GetRequest { features, id }),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for GetRequest {
    const OP: &'static str = "get";
    type Answer = ProcessResponse;
}
///Pipe processes only: keeps the connection open until the process has exited, then answers with one `exited` and closes. A process that already exited is answered at once; one removed by `terminate` first is answered with `error` `terminated`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitRequest {
    ///The pipe process to wait for.
    pub id: u64,
}
impl ::std::convert::From<WaitRequest> for Request {
    fn from(value: WaitRequest) -> Self {
        let WaitRequest { id } = value;
        Request::Wait { id }
    }
}
impl ::std::convert::TryFrom<Request> for WaitRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Wait { id } => Ok(WaitRequest { id }),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for WaitRequest {
    const OP: &'static str = "wait";
    type Answer = ExitedResponse;
}
///Pipe processes only: sends a signal to the process group and to the child, which stays listed (unlike `terminate`). Answered with `ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignalRequest {
    ///The pipe process to signal.
    pub id: u64,
    ///Which signal to send.
    pub signal: Signal,
}
impl ::std::convert::From<SignalRequest> for Request {
    fn from(value: SignalRequest) -> Self {
        let SignalRequest { id, signal } = value;
        Request::Signal { id, signal }
    }
}
impl ::std::convert::TryFrom<Request> for SignalRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Signal { id, signal } => Ok(SignalRequest { id, signal }),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for SignalRequest {
    const OP: &'static str = "signal";
    type Answer = OkResponse;
}
///Pipe processes only: replaces the metadata kept with the process. Answered with `ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetMetadataRequest {
    ///The pipe process whose metadata is replaced.
    pub id: u64,
    ///The new metadata; the previous object is dropped, not merged.
    pub metadata: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
}
impl ::std::convert::From<SetMetadataRequest> for Request {
    fn from(value: SetMetadataRequest) -> Self {
        let SetMetadataRequest { id, metadata } = value;
        Request::SetMetadata {
            id,
            metadata,
        }
    }
}
impl ::std::convert::TryFrom<Request> for SetMetadataRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::SetMetadata { id, metadata } => {
                Ok(SetMetadataRequest { id, metadata })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for SetMetadataRequest {
    const OP: &'static str = "set_metadata";
    type Answer = OkResponse;
}
///PTY only: sends bytes to the terminal's input. Answered with `ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRequest {
    ///The writing attachment, which must be the terminal's controller; null is accepted only while the terminal has no controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
    pub attachment_id: ::std::option::Option<::std::string::String>,
    ///The bytes to send, standard base64 with padding.
    pub data_base64: ::std::string::String,
    ///The PTY to write to.
    pub id: u64,
}
impl ::std::convert::From<WriteRequest> for Request {
    fn from(value: WriteRequest) -> Self {
        let WriteRequest { attachment_id, data_base64, id } = value;
        Request::Write {
            attachment_id,
            data_base64,
            id,
        }
    }
}
impl ::std::convert::TryFrom<Request> for WriteRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Write { attachment_id, data_base64, id } => {
                Ok(WriteRequest {
                    attachment_id,
                    data_base64,
                    id,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for WriteRequest {
    const OP: &'static str = "write";
    type Answer = OkResponse;
}
///PTY only: resizes the terminal and its screen in one ordered step and always publishes `resized` with a checkpoint, even when the size does not change. Answered with `ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResizeRequest {
    ///The resizing attachment, which must be the terminal's controller; null is accepted only while the terminal has no controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
    pub attachment_id: ::std::option::Option<::std::string::String>,
    ///The new width in columns.
    pub cols: ::std::num::NonZeroU16,
    ///The PTY to resize.
    pub id: u64,
    ///The new height in rows.
    pub rows: ::std::num::NonZeroU16,
}
impl ::std::convert::From<ResizeRequest> for Request {
    fn from(value: ResizeRequest) -> Self {
        let ResizeRequest { attachment_id, cols, id, rows } = value;
        Request::Resize {
            attachment_id,
            cols,
            id,
            rows,
        }
    }
}
impl ::std::convert::TryFrom<Request> for ResizeRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Resize { attachment_id, cols, id, rows } => {
                Ok(ResizeRequest {
                    attachment_id,
                    cols,
                    id,
                    rows,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for ResizeRequest {
    const OP: &'static str = "resize";
    type Answer = OkResponse;
}
///PTY only: in one ordered step, makes a subscribed attachment the controller if it is not already (then demoting the previous one and publishing `controller_changed`) and resizes the terminal to its size when that differs. Answered with `ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlRequest {
    ///The attachment to promote; it must have an open subscription to this terminal, or be its controller already (as a controller is after an in-place upgrade until it subscribes again). At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
    pub attachment_id: ::std::string::String,
    ///The attachment's width in columns; the terminal is resized only when this or `rows` differs from its size.
    pub cols: ::std::num::NonZeroU16,
    ///The PTY to take control of.
    pub id: u64,
    ///The attachment's height in rows.
    pub rows: ::std::num::NonZeroU16,
}
impl ::std::convert::From<ControlRequest> for Request {
    fn from(value: ControlRequest) -> Self {
        let ControlRequest { attachment_id, cols, id, rows } = value;
        Request::Control {
            attachment_id,
            cols,
            id,
            rows,
        }
    }
}
impl ::std::convert::TryFrom<Request> for ControlRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Control { attachment_id, cols, id, rows } => {
                Ok(ControlRequest {
                    attachment_id,
                    cols,
                    id,
                    rows,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for ControlRequest {
    const OP: &'static str = "control";
    type Answer = OkResponse;
}
///PTY only: does what `control` does, then sends the bytes, all in one ordered step, so a size report caused by the resize reaches the child before the input. Answered with `ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputRequest {
    ///The attachment that is typing; it must have an open subscription to this terminal, or be its controller already (as a controller is after an in-place upgrade until it subscribes again), and becomes the controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
    pub attachment_id: ::std::string::String,
    ///The attachment's width in columns; the terminal is resized only when this or `rows` differs from its size.
    pub cols: ::std::num::NonZeroU16,
    ///The bytes to send after any promotion and resize, standard base64 with padding; may be empty.
    pub data_base64: ::std::string::String,
    ///The PTY to type into.
    pub id: u64,
    ///The attachment's height in rows.
    pub rows: ::std::num::NonZeroU16,
}
impl ::std::convert::From<InputRequest> for Request {
    fn from(value: InputRequest) -> Self {
        let InputRequest { attachment_id, cols, data_base64, id, rows } = value;
        Request::Input {
            attachment_id,
            cols,
            data_base64,
            id,
            rows,
        }
    }
}
impl ::std::convert::TryFrom<Request> for InputRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Input { attachment_id, cols, data_base64, id, rows } => {
                Ok(InputRequest {
                    attachment_id,
                    cols,
                    data_base64,
                    id,
                    rows,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for InputRequest {
    const OP: &'static str = "input";
    type Answer = OkResponse;
}
///PTY only: captures the visible screen as text, a VT checkpoint and the cursor in one step. Answered with `snapshot`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotRequest {
    ///The features whose members the answer's `process` carries (SPEC V7; `input`: what the terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`).
    pub features: ::std::vec::Vec<OptIn>,
    ///The PTY to capture.
    pub id: u64,
}
impl ::std::convert::From<SnapshotRequest> for Request {
    fn from(value: SnapshotRequest) -> Self {
        let SnapshotRequest { features, id } = value;
        Request::Snapshot { features, id }
    }
}
impl ::std::convert::TryFrom<Request> for SnapshotRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Snapshot { features, id } => Ok(SnapshotRequest { features, id }),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for SnapshotRequest {
    const OP: &'static str = "snapshot";
    type Answer = SnapshotResponse;
}
///Reads the last physical rows of a PTY's active screen, history included, as plain text. Answered with `rows`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadRowsRequest {
    ///The features whose members the answer's `process` carries (SPEC V7; `input`: what the terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`).
    pub features: ::std::vec::Vec<OptIn>,
    ///The PTY process to read.
    pub id: u64,
    ///How many rows to read (1 to 65535); omitted or null reads the terminal's current height.
    pub rows: ::std::option::Option<::std::num::NonZeroU16>,
}
impl ::std::convert::From<ReadRowsRequest> for Request {
    fn from(value: ReadRowsRequest) -> Self {
        let ReadRowsRequest { features, id, rows } = value;
        Request::ReadRows {
            features,
            id,
            rows,
        }
    }
}
impl ::std::convert::TryFrom<Request> for ReadRowsRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::ReadRows { features, id, rows } => {
                Ok(ReadRowsRequest {
                    features,
                    id,
                    rows,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for ReadRowsRequest {
    const OP: &'static str = "read_rows";
    type Answer = RowsResponse;
}
///PTY only: sets or clears the user title, which wins over titles set by programs. `title_changed` is published only if the effective title changes. Answered with `ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenameRequest {
    ///The PTY to rename.
    pub id: u64,
    ///The new user title; null or an empty string clears it, so the latest program title or the creation title shows again. At most 256 characters (`MAX_TITLE_CHARS`).
    pub title: ::std::option::Option<::std::string::String>,
}
impl ::std::convert::From<RenameRequest> for Request {
    fn from(value: RenameRequest) -> Self {
        let RenameRequest { id, title } = value;
        Request::Rename { id, title }
    }
}
impl ::std::convert::TryFrom<Request> for RenameRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Rename { id, title } => Ok(RenameRequest { id, title }),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for RenameRequest {
    const OP: &'static str = "rename";
    type Answer = OkResponse;
}
///Reads the kept raw output from an offset onwards. Answered with `replay`; a pipe process keeps no output, so its answer has the right offsets and no bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayRequest {
    ///The process whose output is read.
    pub id: u64,
    ///The first offset wanted; an offset past the current output tail is an error.
    pub offset: u64,
}
impl ::std::convert::From<ReplayRequest> for Request {
    fn from(value: ReplayRequest) -> Self {
        let ReplayRequest { id, offset } = value;
        Request::Replay { id, offset }
    }
}
impl ::std::convert::TryFrom<Request> for ReplayRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Replay { id, offset } => Ok(ReplayRequest { id, offset }),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for ReplayRequest {
    const OP: &'static str = "replay";
    type Answer = ReplayResponse;
}
///Attaches to a process and keeps the connection open: answered with `attached` (carrying the replay from `offset`), then live output frames and events (`resized`, `controller_changed`, `title_changed`, `foreground_process_changed`, `exited`) until the process exits or the connection closes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscribeRequest {
    ///A name for this attachment, chosen by the client; reusing a subscribed name replaces that subscription. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`).
    pub attachment_id: ::std::string::String,
    ///The features whose events this subscription also carries, each in order with the output around it (SPEC I5; `input`: `input_changed`), and whose members `attached`'s `process` carries. Left out or empty: none, exactly the events of protocol 8 without features. At most 8 entries (`MAX_OPT_IN_ITEMS`); a pipe process has none of these events.
    pub events: ::std::vec::Vec<OptIn>,
    ///The process to attach to.
    pub id: u64,
    ///Where the replay starts; an offset past the current output tail is an error.
    pub offset: u64,
    ///The role to attach with.
    pub role: Role,
    ///For the controller role: whether to demote a different existing controller (which stays subscribed as an observer); when false, such a conflict fails the request.
    pub takeover: bool,
}
impl ::std::convert::From<SubscribeRequest> for Request {
    fn from(value: SubscribeRequest) -> Self {
        let SubscribeRequest { attachment_id, events, id, offset, role, takeover } = value;
        Request::Subscribe {
            attachment_id,
            events,
            id,
            offset,
            role,
            takeover,
        }
    }
}
impl ::std::convert::TryFrom<Request> for SubscribeRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Subscribe { attachment_id, events, id, offset, role, takeover } => {
                Ok(SubscribeRequest {
                    attachment_id,
                    events,
                    id,
                    offset,
                    role,
                    takeover,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for SubscribeRequest {
    const OP: &'static str = "subscribe";
    type Answer = AttachedResponse;
}
///Stops a process and forgets it: a PTY's runtime is shut down; a pipe process's group and child get SIGKILL and the child is reaped. Pending `wait`s get `error` `terminated`. Answered with `ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminateRequest {
    ///The process to stop and remove.
    pub id: u64,
}
impl ::std::convert::From<TerminateRequest> for Request {
    fn from(value: TerminateRequest) -> Self {
        let TerminateRequest { id } = value;
        Request::Terminate { id }
    }
}
impl ::std::convert::TryFrom<Request> for TerminateRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Terminate { id } => Ok(TerminateRequest { id }),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for TerminateRequest {
    const OP: &'static str = "terminate";
    type Answer = OkResponse;
}
///Stops the daemon and every process it runs. Accepted from the current owner channel and from any authenticated ordinary connection. Answered with `ok`, then the daemon stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShutdownRequest;
impl ::std::convert::From<ShutdownRequest> for Request {
    fn from(_: ShutdownRequest) -> Self {
        Request::Shutdown
    }
}
impl ::std::convert::TryFrom<Request> for ShutdownRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Shutdown => Ok(ShutdownRequest),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for ShutdownRequest {
    const OP: &'static str = "shutdown";
    type Answer = OkResponse;
}
///Lists the last commands of a terminal started with `shell_integration`, newest last. Answered with `commands`, or with `error` for a pipe process or a terminal without shell integration. Only a daemon whose `features` include `commands` knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandsRequest {
    ///The terminal.
    pub id: u64,
    ///At most this many of the newest commands (1 to 256, `MAX_COMMANDS`); omitted or null: every command the terminal keeps.
    pub limit: ::std::option::Option<::std::num::NonZeroU16>,
}
impl ::std::convert::From<CommandsRequest> for Request {
    fn from(value: CommandsRequest) -> Self {
        let CommandsRequest { id, limit } = value;
        Request::Commands { id, limit }
    }
}
impl ::std::convert::TryFrom<Request> for CommandsRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Commands { id, limit } => Ok(CommandsRequest { id, limit }),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for CommandsRequest {
    const OP: &'static str = "commands";
    type Answer = CommandsResponse;
}
///Types a command at the prompt of a terminal started with `shell_integration` and holds the connection until the command ends (answered with `command_finished`) or `timeout_ms` passes (answered with `command_running`; the command goes on, and `wait_command` waits again). Refused at once with `error` unless the shell is at its prompt with nothing typed (SPEC SH10). Only a daemon whose `features` include `commands` knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRequest {
    ///The command line, typed as is and followed by Enter. Several lines are sent as one bracketed paste, which the shell must have enabled. Not empty, no control characters but newlines and tabs, at most 65536 bytes of UTF-8 (`MAX_RUN_COMMAND_BYTES`).
    pub command: ::std::string::String,
    ///The terminal.
    pub id: u64,
    ///How long to wait for the command's end, in milliseconds: 0 to 86400000 (24 hours, `MAX_COMMAND_WAIT_MS`); omitted or null: 30000 (`DEFAULT_COMMAND_WAIT_MS`).
    pub timeout_ms: ::std::option::Option<u32>,
}
impl ::std::convert::From<RunRequest> for Request {
    fn from(value: RunRequest) -> Self {
        let RunRequest { command, id, timeout_ms } = value;
        Request::Run {
            command,
            id,
            timeout_ms,
        }
    }
}
impl ::std::convert::TryFrom<Request> for RunRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Run { command, id, timeout_ms } => {
                Ok(RunRequest {
                    command,
                    id,
                    timeout_ms,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for RunRequest {
    const OP: &'static str = "run";
    type Answer = CommandFinishedResponse;
}
///Holds the connection until a command of a terminal started with `shell_integration` ends (answered with `command_finished`, at once for one that already ended) or `timeout_ms` passes (answered with `command_running`). Several may wait for one command (SPEC SH11). Only a daemon whose `features` include `commands` knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitCommandRequest {
    ///The command, as `run`'s `command_running` or `commands` named it.
    pub command_id: u64,
    ///The terminal.
    pub id: u64,
    ///As `run`'s: 0 to 86400000 milliseconds, 30000 when omitted or null.
    pub timeout_ms: ::std::option::Option<u32>,
}
impl ::std::convert::From<WaitCommandRequest> for Request {
    fn from(value: WaitCommandRequest) -> Self {
        let WaitCommandRequest { command_id, id, timeout_ms } = value;
        Request::WaitCommand {
            command_id,
            id,
            timeout_ms,
        }
    }
}
impl ::std::convert::TryFrom<Request> for WaitCommandRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::WaitCommand { command_id, id, timeout_ms } => {
                Ok(WaitCommandRequest {
                    command_id,
                    id,
                    timeout_ms,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for WaitCommandRequest {
    const OP: &'static str = "wait_command";
    type Answer = CommandFinishedResponse;
}
///Owner channel only: re-executes the daemon in place from a new binary, keeping its pid, socket, token, processes, terminals, offsets and ownership (SPEC §7). Answered with `ok` once the new image serves requests, or with `error` (the path refused, the new program's preflight failed, the new image could not take the state) while the old image still serves with nothing lost. Other connections are closed once their requests in flight are answered; a client resubscribes from the last offset it saw. Only a daemon whose `features` include `upgrade` carries it out; any other answers it with `error`. From an ordinary connection it is refused like `prepare_handoff`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpgradeRequest {
    ///The absolute path of the new binary: an executable regular file that no other user can write, owned by the daemon's user or by root. At most 4096 characters (`MAX_PATH_CHARS`). Omitted or null: the daemon's own executable as it is on disk now (a package upgrade replaced it).
    pub program: ::std::option::Option<::std::string::String>,
}
impl ::std::convert::From<UpgradeRequest> for Request {
    fn from(value: UpgradeRequest) -> Self {
        let UpgradeRequest { program } = value;
        Request::Upgrade { program }
    }
}
impl ::std::convert::TryFrom<Request> for UpgradeRequest {
    type Error = Request;
    fn try_from(value: Request) -> ::std::result::Result<Self, Request> {
        match value {
            Request::Upgrade { program } => Ok(UpgradeRequest { program }),
            other => Err(other),
        }
    }
}
impl crate::variant::RequestVariant for UpgradeRequest {
    const OP: &'static str = "upgrade";
    type Answer = OkResponse;
}
///The answer to `ping`: who the daemon is and what it speaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PongResponse {
    ///Names of the additive capabilities the daemon has beyond its protocol version; empty for plain protocol 8.
    pub features: ::std::vec::Vec<::std::string::String>,
    ///The daemon's instance id, the same as in its registration.
    pub instance_id: ::std::string::String,
    ///The daemon's own process id.
    pub pid: u32,
    ///The protocol version the daemon speaks: 8 for this schema. Clients refuse any other value.
    pub protocol: u32,
}
impl ::std::convert::From<PongResponse> for Response {
    fn from(value: PongResponse) -> Self {
        let PongResponse { features, instance_id, pid, protocol } = value;
        Response::Pong {
            features,
            instance_id,
            pid,
            protocol,
        }
    }
}
impl ::std::convert::TryFrom<Response> for PongResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Pong { features, instance_id, pid, protocol } => {
                Ok(PongResponse {
                    features,
                    instance_id,
                    pid,
                    protocol,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for PongResponse {
    const TYPE: &'static str = "pong";
    const EVENT: bool = false;
}
///The answer to a successful `own`: this connection is now the owner channel, which accepts only `prepare_handoff`, `upgrade` (on a daemon whose `features` include it) and `shutdown`. Closing it stops the daemon unless a handoff was prepared on it, or a later `own` with a ticket has superseded it (then closing it changes nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedResponse;
impl ::std::convert::From<OwnedResponse> for Response {
    fn from(_: OwnedResponse) -> Self {
        Response::Owned
    }
}
impl ::std::convert::TryFrom<Response> for OwnedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Owned => Ok(OwnedResponse),
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for OwnedResponse {
    const TYPE: &'static str = "owned";
    const EVENT: bool = false;
}
///The answer to `prepare_handoff`: the ticket a replacement server gives to `own`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandoffResponse {
    ///When the ticket stops being accepted, as milliseconds since the Unix epoch: 120 seconds after the handoff was first prepared.
    pub expires_at: u64,
    ///The secret to pass as `own.ticket`: 32 lowercase hex characters, consumed by the first successful claim.
    pub ticket: ::std::string::String,
}
impl ::std::convert::From<HandoffResponse> for Response {
    fn from(value: HandoffResponse) -> Self {
        let HandoffResponse { expires_at, ticket } = value;
        Response::Handoff {
            expires_at,
            ticket,
        }
    }
}
impl ::std::convert::TryFrom<Response> for HandoffResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Handoff { expires_at, ticket } => {
                Ok(HandoffResponse {
                    expires_at,
                    ticket,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for HandoffResponse {
    const TYPE: &'static str = "handoff";
    const EVENT: bool = false;
}
///The answer to `create_pty` and `create_pipe`: the new process.
#[derive(Clone, Debug, PartialEq)]
pub struct CreatedResponse {
    ///The process just started.
    pub process: ProcessInfo,
}
impl ::std::convert::From<CreatedResponse> for Response {
    fn from(value: CreatedResponse) -> Self {
        let CreatedResponse { process } = value;
        Response::Created { process }
    }
}
impl ::std::convert::TryFrom<Response> for CreatedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Created { process } => Ok(CreatedResponse { process }),
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for CreatedResponse {
    const TYPE: &'static str = "created";
    const EVENT: bool = false;
}
///The answer to `list`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessesResponse {
    ///Paged listing only (feature `pages`, SPEC D17): processes of the mode with greater ids followed this page when it was answered; the `after` of the next page (the id of this page's last process). Left out when this page is the last, and in every answer to a request without `after` and `limit`.
    pub next: ::std::option::Option<u64>,
    ///Every process of the requested mode, in creation order (one page of them when the request named `after` or `limit`).
    pub processes: ::std::vec::Vec<ProcessInfo>,
}
impl ::std::convert::From<ProcessesResponse> for Response {
    fn from(value: ProcessesResponse) -> Self {
        let ProcessesResponse { next, processes } = value;
        Response::Processes {
            next,
            processes,
        }
    }
}
impl ::std::convert::TryFrom<Response> for ProcessesResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Processes { next, processes } => {
                Ok(ProcessesResponse {
                    next,
                    processes,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for ProcessesResponse {
    const TYPE: &'static str = "processes";
    const EVENT: bool = false;
}
///The answer to `get`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessResponse {
    ///The process asked for.
    pub process: ProcessInfo,
}
impl ::std::convert::From<ProcessResponse> for Response {
    fn from(value: ProcessResponse) -> Self {
        let ProcessResponse { process } = value;
        Response::Process { process }
    }
}
impl ::std::convert::TryFrom<Response> for ProcessResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Process { process } => Ok(ProcessResponse { process }),
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for ProcessResponse {
    const TYPE: &'static str = "process";
    const EVENT: bool = false;
}
///The request succeeded and has nothing to return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OkResponse;
impl ::std::convert::From<OkResponse> for Response {
    fn from(_: OkResponse) -> Self {
        Response::Ok
    }
}
impl ::std::convert::TryFrom<Response> for OkResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Ok => Ok(OkResponse),
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for OkResponse {
    const TYPE: &'static str = "ok";
    const EVENT: bool = false;
}
///The request failed. Unknown ops and malformed requests are answered this way too (once the token has been checked), so clients can probe for an op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorResponse {
    ///What went wrong, for people, such as `unsupported request: <op>`, `invalid <op> request: ...` or `terminated`.
    pub message: ::std::string::String,
}
impl ::std::convert::From<ErrorResponse> for Response {
    fn from(value: ErrorResponse) -> Self {
        let ErrorResponse { message } = value;
        Response::Error { message }
    }
}
impl ::std::convert::TryFrom<Response> for ErrorResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Error { message } => Ok(ErrorResponse { message }),
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for ErrorResponse {
    const TYPE: &'static str = "error";
    const EVENT: bool = false;
}
///The answer to `snapshot`: the screen, its checkpoint and the cursor, captured in one step with the process info.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotResponse {
    ///A VT checkpoint, standard base64 with padding: written into a fresh terminal of the same size, it rebuilds the screen, its modes and the cursor position.
    pub checkpoint_base64: ::std::string::String,
    ///The cursor column, zero-based.
    pub cursor_x: u16,
    ///The cursor row within the visible screen, zero-based.
    pub cursor_y: u16,
    ///The process info, captured in the same step as the screen.
    pub process: ProcessInfo,
    ///The plain text of the visible screen, one line per row, soft wraps not joined and trailing whitespace trimmed.
    pub text: ::std::string::String,
}
impl ::std::convert::From<SnapshotResponse> for Response {
    fn from(value: SnapshotResponse) -> Self {
        let SnapshotResponse { checkpoint_base64, cursor_x, cursor_y, process, text } = value;
        Response::Snapshot {
            checkpoint_base64,
            cursor_x,
            cursor_y,
            process,
            text,
        }
    }
}
impl ::std::convert::TryFrom<Response> for SnapshotResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Snapshot {
                checkpoint_base64,
                cursor_x,
                cursor_y,
                process,
                text,
            } => {
                Ok(SnapshotResponse {
                    checkpoint_base64,
                    cursor_x,
                    cursor_y,
                    process,
                    text,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for SnapshotResponse {
    const TYPE: &'static str = "snapshot";
    const EVENT: bool = false;
}
///The answer to `read_rows`: the rows and the cursor, captured in one step with the process info.
#[derive(Clone, Debug, PartialEq)]
pub struct RowsResponse {
    ///The cursor column, zero-based.
    pub cursor_x: u16,
    ///The cursor row within the active area (not the returned rows), zero-based.
    pub cursor_y: u16,
    ///One string per physical row, oldest first: soft wraps not joined, trailing whitespace trimmed, blank rows as empty strings.
    pub lines: ::std::vec::Vec<::std::string::String>,
    ///The process info, captured in the same step as the rows.
    pub process: ProcessInfo,
}
impl ::std::convert::From<RowsResponse> for Response {
    fn from(value: RowsResponse) -> Self {
        let RowsResponse { cursor_x, cursor_y, lines, process } = value;
        Response::Rows {
            cursor_x,
            cursor_y,
            lines,
            process,
        }
    }
}
impl ::std::convert::TryFrom<Response> for RowsResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Rows { cursor_x, cursor_y, lines, process } => {
                Ok(RowsResponse {
                    cursor_x,
                    cursor_y,
                    lines,
                    process,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for RowsResponse {
    const TYPE: &'static str = "rows";
    const EVENT: bool = false;
}
///The answer to `replay`: the kept output from the requested offset (or from the oldest kept byte) to the tail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayResponse {
    ///Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back.
    pub available_offset: u64,
    ///The bytes from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output.
    pub data_base64: ::std::string::String,
    ///The offset just past the returned bytes: the output tail when the replay was read.
    pub end_offset: u64,
    ///The offset the request asked for.
    pub requested_offset: u64,
    ///True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost.
    pub truncated: bool,
}
impl ::std::convert::From<ReplayResponse> for Response {
    fn from(value: ReplayResponse) -> Self {
        let ReplayResponse {
            available_offset,
            data_base64,
            end_offset,
            requested_offset,
            truncated,
        } = value;
        Response::Replay {
            available_offset,
            data_base64,
            end_offset,
            requested_offset,
            truncated,
        }
    }
}
impl ::std::convert::TryFrom<Response> for ReplayResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Replay {
                available_offset,
                data_base64,
                end_offset,
                requested_offset,
                truncated,
            } => {
                Ok(ReplayResponse {
                    available_offset,
                    data_base64,
                    end_offset,
                    requested_offset,
                    truncated,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for ReplayResponse {
    const TYPE: &'static str = "replay";
    const EVENT: bool = false;
}
///The first frame of a subscription: the process, the role obtained and the replay. Live output frames and events follow, starting at `end_offset`.
#[derive(Clone, Debug, PartialEq)]
pub struct AttachedResponse {
    ///Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back.
    pub available_offset: u64,
    ///The offset just past the returned bytes: the output tail when the replay was read.
    pub end_offset: u64,
    ///The controller generation after attaching: a counter that grows each time the terminal's controller changes.
    pub generation: u64,
    ///The process info, captured in the same step as the replay.
    pub process: ProcessInfo,
    ///The kept output from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output.
    pub replay_base64: ::std::string::String,
    ///The offset the request asked for.
    pub requested_offset: u64,
    ///The role this attachment has now.
    pub role: Role,
    ///True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost.
    pub truncated: bool,
}
impl ::std::convert::From<AttachedResponse> for Response {
    fn from(value: AttachedResponse) -> Self {
        let AttachedResponse {
            available_offset,
            end_offset,
            generation,
            process,
            replay_base64,
            requested_offset,
            role,
            truncated,
        } = value;
        Response::Attached {
            available_offset,
            end_offset,
            generation,
            process,
            replay_base64,
            requested_offset,
            role,
            truncated,
        }
    }
}
impl ::std::convert::TryFrom<Response> for AttachedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Attached {
                available_offset,
                end_offset,
                generation,
                process,
                replay_base64,
                requested_offset,
                role,
                truncated,
            } => {
                Ok(AttachedResponse {
                    available_offset,
                    end_offset,
                    generation,
                    process,
                    replay_base64,
                    requested_offset,
                    role,
                    truncated,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for AttachedResponse {
    const TYPE: &'static str = "attached";
    const EVENT: bool = false;
}
///Subscription event: the terminal was resized. Later output is laid out for the new size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResizedResponse {
    ///A VT checkpoint of the screen just after the resize, standard base64 with padding; a client resets its terminal to the new size and writes it before any later output.
    pub checkpoint_base64: ::std::string::String,
    ///The new width in columns.
    pub cols: ::std::num::NonZeroU16,
    ///The controller generation when the resize happened (not a count of resizes).
    pub generation: u64,
    ///The new height in rows.
    pub rows: ::std::num::NonZeroU16,
}
impl ::std::convert::From<ResizedResponse> for Response {
    fn from(value: ResizedResponse) -> Self {
        let ResizedResponse { checkpoint_base64, cols, generation, rows } = value;
        Response::Resized {
            checkpoint_base64,
            cols,
            generation,
            rows,
        }
    }
}
impl ::std::convert::TryFrom<Response> for ResizedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Resized { checkpoint_base64, cols, generation, rows } => {
                Ok(ResizedResponse {
                    checkpoint_base64,
                    cols,
                    generation,
                    rows,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for ResizedResponse {
    const TYPE: &'static str = "resized";
    const EVENT: bool = true;
}
///Subscription event: the terminal's controller changed (through takeover, promotion by `control` or `input`, or a detach). Sent to every subscriber, the new controller included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerChangedResponse {
    ///The attachment that controls the terminal now, or null when none does.
    pub attachment_id: ::std::option::Option<::std::string::String>,
    ///The controller generation after the change.
    pub generation: u64,
}
impl ::std::convert::From<ControllerChangedResponse> for Response {
    fn from(value: ControllerChangedResponse) -> Self {
        let ControllerChangedResponse { attachment_id, generation } = value;
        Response::ControllerChanged {
            attachment_id,
            generation,
        }
    }
}
impl ::std::convert::TryFrom<Response> for ControllerChangedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::ControllerChanged { attachment_id, generation } => {
                Ok(ControllerChangedResponse {
                    attachment_id,
                    generation,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for ControllerChangedResponse {
    const TYPE: &'static str = "controller_changed";
    const EVENT: bool = true;
}
///Subscription event: the effective title changed, through `rename` or an OSC 0/2 sequence not hidden by a user title.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TitleChangedResponse {
    ///The new effective title, at most 256 characters (`MAX_TITLE_CHARS`).
    pub title: ::std::string::String,
}
impl ::std::convert::From<TitleChangedResponse> for Response {
    fn from(value: TitleChangedResponse) -> Self {
        let TitleChangedResponse { title } = value;
        Response::TitleChanged { title }
    }
}
impl ::std::convert::TryFrom<Response> for TitleChangedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::TitleChanged { title } => Ok(TitleChangedResponse { title }),
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for TitleChangedResponse {
    const TYPE: &'static str = "title_changed";
    const EVENT: bool = true;
}
///Subscription event: the process in the terminal's foreground changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForegroundProcessChangedResponse {
    ///The name of the deepest terminal-attached process in the foreground process group, or null when it is not known.
    pub process: ::std::option::Option<::std::string::String>,
}
impl ::std::convert::From<ForegroundProcessChangedResponse> for Response {
    fn from(value: ForegroundProcessChangedResponse) -> Self {
        let ForegroundProcessChangedResponse { process } = value;
        Response::ForegroundProcessChanged {
            process,
        }
    }
}
impl ::std::convert::TryFrom<Response> for ForegroundProcessChangedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::ForegroundProcessChanged { process } => {
                Ok(ForegroundProcessChangedResponse {
                    process,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for ForegroundProcessChangedResponse {
    const TYPE: &'static str = "foreground_process_changed";
    const EVENT: bool = true;
}
///Subscription event, sent only to a subscriber that asked for it (`subscribe` with `events: ["input"]`): what the terminal waits for changed (SPEC I5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputChangedResponse {
    ///What the terminal waits for now (as `pty.input`), or null when no process of its foreground group is waiting for input from it.
    pub input: ::std::option::Option<InputWait>,
}
impl ::std::convert::From<InputChangedResponse> for Response {
    fn from(value: InputChangedResponse) -> Self {
        let InputChangedResponse { input } = value;
        Response::InputChanged { input }
    }
}
impl ::std::convert::TryFrom<Response> for InputChangedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::InputChanged { input } => Ok(InputChangedResponse { input }),
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for InputChangedResponse {
    const TYPE: &'static str = "input_changed";
    const EVENT: bool = true;
}
///The process exited and the end of its output was read. The last event of a subscription, and the one answer to `wait`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitedResponse {
    ///The exit status, or null when a signal killed the process.
    pub exit_code: ::std::option::Option<u32>,
    ///When the exit became final, as milliseconds since the Unix epoch; the same value as `exited_at` in the process info from then on.
    pub exited_at: u64,
    ///The output tail at exit: the offset just past the last byte the process wrote.
    pub final_offset: u64,
    ///Pipe processes only: why writing the output file stopped; left out when it never did.
    pub output_error: ::std::option::Option<::std::string::String>,
    ///Pipe processes only: how many newline bytes went to the output file; left out for PTYs.
    pub output_lines: ::std::option::Option<u64>,
    ///The name of the signal that killed the process, such as `SIGTERM`; left out when no signal did.
    pub signal: ::std::option::Option<::std::string::String>,
}
impl ::std::convert::From<ExitedResponse> for Response {
    fn from(value: ExitedResponse) -> Self {
        let ExitedResponse {
            exit_code,
            exited_at,
            final_offset,
            output_error,
            output_lines,
            signal,
        } = value;
        Response::Exited {
            exit_code,
            exited_at,
            final_offset,
            output_error,
            output_lines,
            signal,
        }
    }
}
impl ::std::convert::TryFrom<Response> for ExitedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Exited {
                exit_code,
                exited_at,
                final_offset,
                output_error,
                output_lines,
                signal,
            } => {
                Ok(ExitedResponse {
                    exit_code,
                    exited_at,
                    final_offset,
                    output_error,
                    output_lines,
                    signal,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for ExitedResponse {
    const TYPE: &'static str = "exited";
    const EVENT: bool = true;
}
///The answer to `commands`: the terminal's last commands (at most 256, `MAX_COMMANDS`), oldest first, captured in one step with the process info.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandsResponse {
    ///The commands, oldest first; the running one, if any, last.
    pub commands: ::std::vec::Vec<ShellCommand>,
    ///The process info, captured in the same step as the commands.
    pub process: ProcessInfo,
}
impl ::std::convert::From<CommandsResponse> for Response {
    fn from(value: CommandsResponse) -> Self {
        let CommandsResponse { commands, process } = value;
        Response::Commands {
            commands,
            process,
        }
    }
}
impl ::std::convert::TryFrom<Response> for CommandsResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::Commands { commands, process } => {
                Ok(CommandsResponse {
                    commands,
                    process,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for CommandsResponse {
    const TYPE: &'static str = "commands";
    const EVENT: bool = false;
}
///Subscription event, sent only to a subscriber that asked for it (`subscribe` with `events: ["commands"]`): a command of a terminal with shell integration started, after the output before its first byte (SPEC SH12).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandStartedResponse {
    ///The command line as in `commands` (at most 4096 bytes, `MAX_COMMAND_LINE_BYTES`).
    pub command: ::std::string::String,
    ///The command (as in `commands`).
    pub command_id: u64,
    ///The shell's working directory, as in `commands`.
    pub cwd: ::std::option::Option<::std::string::String>,
    ///The output offset of its first byte of output.
    pub output_start: u64,
}
impl ::std::convert::From<CommandStartedResponse> for Response {
    fn from(value: CommandStartedResponse) -> Self {
        let CommandStartedResponse { command, command_id, cwd, output_start } = value;
        Response::CommandStarted {
            command,
            command_id,
            cwd,
            output_start,
        }
    }
}
impl ::std::convert::TryFrom<Response> for CommandStartedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::CommandStarted { command, command_id, cwd, output_start } => {
                Ok(CommandStartedResponse {
                    command,
                    command_id,
                    cwd,
                    output_start,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for CommandStartedResponse {
    const TYPE: &'static str = "command_started";
    const EVENT: bool = true;
}
///A command of a terminal with shell integration ended. The answer to `run` and `wait_command`, with the command's text; also a subscription event (without `text` and `truncated`), sent only to a subscriber that asked for it (`subscribe` with `events: ["commands"]`), after the command's last byte of output and before the next (SPEC SH11, SH12).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandFinishedResponse {
    ///The command.
    pub command_id: u64,
    ///Its exit status as the shell reported it, or null when it ended without one (the next prompt came without an end mark).
    pub exit_code: ::std::option::Option<u32>,
    ///The output offset just past its last byte of output: `replay` from `output_start` has its exact bytes while they are kept.
    pub output_end: u64,
    ///The output offset of its first byte of output (as in `commands`).
    pub output_start: u64,
    ///Answers only: the output as plain text rows joined by newlines (as `read_rows` formats rows, at the terminal's size when the command started; trailing blank rows left out), at most about 1 MiB (`MAX_ROWS_BYTES`): the first and the last rows, with a marker row where rows were left out.
    pub text: ::std::option::Option<::std::string::String>,
    ///Answers only: whether rows were left out of `text` (a marker row says where and how many).
    pub truncated: ::std::option::Option<bool>,
}
impl ::std::convert::From<CommandFinishedResponse> for Response {
    fn from(value: CommandFinishedResponse) -> Self {
        let CommandFinishedResponse {
            command_id,
            exit_code,
            output_end,
            output_start,
            text,
            truncated,
        } = value;
        Response::CommandFinished {
            command_id,
            exit_code,
            output_end,
            output_start,
            text,
            truncated,
        }
    }
}
impl ::std::convert::TryFrom<Response> for CommandFinishedResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::CommandFinished {
                command_id,
                exit_code,
                output_end,
                output_start,
                text,
                truncated,
            } => {
                Ok(CommandFinishedResponse {
                    command_id,
                    exit_code,
                    output_end,
                    output_start,
                    text,
                    truncated,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for CommandFinishedResponse {
    const TYPE: &'static str = "command_finished";
    const EVENT: bool = true;
}
///The answer to `run` or `wait_command` whose `timeout_ms` passed before the command ended: it goes on running, and `wait_command` with this `command_id` waits again (SPEC SH11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandRunningResponse {
    ///The command: for a `run` whose command the shell has not started yet, the number it will get.
    pub command_id: u64,
    ///The output offset of its first byte of output, or null when the shell has not started it yet.
    pub output_start: ::std::option::Option<u64>,
}
impl ::std::convert::From<CommandRunningResponse> for Response {
    fn from(value: CommandRunningResponse) -> Self {
        let CommandRunningResponse { command_id, output_start } = value;
        Response::CommandRunning {
            command_id,
            output_start,
        }
    }
}
impl ::std::convert::TryFrom<Response> for CommandRunningResponse {
    type Error = Response;
    fn try_from(value: Response) -> ::std::result::Result<Self, Response> {
        match value {
            Response::CommandRunning { command_id, output_start } => {
                Ok(CommandRunningResponse {
                    command_id,
                    output_start,
                })
            }
            other => Err(other),
        }
    }
}
impl crate::variant::ResponseVariant for CommandRunningResponse {
    const TYPE: &'static str = "command_running";
    const EVENT: bool = false;
}
impl Request {
    /// The `op` tag, as on the wire.
    pub fn op(&self) -> &'static str {
        match self {
            Request::Ping => "ping",
            Request::Own { .. } => "own",
            Request::PrepareHandoff => "prepare_handoff",
            Request::CreatePty { .. } => "create_pty",
            Request::CreatePipe { .. } => "create_pipe",
            Request::List { .. } => "list",
            Request::Get { .. } => "get",
            Request::Wait { .. } => "wait",
            Request::Signal { .. } => "signal",
            Request::SetMetadata { .. } => "set_metadata",
            Request::Write { .. } => "write",
            Request::Resize { .. } => "resize",
            Request::Control { .. } => "control",
            Request::Input { .. } => "input",
            Request::Snapshot { .. } => "snapshot",
            Request::ReadRows { .. } => "read_rows",
            Request::Rename { .. } => "rename",
            Request::Replay { .. } => "replay",
            Request::Subscribe { .. } => "subscribe",
            Request::Terminate { .. } => "terminate",
            Request::Shutdown => "shutdown",
            Request::Commands { .. } => "commands",
            Request::Run { .. } => "run",
            Request::WaitCommand { .. } => "wait_command",
            Request::Upgrade { .. } => "upgrade",
        }
    }
    /// The `type` of the response that answers this request (`x-answer` in the schema); an `error` may
    /// answer any request instead.
    pub fn answer_type(&self) -> &'static str {
        match self {
            Request::Ping => "pong",
            Request::Own { .. } => "owned",
            Request::PrepareHandoff => "handoff",
            Request::CreatePty { .. } => "created",
            Request::CreatePipe { .. } => "created",
            Request::List { .. } => "processes",
            Request::Get { .. } => "process",
            Request::Wait { .. } => "exited",
            Request::Signal { .. } => "ok",
            Request::SetMetadata { .. } => "ok",
            Request::Write { .. } => "ok",
            Request::Resize { .. } => "ok",
            Request::Control { .. } => "ok",
            Request::Input { .. } => "ok",
            Request::Snapshot { .. } => "snapshot",
            Request::ReadRows { .. } => "rows",
            Request::Rename { .. } => "ok",
            Request::Replay { .. } => "replay",
            Request::Subscribe { .. } => "attached",
            Request::Terminate { .. } => "ok",
            Request::Shutdown => "ok",
            Request::Commands { .. } => "commands",
            Request::Run { .. } => "command_finished",
            Request::WaitCommand { .. } => "command_finished",
            Request::Upgrade { .. } => "ok",
        }
    }
}
impl Response {
    /// The `type` tag, as on the wire.
    pub fn type_tag(&self) -> &'static str {
        match self {
            Response::Pong { .. } => "pong",
            Response::Owned => "owned",
            Response::Handoff { .. } => "handoff",
            Response::Created { .. } => "created",
            Response::Processes { .. } => "processes",
            Response::Process { .. } => "process",
            Response::Ok => "ok",
            Response::Error { .. } => "error",
            Response::Snapshot { .. } => "snapshot",
            Response::Rows { .. } => "rows",
            Response::Replay { .. } => "replay",
            Response::Attached { .. } => "attached",
            Response::Resized { .. } => "resized",
            Response::ControllerChanged { .. } => "controller_changed",
            Response::TitleChanged { .. } => "title_changed",
            Response::ForegroundProcessChanged { .. } => "foreground_process_changed",
            Response::InputChanged { .. } => "input_changed",
            Response::Exited { .. } => "exited",
            Response::Commands { .. } => "commands",
            Response::CommandStarted { .. } => "command_started",
            Response::CommandFinished { .. } => "command_finished",
            Response::CommandRunning { .. } => "command_running",
        }
    }
    /// Whether a subscription carries this after `attached` (`x-event` in the schema).
    pub fn is_event(&self) -> bool {
        matches!(
            self, Response::Resized { .. } | Response::ControllerChanged { .. } |
            Response::TitleChanged { .. } | Response::ForegroundProcessChanged { .. } |
            Response::InputChanged { .. } | Response::Exited { .. } |
            Response::CommandStarted { .. } | Response::CommandFinished { .. }
        )
    }
}
/// The protocol version (`x-protocol-version` of `schema/protocol.json`).
pub const PROTOCOL_VERSION: u32 = 8;
/// Additive capabilities of this protocol version (`x-features`).
pub const FEATURES: &[&str] = &["commands", "input", "upgrade", "bounds", "pages"];
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
    "commands",
    "run",
    "wait_command",
    "upgrade",
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
    "input_changed",
    "exited",
    "commands",
    "command_started",
    "command_finished",
    "command_running",
];
/// The response and event `type`s a subscription carries after `attached` (`x-event`), in schema order.
pub const EVENT_TYPES: &[&str] = &[
    "resized",
    "controller_changed",
    "title_changed",
    "foreground_process_changed",
    "input_changed",
    "exited",
    "command_started",
    "command_finished",
];
/// The whole `message` of the `error` answering a claim without a ticket on a daemon that was claimed before (SPEC O2): another client owns it, so this one can use it but not own it.
pub const ALREADY_OWNED: &str = "daemon already has a live owner";
/// The whole `message` of the `error` a daemon answers a missing or wrong token with (SPEC E3). A client that gets it re-reads the registration, since the daemon may have been replaced.
pub const AUTHENTICATION_FAILED: &str = "authentication failed";
/// The service lock inside a runtime directory (SPEC L2): held exclusively by the daemon for its whole life, so a second daemon, or a sweep, can tell that the directory is in use.
pub const LOCK_FILE: &str = "service.lock";
/// The registration file inside a runtime directory `DIR/NAME` (SPEC L4, CL1): the daemon writes it, clients read it to find the socket and the token.
pub const REGISTRATION_FILE: &str = "service.json";
/// What the `message` of the `error` answering an unknown op starts with; the op follows (SPEC E5). A client can therefore probe whether a daemon knows a request.
pub const UNSUPPORTED_REQUEST_PREFIX: &str = "unsupported request: ";

//! The parameters of `create_pty` and `create_pipe`, which have too many members for positional arguments, and
//! [`Takeover`], what `subscribe` does about a terminal that already has a controller. Each parameter struct has
//! a constructor that takes what has no sensible default and fills in the rest; the members are public, so a
//! caller changes what it needs with struct update syntax:
//!
//! ```
//! use opencode_pty_client::CreatePty;
//! let params = CreatePty { args: vec!["-l".into()], ..CreatePty::new("bash", "/home/me") };
//! assert_eq!(params.title, "bash");
//! ```

use std::collections::HashMap;
use std::num::NonZeroU16;

use opencode_pty_protocol::Request;
use serde_json::{Map, Value};

/// The terminal width [`CreatePty::new`] picks: the classic 80 columns.
pub const DEFAULT_COLS: NonZeroU16 = NonZeroU16::new(80).expect("80 is not zero");

/// The terminal height [`CreatePty::new`] picks: the classic 24 rows.
pub const DEFAULT_ROWS: NonZeroU16 = NonZeroU16::new(24).expect("24 is not zero");

/// What a controller subscription does when the terminal already has a controller (SPEC D12); the wire's
/// `takeover` flag. An observer subscription ignores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Takeover {
    /// Leave the current controller in place: the subscription is refused with
    /// `terminal already has controller <id>` (`takeover: false`).
    Refuse,
    /// Become the controller: the previous one is demoted to an observer and stays subscribed (`takeover: true`).
    Take,
}

impl Takeover {
    /// The wire's `takeover` flag.
    pub(crate) fn flag(self) -> bool {
        matches!(self, Takeover::Take)
    }
}

/// What `create_pty` starts: a program in a new pseudo-terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatePty {
    /// The program, looked up on the child's `PATH`.
    pub program: String,
    /// The arguments after the program name.
    pub args: Vec<String>,
    /// The absolute directory the child starts in.
    pub cwd: String,
    /// Variables laid over the daemon's own environment for the child.
    pub env: HashMap<String, String>,
    /// An opaque grouping key, reported back as the process's `group_id`.
    pub group_id: String,
    /// The title shown until a program or `rename` sets one.
    pub title: String,
    /// The terminal width in columns.
    pub cols: NonZeroU16,
    /// The terminal height in rows.
    pub rows: NonZeroU16,
}

impl CreatePty {
    /// `program` in `cwd` with no arguments, no extra environment, an empty group, the program as its title and
    /// a terminal of [`DEFAULT_COLS`] × [`DEFAULT_ROWS`].
    pub fn new(program: impl Into<String>, cwd: impl Into<String>) -> CreatePty {
        let program = program.into();
        CreatePty {
            title: program.clone(),
            program,
            args: Vec::new(),
            cwd: cwd.into(),
            env: HashMap::new(),
            group_id: String::new(),
            cols: DEFAULT_COLS,
            rows: DEFAULT_ROWS,
        }
    }

    /// The request that carries these parameters. The variant is built with every member named, so a member the
    /// schema adds, removes or renames stops this from compiling until [`CreatePty`] follows.
    pub fn into_request(self) -> Request {
        let CreatePty { program, args, cwd, env, group_id, title, cols, rows } = self;
        Request::CreatePty { args, cols, cwd, env, group_id, program, rows, title }
    }
}

/// What `create_pipe` starts: a program without a terminal whose output goes to a file.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatePipe {
    /// The program to start.
    pub program: String,
    /// The arguments after the program name.
    pub args: Vec<String>,
    /// The absolute directory the child starts in.
    pub cwd: String,
    /// The child's whole environment: unlike a PTY, a pipe process inherits nothing from the daemon, so an empty
    /// map means no variables at all (not even `PATH`).
    pub env: HashMap<String, String>,
    /// An opaque grouping key, reported back as the process's `group_id`.
    pub group_id: String,
    /// The absolute path of the file that receives stdout and stderr; truncated or created before the start.
    pub output_path: String,
    /// An opaque JSON object kept with the process; an empty one is left out of the request.
    pub metadata: Map<String, Value>,
}

impl CreatePipe {
    /// `program` in `cwd`, writing to `output_path`, with no arguments, an empty environment, an empty group and
    /// no metadata.
    pub fn new(program: impl Into<String>, cwd: impl Into<String>, output_path: impl Into<String>) -> CreatePipe {
        CreatePipe {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: HashMap::new(),
            group_id: String::new(),
            output_path: output_path.into(),
            metadata: Map::new(),
        }
    }

    /// The request that carries these parameters, built with every member named, as for [`CreatePty`].
    pub fn into_request(self) -> Request {
        let CreatePipe { program, args, cwd, env, group_id, output_path, metadata } = self;
        Request::CreatePipe { args, cwd, env, group_id, metadata, output_path, program }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_pty_defaults_to_80_by_24_titled_after_its_program() {
        let request = CreatePty::new("sh", "/tmp").into_request();
        let wire = serde_json::to_value(&request).expect("encodes");
        assert_eq!(
            wire,
            json!({"op": "create_pty", "program": "sh", "args": [], "cwd": "/tmp", "env": {}, "group_id": "",
                   "title": "sh", "cols": 80, "rows": 24})
        );
    }

    #[test]
    fn empty_pipe_metadata_is_left_out() {
        let wire = serde_json::to_value(CreatePipe::new("make", "/src", "/tmp/out").into_request()).expect("encodes");
        assert_eq!(
            wire,
            json!({"op": "create_pipe", "program": "make", "args": [], "cwd": "/src", "env": {}, "group_id": "",
                   "output_path": "/tmp/out"})
        );
        let mut params = CreatePipe::new("make", "/src", "/tmp/out");
        params.metadata.insert("k".into(), json!(1));
        let wire = serde_json::to_value(params.into_request()).expect("encodes");
        assert_eq!(wire["metadata"], json!({"k": 1}));
    }
}

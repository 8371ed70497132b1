//! The defaults clients fill in for the two requests with too many members for positional arguments:
//! `CreatePtyRequest::new` and `CreatePipeRequest::new` take what has no sensible default and fill in the rest.
//! The members are public, so a caller changes what it needs with struct update syntax:
//!
//! ```
//! use opencode_pty_protocol::CreatePtyRequest;
//! let params = CreatePtyRequest { args: vec!["-l".into()], ..CreatePtyRequest::new("bash", "/home/me") };
//! assert_eq!(params.title, "bash");
//! ```

use std::collections::HashMap;
use std::num::NonZeroU16;

use serde_json::Map;

use crate::generated::{CreatePipeRequest, CreatePtyRequest};

/// The terminal width [`CreatePtyRequest::new`] picks: the classic 80 columns.
pub const DEFAULT_COLS: NonZeroU16 = NonZeroU16::new(80).expect("80 is not zero");

/// The terminal height [`CreatePtyRequest::new`] picks: the classic 24 rows.
pub const DEFAULT_ROWS: NonZeroU16 = NonZeroU16::new(24).expect("24 is not zero");

impl CreatePtyRequest {
    /// `program` in `cwd` with no arguments, no extra environment, an empty group, the program as its title and
    /// a terminal of [`DEFAULT_COLS`] × [`DEFAULT_ROWS`], without shell integration, with the daemon's default
    /// history and replay bounds.
    pub fn new(program: impl Into<String>, cwd: impl Into<String>) -> CreatePtyRequest {
        let program = program.into();
        CreatePtyRequest {
            title: program.clone(),
            program,
            args: Vec::new(),
            cwd: cwd.into(),
            env: HashMap::new(),
            group_id: String::new(),
            cols: DEFAULT_COLS,
            rows: DEFAULT_ROWS,
            shell_integration: None,
            scrollback_lines: None,
            replay_bytes: None,
        }
    }
}

impl CreatePipeRequest {
    /// `program` in `cwd`, writing to `output_path`, with no arguments, an empty environment (a pipe process
    /// inherits nothing from the daemon, so not even `PATH`), an empty group and no metadata (an empty object is
    /// left out of the request).
    pub fn new(
        program: impl Into<String>,
        cwd: impl Into<String>,
        output_path: impl Into<String>,
    ) -> CreatePipeRequest {
        CreatePipeRequest {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: HashMap::new(),
            group_id: String::new(),
            output_path: output_path.into(),
            metadata: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::generated::Request;

    #[test]
    fn a_pty_defaults_to_80_by_24_titled_after_its_program() {
        let request = Request::from(CreatePtyRequest::new("sh", "/tmp"));
        let wire = serde_json::to_value(&request).expect("encodes");
        assert_eq!(
            wire,
            json!({"op": "create_pty", "program": "sh", "args": [], "cwd": "/tmp", "env": {}, "group_id": "",
                   "title": "sh", "cols": 80, "rows": 24})
        );
    }

    #[test]
    fn empty_pipe_metadata_is_left_out() {
        let request = Request::from(CreatePipeRequest::new("make", "/src", "/tmp/out"));
        let wire = serde_json::to_value(request).expect("encodes");
        assert_eq!(
            wire,
            json!({"op": "create_pipe", "program": "make", "args": [], "cwd": "/src", "env": {}, "group_id": "",
                   "output_path": "/tmp/out"})
        );
        let mut params = CreatePipeRequest::new("make", "/src", "/tmp/out");
        params.metadata.insert("k".into(), json!(1));
        let wire = serde_json::to_value(Request::from(params)).expect("encodes");
        assert_eq!(wire["metadata"], json!({"k": 1}));
    }
}

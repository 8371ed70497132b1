//! The parameters of `create_pty` and `create_pipe`, and [`Takeover`], what `subscribe` does about a terminal
//! that already has a controller.
//!
//! [`CreatePty`] and [`CreatePipe`] are the protocol's generated request types under the names this crate has
//! always used: each has a constructor that takes what has no sensible default and fills in the rest, and public
//! members, so a caller changes what it needs with struct update syntax:
//!
//! ```
//! use opencode_pty_client::CreatePty;
//! let params = CreatePty { args: vec!["-l".into()], ..CreatePty::new("bash", "/home/me") };
//! assert_eq!(params.title, "bash");
//! ```

pub use opencode_pty_protocol::{
    CreatePipeRequest as CreatePipe, CreatePtyRequest as CreatePty, DEFAULT_COLS, DEFAULT_ROWS,
};

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

#[cfg(test)]
mod tests {
    use opencode_pty_protocol::Request;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_parameters_are_the_requests_with_their_defaults() {
        let wire = serde_json::to_value(Request::from(CreatePty::new("sh", "/tmp"))).expect("encodes");
        assert_eq!(wire["cols"], json!(80));
        assert_eq!(wire["title"], json!("sh"));
        let wire = serde_json::to_value(Request::from(CreatePipe::new("make", "/src", "/tmp/out"))).expect("encodes");
        assert!(wire.get("metadata").is_none(), "{wire}");
    }

    #[test]
    fn takeover_is_the_wire_flag() {
        assert!(Takeover::Take.flag());
        assert!(!Takeover::Refuse.flag());
    }
}

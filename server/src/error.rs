//! `ServiceError`: every way a request to the process service can fail, each with the message a client sees.
//! A caller that can act on a kind matches its variant; the text is made only when it is sent.

/// How a refused controller subscription begins (the holder's attachment id follows): the command line recognises
/// it to say what to do about it.
pub const ALREADY_CONTROLLED: &str = "terminal already has controller";

/// Why a service request failed. The `Display` text is what the daemon answers in `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// No process has this id (never had, or it was terminated).
    #[error("process {0} not found")]
    NotFound(u64),
    /// The request cannot be carried out as asked (out of bounds, malformed, or not allowed now).
    #[error("{0}")]
    Invalid(String),
    /// The new process's group could not be added to the daemon's record (`service.groups`: a full disk, a
    /// removed directory), so it was stopped at once: it would have outlived a daemon killed with SIGKILL.
    #[error(
        "process not started: the daemon cannot record its process group, so it would outlive a daemon killed \
         with SIGKILL ({0})"
    )]
    Unrecorded(String),
    /// A pipe process's output file would be inside the daemon's runtime directory, whose files (registration,
    /// lock, record) it would overwrite.
    #[error("output_path {path} is inside the daemon's runtime directory {dir}: refused")]
    ProtectedOutput {
        /// The path as given.
        path: String,
        /// The runtime directory.
        dir: String,
    },
    /// The daemon is shutting down: nothing more is created.
    #[error("the daemon is shutting down")]
    ShuttingDown,
    /// A thread a process needs could not be started (the system is out of threads or memory).
    #[error("cannot start the {role} thread: {reason}")]
    Thread {
        /// What the thread does: `actor`, `reader`, `writer`, `wait`.
        role: &'static str,
        /// Why, from the operating system.
        reason: String,
    },
    /// The operating system refused something the daemon needed for a process (a pipe, a descriptor, a
    /// signal, an `ioctl`); nothing the request could have done differently.
    #[error("{action}: {reason}")]
    System {
        /// What the daemon tried, as a message (`cannot create a pipe`).
        action: String,
        /// Why, from the operating system.
        reason: String,
    },
    /// A pipe process's output file could not be opened.
    #[error("cannot open output file {path}: {reason}")]
    OutputFile {
        /// The path as given.
        path: String,
        /// Why, in words that fit the cause.
        reason: String,
    },
    /// The terminal emulator refused an operation.
    #[error(transparent)]
    Vt(#[from] opencode_pty_vt::Error),
    /// A resize took effect, but its `resized` event (with its checkpoint) could not be made.
    #[error("the terminal was resized to {cols}x{rows}, but its resized event cannot be sent: {source}")]
    ResizedWithoutEvent {
        /// The new width.
        cols: u16,
        /// The new height.
        rows: u16,
        /// Why the checkpoint could not be made.
        source: opencode_pty_vt::Error,
    },
    /// A replay read from an offset no output has reached yet.
    #[error("requested offset {offset} is beyond tail {tail}")]
    BeyondTail {
        /// The offset asked for.
        offset: u64,
        /// The offset just past the newest byte.
        tail: u64,
    },
    /// Input that would bring what waits for the child's input over `MAX_PENDING_INPUT_BYTES`.
    #[error("terminal input queue is full ({waiting} bytes waiting): the program is not reading its input")]
    InputQueueFull {
        /// The bytes already waiting.
        waiting: usize,
    },
    /// A process already has as many waiters (or subscribers) as it keeps (`MAX_PIPE_WAITERS`).
    #[error("process {id} has too many {what} (at most {limit})")]
    TooMany {
        /// The process.
        id: u64,
        /// `waiters` or `subscribers`.
        what: &'static str,
        /// The bound.
        limit: usize,
    },
    /// The child could not be started.
    #[error("cannot start {program}: {reason}")]
    Spawn {
        /// The program as given.
        program: String,
        /// Why, from the operating system.
        reason: String,
    },
    /// The terminal's runtime has stopped (terminated, or the daemon is shutting down).
    #[error("process {0} is no longer running its terminal")]
    Gone(u64),
    /// A pipe process was terminated before it exited (the answer to a pending `wait`).
    #[error("terminated")]
    Terminated,
    /// Waiting for a pipe process's child failed, so its exit will never be known (the final answer to
    /// `wait`, and the reason in its `failed` lifecycle).
    #[error("waiting for the child failed: {0}")]
    WaitFailed(String),
    /// A pipe process whose child was lost (waiting for it failed) is never signalled again: its pid may
    /// already belong to another process.
    #[error("process {id} can no longer be signalled: {reason}")]
    Unsignallable {
        /// The process.
        id: u64,
        /// Why: the wait failure.
        reason: String,
    },
    /// Metadata that would bring the daemon's live pipe processes over their total budget.
    #[error("metadata would bring the daemon's pipe processes to {total} bytes, over the {limit}-byte total")]
    MetadataBudget {
        /// The total the request would have led to.
        total: usize,
        /// The budget (`MAX_TOTAL_METADATA_BYTES`).
        limit: usize,
    },
    /// A process whose info would bring the live processes' share of `list` over its total budget.
    #[error("the daemon's live processes would take {total} bytes of a list answer, over the {limit}-byte total")]
    ListingBudget {
        /// The total the request would have led to.
        total: usize,
        /// The budget (`MAX_TOTAL_INFO_BYTES`).
        limit: usize,
    },
    /// The request is for the other kind of process (PTY-only ops on a pipe process, or the reverse).
    #[error("process {id} is {what}; this request is only for {wanted}")]
    WrongMode {
        /// The process.
        id: u64,
        /// What it is: `a pipe process` or `a PTY`.
        what: &'static str,
        /// What the request needs: `PTYs` or `pipe processes`.
        wanted: &'static str,
    },
    /// A request about a terminal's shell (`commands`) for one started without `shell_integration`.
    #[error("process {0} was not started with shell integration")]
    NoShellIntegration(u64),
    /// A `run` or `wait_command` that cannot be carried out as asked (the shell is busy, the command unknown).
    #[error("process {id}: {message}")]
    Shell {
        /// The terminal.
        id: u64,
        /// What stands in the way.
        message: String,
    },
    /// The terminal did not answer in time.
    #[error("process {id} did not answer within {seconds} s")]
    Timeout {
        /// The process.
        id: u64,
        /// The bound that passed.
        seconds: u64,
    },
}

impl ServiceError {
    /// An [`ServiceError::Invalid`] from anything printable.
    pub(crate) fn invalid(message: impl Into<String>) -> ServiceError {
        ServiceError::Invalid(message.into())
    }

    /// A [`ServiceError::System`]: `action` failed for `reason`.
    pub(crate) fn system(action: impl Into<String>, reason: impl std::fmt::Display) -> ServiceError {
        ServiceError::System { action: action.into(), reason: reason.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed variants say what the text-only errors they replaced said.
    #[test]
    fn typed_errors_keep_the_messages_clients_see() {
        let cases = [
            (ServiceError::ShuttingDown, "the daemon is shutting down"),
            (
                ServiceError::Thread { role: "reader", reason: "no memory".into() },
                "cannot start the reader thread: no memory",
            ),
            (ServiceError::system("cannot create a pipe", "EMFILE"), "cannot create a pipe: EMFILE"),
            (ServiceError::Vt(opencode_pty_vt::Error::ZeroRows), "row count must be positive"),
            (ServiceError::BeyondTail { offset: 8, tail: 7 }, "requested offset 8 is beyond tail 7"),
            (
                ServiceError::InputQueueFull { waiting: 5 },
                "terminal input queue is full (5 bytes waiting): the program is not reading its input",
            ),
            (
                ServiceError::TooMany { id: 3, what: "waiters", limit: 1024 },
                "process 3 has too many waiters (at most 1024)",
            ),
            (
                ServiceError::ResizedWithoutEvent { cols: 80, rows: 24, source: opencode_pty_vt::Error::Io },
                concat!(
                    "the terminal was resized to 80x24, but its resized event cannot be sent: ",
                    "libghostty-vt output writer failed"
                ),
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}

//! `ServiceError`: every way a request to the terminal service can fail, each with the message a client sees.

/// Why a service request failed. The `Display` text is what the daemon answers in `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// No process has this id (never had, or it was terminated).
    #[error("process {0} not found")]
    NotFound(u64),
    /// The request cannot be carried out as asked.
    #[error("{0}")]
    Invalid(String),
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
    pub fn invalid(message: impl Into<String>) -> ServiceError {
        ServiceError::Invalid(message.into())
    }
}

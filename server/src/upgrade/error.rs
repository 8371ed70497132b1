//! Why a state could not be written, read, captured or taken: what the daemon tells the owner who asked for the
//! upgrade (each message says what was wrong with which process).

use crate::error::ServiceError;

/// Why an upgrade's state failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UpgradeError {
    /// The bytes do not start like a state.
    #[error("not an upgrade state")]
    NotAState,
    /// A format this build does not read.
    #[error("upgrade state format {found} is not one this build reads ({accepted})", accepted = super::accepted_formats())]
    Format {
        /// The format the state says it has.
        found: u32,
    },
    /// Its terminals' emulator snapshots were made by another libghostty revision.
    #[error(
        "the state's terminals were captured with Ghostty {found}, this build has Ghostty {ours}: their screens cannot be read"
    )]
    VtRevision {
        /// The revision that wrote the snapshots.
        found: String,
        /// Ours.
        ours: String,
    },
    /// A header over its bound.
    #[error("the upgrade state's header is {len} bytes, over {limit}", limit = super::encoding::MAX_HEADER_BYTES)]
    HeaderTooLarge {
        /// The length the state gives.
        len: u64,
    },
    /// The header is not valid JSON of the format, or could not be written.
    #[error("the upgrade state's header is not valid: {0}")]
    Header(#[source] serde_json::Error),
    /// The bytes around the header and blobs are wrong.
    #[error("the upgrade state is malformed: {0}")]
    Malformed(String),
    /// Reading or writing the state failed.
    #[error("reading or writing the upgrade state failed: {0}")]
    Io(#[from] std::io::Error),
    /// A descriptor the state names could not be taken.
    #[error("descriptor {fd} of process {id} cannot be taken: {reason}")]
    Descriptor {
        /// The process.
        id: u64,
        /// The descriptor.
        fd: i32,
        /// Why.
        reason: String,
    },
    /// A process could not be captured or rebuilt.
    #[error("process {id}: {source}")]
    Process {
        /// The process.
        id: u64,
        /// What failed.
        #[source]
        source: ServiceError,
    },
    /// The state has no process with an id a restore was given, or names one twice.
    #[error("the upgrade state does not fit: {0}")]
    Mismatch(String),
}

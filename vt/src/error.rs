//! `vt::Error`: one variant per libghostty result code, plus the few failures this crate adds itself.

/// Errors of the libghostty-vt binding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `GHOSTTY_OUT_OF_MEMORY` (-1).
    #[error("libghostty-vt ran out of memory")]
    OutOfMemory,
    /// `GHOSTTY_INVALID_VALUE` (-2), e.g. zero columns or rows.
    #[error("libghostty-vt rejected an invalid value")]
    InvalidValue,
    /// `GHOSTTY_OUT_OF_SPACE` (-3): an output buffer was too small.
    #[error("libghostty-vt output buffer too small")]
    OutOfSpace,
    /// `GHOSTTY_NO_VALUE` (-4): the requested value is not set.
    #[error("libghostty-vt has no value for this query")]
    NoValue,
    /// `GHOSTTY_IO_ERROR` (-5): a writer callback refused the output.
    #[error("libghostty-vt output writer failed")]
    Io,
    /// `GHOSTTY_LIMIT_EXCEEDED` (-6).
    #[error("libghostty-vt limit exceeded")]
    LimitExceeded,
    /// `GHOSTTY_REJECTED` (-7).
    #[error("libghostty-vt rejected the request")]
    Rejected,
    /// A result code this binding does not know.
    #[error("libghostty-vt returned unknown result code {0}")]
    Unknown(i32),
    /// Terminal sizes must be at least one column and one row.
    #[error("terminal dimensions must be positive (got {cols}x{rows})")]
    ZeroSize {
        /// Requested columns.
        cols: u16,
        /// Requested rows.
        rows: u16,
    },
    /// A row read asked for zero rows.
    #[error("row count must be positive")]
    ZeroRows,
    /// A row read would exceed its byte budget; nothing is truncated.
    #[error("rows exceed {limit} byte limit")]
    BudgetExceeded {
        /// The budget in bytes.
        limit: usize,
    },
    /// A checkpoint would exceed its size limit; nothing is truncated.
    #[error("checkpoint exceeds {limit} byte limit")]
    CheckpointTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Maps a libghostty result code to `Ok(())` or its [`Error`]: the only place codes are interpreted.
pub(crate) fn check(rc: crate::ffi::GhosttyResult) -> Result<()> {
    use crate::ffi::*;
    match rc {
        GHOSTTY_SUCCESS => Ok(()),
        GHOSTTY_OUT_OF_MEMORY => Err(Error::OutOfMemory),
        GHOSTTY_INVALID_VALUE => Err(Error::InvalidValue),
        GHOSTTY_OUT_OF_SPACE => Err(Error::OutOfSpace),
        GHOSTTY_NO_VALUE => Err(Error::NoValue),
        GHOSTTY_IO_ERROR => Err(Error::Io),
        GHOSTTY_LIMIT_EXCEEDED => Err(Error::LimitExceeded),
        GHOSTTY_REJECTED => Err(Error::Rejected),
        other => Err(Error::Unknown(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_result_code_maps_to_its_own_error() {
        let errors: Vec<Error> = (-8..=-1).map(|rc| check(rc).unwrap_err()).collect();
        for (i, a) in errors.iter().enumerate() {
            for b in &errors[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(check(0), Ok(()));
        assert_eq!(check(-8), Err(Error::Unknown(-8)));
        assert_eq!(check(-2), Err(Error::InvalidValue));
    }
}

//! The metadata budget one daemon's live pipe processes share: each may hold up to `MAX_METADATA_BYTES`, but
//! together at most [`MAX_TOTAL_METADATA_BYTES`], so `list` (one frame) always fits however many there are.
//!
//! Sizes are serialized JSON bytes, as `list` sends them. A change is one atomic step on the running total,
//! so concurrent creates and `set_metadata` calls can never pass the budget together.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::ServiceError;

/// The most serialized metadata all of a daemon's live pipe processes may hold together: half a frame
/// (`MAX_FRAME_BYTES`, 8 MiB), leaving the other half for the rest of `list`.
pub const MAX_TOTAL_METADATA_BYTES: usize = 4 * 1024 * 1024;

/// The running total of the metadata bytes held by live pipe processes.
#[derive(Debug, Default)]
pub struct MetadataBudget {
    used: AtomicUsize,
}

impl MetadataBudget {
    /// An empty budget.
    pub fn new() -> MetadataBudget {
        MetadataBudget::default()
    }

    /// The bytes held now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Takes `bytes` whatever the total (the metadata of a process handed over by an upgrade, which the
    /// predecessor had admitted).
    pub(crate) fn restore(&self, bytes: usize) {
        self.used.fetch_add(bytes, Ordering::AcqRel);
    }

    /// Swaps `old` held bytes for `new` ones, or refuses (changing nothing) when the total would pass
    /// [`MAX_TOTAL_METADATA_BYTES`]. A reservation is `replace(0, n)`; a release is `replace(n, 0)`, which never
    /// fails.
    pub(crate) fn replace(&self, old: usize, new: usize) -> Result<(), ServiceError> {
        let mut refused = None;
        let result = self.used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            let total = used.saturating_sub(old).saturating_add(new);
            if new > old && total > MAX_TOTAL_METADATA_BYTES {
                refused = Some(total);
                return None;
            }
            Some(total)
        });
        match (result, refused) {
            (Err(_), Some(total)) => Err(ServiceError::MetadataBudget { total, limit: MAX_TOTAL_METADATA_BYTES }),
            _ => Ok(()),
        }
    }
}

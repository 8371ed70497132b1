//! The startup sweep of stale sibling runtime directories (being written).

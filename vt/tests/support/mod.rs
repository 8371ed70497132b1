//! Helpers shared by the vt integration tests.

pub mod screens;

//! The daemon binary a test runs: the `opencode-pty` built beside the test's own executable.

use std::path::{Path, PathBuf};

/// `target/<profile>/opencode-pty`, next to the running test (`target/<profile>/deps/<test>`). `cargo test
/// --workspace` builds it before any test runs; a test of one crate alone needs `cargo build -p opencode-pty`
/// first, which the panic says.
pub fn daemon_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test>");
    let binary = profile_dir.join("opencode-pty");
    assert!(
        binary.is_file(),
        "the daemon binary {} is missing: build it first (`cargo build -p opencode-pty`, or run `cargo test \
         --workspace`, which builds it)",
        binary.display()
    );
    binary
}

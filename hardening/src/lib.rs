//! Hardening of opencode-pty (issue 16; results in `HARDENING.md`): the bodies of the fuzz targets (`fuzz/`
//! wraps each in `libfuzzer_sys::fuzz_target!` for `cargo fuzz`; the tests replay every seed, regression and
//! local corpus input through the same bodies on stable, so no target rots and a crash once found stays
//! fixed), their seeds, and the load and soak runs against a real daemon.

pub mod fuzz;
pub mod load;
pub mod seeds;
pub mod soak;

/// Raises this process's soft descriptor limit to its hard limit: the load runs hold over a thousand
/// connections at once. Failure leaves the limit as it was (the case that needs it then says so).
pub fn raise_descriptor_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}

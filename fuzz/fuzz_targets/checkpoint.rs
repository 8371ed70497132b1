//! Fuzz target `checkpoint`: see `opencode_pty_hardening::fuzz::checkpoint`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| opencode_pty_hardening::fuzz::checkpoint(data));

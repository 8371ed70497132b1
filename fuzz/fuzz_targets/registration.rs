//! Fuzz target `registration`: see `opencode_pty_hardening::fuzz::registration`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| opencode_pty_hardening::fuzz::registration(data));

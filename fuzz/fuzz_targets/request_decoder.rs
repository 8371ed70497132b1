//! Fuzz target `request_decoder`: see `opencode_pty_hardening::fuzz::request_decoder`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| opencode_pty_hardening::fuzz::request_decoder(data));

//! Fuzz target `frame_decoder`: see `opencode_pty_hardening::fuzz::frame_decoder`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| opencode_pty_hardening::fuzz::frame_decoder(data));

//! Typed async Rust client for the opencode-pty daemon: will connect through the registration file, check the
//! protocol version and offer one method per request op. It depends on `opencode-pty-protocol` only and treats
//! the daemon as a black box behind its socket.

//! Names and texts that cross from one peer to another outside the message types: the files of a runtime
//! directory and the exact error messages clients branch on. Each is written once here; the daemon and the Rust
//! client use these constants, and a test keeps the TypeScript client's copies equal to them.

/// The registration file inside a runtime directory `DIR/NAME` (SPEC L4, CL1): the daemon writes it, clients
/// read it to find the socket and the token.
pub const REGISTRATION_FILE: &str = "service.json";

/// The service lock inside a runtime directory (SPEC L2): held exclusively by the daemon for its whole life, so
/// a second daemon, or a sweep, can tell that the directory is in use.
pub const LOCK_FILE: &str = "service.lock";

/// The whole `message` of the `error` a daemon answers a missing or wrong token with (SPEC E3). A client that
/// gets it re-reads the registration, since the daemon may have been replaced.
pub const AUTHENTICATION_FAILED: &str = "authentication failed";

/// What the `message` of the `error` answering an unknown op starts with; the op follows (SPEC E5). A client
/// can therefore probe whether a daemon knows a request.
pub const UNSUPPORTED_REQUEST_PREFIX: &str = "unsupported request: ";

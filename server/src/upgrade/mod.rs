//! The in-place upgrade (issue 30): the running daemon re-executes a new binary, keeping its pid, children,
//! descriptors and state.

// The exec mechanics and the preflight: which program (`program`), whether it can take our state
// (`preflight`), the state's frame across `execve` (`envelope`), the `execve` itself (`exec`), taking the
// passed descriptors in the new image (`inherited`), and the new image's `resume` command with its fallback to
// the old executable (`resume`).
pub(crate) mod envelope;
pub(crate) mod exec;
pub(crate) mod inherited;
pub(crate) mod preflight;
pub(crate) mod program;
pub(crate) mod resume;

//! What the daemon reads about processes from `/proc`: the one parser of a process's `stat` line (`stat`, used
//! by the process layer, the recovery side and the command line), the foreground process of a PTY
//! (`foreground`), and whether that process waits for input from the terminal (`input`, from the line
//! discipline and what its tasks are blocked in, `blocked`).

// The actor reads what the terminal waits for from the next commit on; until then only the tests use it.
#[cfg(target_os = "linux")]
#[cfg_attr(not(test), allow(dead_code))]
mod blocked;
mod foreground;
#[cfg_attr(not(test), allow(dead_code))]
mod input;
pub(crate) mod stat;
#[cfg(all(test, target_os = "linux"))]
mod test_pty;

pub use foreground::MAX_WALKED_PROCESSES;
pub(crate) use foreground::foreground_process;

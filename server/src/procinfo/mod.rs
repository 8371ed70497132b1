//! What the daemon reads about processes from `/proc`: the one parser of a process's `stat` line (`stat`, used
//! by the process layer, the recovery side and the command line), the foreground process of a PTY
//! (`foreground`), and whether that process waits for input from the terminal (`input`, from the line
//! discipline and what its tasks are blocked in, `blocked`).

#[cfg(target_os = "linux")]
mod blocked;
mod foreground;
mod input;
pub(crate) mod stat;
#[cfg(all(test, target_os = "linux"))]
mod test_pty;

#[cfg(target_os = "linux")]
pub use blocked::{MAX_FDINFO_BYTES, MAX_POLLED_FDS};
pub use foreground::MAX_WALKED_PROCESSES;
pub(crate) use foreground::{ForegroundGroup, foreground_group};
pub(crate) use input::{InputWait, input_wait};
pub use input::{MAX_INSPECTED_MEMBERS, MAX_INSPECTED_TASKS};

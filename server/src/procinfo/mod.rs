//! What the daemon reads about processes from `/proc`: the one parser of a process's `stat` line (`stat`, used
//! by the process layer, the recovery side and the command line) and the foreground process of a PTY
//! (`foreground`).

mod foreground;
pub(crate) mod stat;

pub use foreground::MAX_WALKED_PROCESSES;
pub(crate) use foreground::foreground_process;

//! Starts a PTY child with portable-pty and hands out what the runtime threads need.
//!
//! This is the one module of the daemon allowed `unsafe`: portable-pty exposes its master only as a raw
//! descriptor, and borrowing that to duplicate it needs one `unsafe` call.

#![allow(unsafe_code)]

use std::collections::HashMap;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::error::ServiceError;

/// What a PTY is started with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtySpec {
    /// The program, found through the child's `PATH`.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The absolute working directory.
    pub cwd: PathBuf,
    /// Overlaid on the daemon's environment.
    pub env: HashMap<String, String>,
    /// Opaque grouping key.
    pub group_id: String,
    /// The creation title.
    pub title: String,
    /// Columns, at least 1.
    pub cols: u16,
    /// Rows, at least 1.
    pub rows: u16,
}

/// A started PTY child.
pub(crate) struct Spawned {
    /// The master side, kept for resizes.
    pub(crate) master: Box<dyn MasterPty + Send>,
    /// A duplicate of the master descriptor, non-blocking, for the reader, the writer and `tcgetpgrp`.
    pub(crate) master_fd: OwnedFd,
    /// The slave's path, to recognise processes attached to it.
    pub(crate) tty: Option<PathBuf>,
    /// The child's process id (also its process group and session id).
    pub(crate) pid: u32,
}

impl std::fmt::Debug for Spawned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawned").field("pid", &self.pid).field("tty", &self.tty).finish()
    }
}

/// Checks a spec before anything is started.
pub(crate) fn validate(spec: &PtySpec) -> Result<(), ServiceError> {
    if spec.program.trim().is_empty() {
        return Err(ServiceError::invalid("terminal program cannot be empty"));
    }
    if spec.cols == 0 || spec.rows == 0 {
        return Err(ServiceError::invalid(format!(
            "terminal dimensions must be positive (got {}x{})",
            spec.cols, spec.rows
        )));
    }
    if !spec.cwd.is_absolute() {
        return Err(ServiceError::invalid(format!("cwd must be an absolute path (got {})", spec.cwd.display())));
    }
    Ok(())
}

/// The child's environment: the daemon's, overlaid with `env`, with `TERM=xterm-256color` and
/// `COLORTERM=truecolor` unless `env` sets them (SPEC §6).
pub(crate) fn command(spec: &PtySpec) -> CommandBuilder {
    let mut command = CommandBuilder::new(&spec.program);
    command.args(&spec.args);
    command.cwd(&spec.cwd);
    for (key, value) in &spec.env {
        command.env(key, value);
    }
    for (key, value) in [("TERM", "xterm-256color"), ("COLORTERM", "truecolor")] {
        if !spec.env.contains_key(key) {
            command.env(key, value);
        }
    }
    command
}

/// Opens a PTY of the spec's size and starts the child in it (its own session, the PTY as its controlling
/// terminal, a clean signal mask). A program that cannot be found or executed is an error, never a process.
pub(crate) fn spawn(spec: &PtySpec) -> Result<Spawned, ServiceError> {
    validate(spec)?;
    let fail = |reason: String| ServiceError::Spawn { program: spec.program.clone(), reason };
    if !Path::new(&spec.cwd).is_dir() {
        return Err(fail(format!("cwd {} is not a directory", spec.cwd.display())));
    }
    let size = PtySize { rows: spec.rows, cols: spec.cols, pixel_width: 0, pixel_height: 0 };
    let pair = native_pty_system().openpty(size).map_err(|e| fail(format!("cannot open a PTY: {e}")))?;
    let child = pair.slave.spawn_command(command(spec)).map_err(|e| fail(e.to_string()))?;
    // The child holds the slave now; the daemon keeps only the master, so EOF arrives when the child's side
    // closes.
    drop(pair.slave);
    let pid = child.process_id().ok_or_else(|| fail("the child has no process id".into()))?;
    // portable-pty reaps nothing by itself; the runtime waits for the pid. Dropping the handle does not kill.
    drop(child);
    let raw = pair.master.as_raw_fd().ok_or_else(|| fail("the PTY master has no descriptor".into()))?;
    // Safety: `raw` is the master descriptor owned by `pair.master`, which is alive for this whole function;
    // the borrow is used only to duplicate it.
    let borrowed = unsafe { BorrowedFd::borrow_raw(raw) };
    let master_fd = borrowed.try_clone_to_owned().map_err(|e| fail(format!("cannot duplicate the master: {e}")))?;
    set_nonblocking(&master_fd).map_err(|e| fail(format!("cannot make the master non-blocking: {e}")))?;
    let tty = pair.master.tty_name();
    Ok(Spawned { master: pair.master, master_fd, tty, pid })
}

/// Makes reads and writes on `fd` (and every duplicate of it) return instead of blocking.
fn set_nonblocking(fd: &OwnedFd) -> nix::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

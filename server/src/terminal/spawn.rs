//! Starts a PTY child and hands out what the runtime threads need, from a [`PtySpec`] read out of the generated
//! `create_pty` request.
//!
//! The PTY is opened with `posix_openpt` (close-on-exec from the start) and the child started with
//! `posix_spawn` (`process::sys::spawn`) as a session leader whose controlling terminal is the PTY, with default
//! signal dispositions and an empty signal mask; a program that cannot run is the spawn's error, never a
//! running terminal. Every descriptor the daemon opens is close-on-exec when it is created, so children
//! inherit none of them, even children another thread starts at the same moment.
//!
//! The spawn and the window-size `ioctl` are in `process::sys`, with every other `unsafe` call.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use nix::pty::{grantpt, posix_openpt, ptsname_r, unlockpt};
use opencode_pty_protocol::Request;

use super::shell::Launch;
use crate::bounds;
use crate::error::ServiceError;
use crate::process::sys;

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
    /// Whether the shell starts with the daemon's shell integration (`shell/`).
    pub shell_integration: bool,
    /// History lines its emulator keeps, when not the daemon's (`TerminalConfig::scrollback_lines`).
    pub scrollback_lines: Option<u32>,
    /// Bytes of output it keeps for replay, when not the daemon's (`TerminalConfig::replay_bytes`).
    pub replay_bytes: Option<u32>,
}

impl PtySpec {
    /// The spec a `create_pty` request carries, or `None` for any other request. Every member of the generated
    /// variant is named here and none is skipped with `..`, so a member added to, removed from or renamed in the
    /// schema stops this from compiling until the spec follows.
    pub(crate) fn from_request(request: Request) -> Option<PtySpec> {
        let Request::CreatePty {
            program,
            args,
            cwd,
            env,
            group_id,
            title,
            cols,
            rows,
            shell_integration,
            scrollback_lines,
            replay_bytes,
        } = request
        else {
            return None;
        };
        Some(PtySpec {
            program,
            args,
            cwd: cwd.into(),
            env,
            group_id,
            title,
            cols: cols.get(),
            rows: rows.get(),
            shell_integration: shell_integration.unwrap_or(false),
            scrollback_lines,
            replay_bytes,
        })
    }
}

/// A started PTY child.
#[derive(Debug)]
pub(crate) struct Spawned {
    /// The master side: non-blocking and close-on-exec.
    pub(crate) master: OwnedFd,
    /// The slave's path, to recognise processes attached to it.
    pub(crate) tty: Option<PathBuf>,
    /// The child's process id (also its process group and session id).
    pub(crate) pid: u32,
}

/// Checks a spec before anything is started: the program, the size (`MAX_COLS`, `MAX_ROWS`, `MAX_CELLS`), the
/// cwd and the length of every string the terminal reports back. Answers the size of its `command` as JSON.
pub(crate) fn validate(spec: &PtySpec) -> Result<usize, ServiceError> {
    if spec.program.trim().is_empty() {
        return Err(ServiceError::invalid("terminal program cannot be empty"));
    }
    bounds::check_size(spec.cols, spec.rows)?;
    // Lengths first: later messages quote the cwd and the program.
    bounds::check_title(&spec.title)?;
    let command_bytes = bounds::check_process(&spec.program, &spec.args, &spec.cwd.to_string_lossy(), &spec.group_id)?;
    bounds::check_exec_strings(&spec.program, &spec.args, &spec.cwd.to_string_lossy(), &spec.env)?;
    if !spec.cwd.is_absolute() {
        return Err(ServiceError::invalid(format!("cwd must be an absolute path (got {})", spec.cwd.display())));
    }
    if spec.shell_integration {
        super::shell::Shell::of(&spec.program)?;
    }
    bounds::check_memory_bounds(spec.scrollback_lines, spec.replay_bytes)?;
    Ok(command_bytes)
}

/// The child's environment: the daemon's without the `withheld` variables, overlaid with `env`, plus
/// `TERM=xterm-256color` and `COLORTERM=truecolor` unless `env` sets them (SPEC D2); with shell integration,
/// zsh gets its ZDOTDIR.
pub(crate) fn environment(spec: &PtySpec, withheld: &[String], launch: Option<&Launch>) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> =
        std::env::vars_os().filter(|(name, _)| !withheld.iter().any(|w| name.as_os_str() == w.as_str())).collect();
    let mut set = |name: &str, value: &str| {
        env.retain(|(old, _)| old.as_os_str() != name);
        env.push((name.into(), value.into()));
    };
    for (name, value) in &spec.env {
        set(name, value);
    }
    if let Some((name, value)) = launch.and_then(|launch| launch.env.as_ref()) {
        set(name, value);
    }
    for (key, value) in [("TERM", "xterm-256color"), ("COLORTERM", "truecolor")] {
        if !spec.env.contains_key(key) {
            set(key, value);
        }
    }
    env
}

/// Opens a PTY of the spec's size and starts the child in it. A program that cannot be found or executed is
/// an error, never a process. A program without a slash is looked up on the child's `PATH`; with shell
/// integration, the `launch`'s arguments replace the request's (they include them).
/// `withheld` names variables of the daemon's environment the child does not get (unless `env` sets them).
pub(crate) fn spawn(spec: &PtySpec, withheld: &[String], launch: Option<&Launch>) -> Result<Spawned, ServiceError> {
    validate(spec)?;
    let fail = |reason: String| ServiceError::Spawn { program: spec.program.clone(), reason };
    if !Path::new(&spec.cwd).is_dir() {
        return Err(fail(format!("cwd {} is not a directory", spec.cwd.display())));
    }
    let pty = open_pty(spec.cols, spec.rows).map_err(|e| fail(format!("cannot open a PTY: {e}")))?;
    let env = environment(spec, withheld, launch);
    let child = sys::spawn::ChildSpec {
        program: &spec.program,
        args: launch.map_or(&spec.args, |launch| &launch.args),
        env: &env,
        cwd: &spec.cwd,
        leader: sys::spawn::Leader::Session { tty: &pty.path },
    };
    let pid = sys::spawn::spawn(&child).map_err(|e| fail(e.to_string()))?;
    // The child opened the slave itself; the daemon keeps only the master, so EOF arrives when the child's
    // side closes. The runtime waits for the pid itself.
    drop(pty.slave);
    Ok(Spawned { master: pty.master, tty: Some(pty.path), pid })
}

/// A freshly opened PTY pair.
struct Pty {
    /// Non-blocking.
    master: OwnedFd,
    slave: OwnedFd,
    /// The slave's path (`/dev/pts/N`).
    path: PathBuf,
}

/// Opens a PTY pair of the given size whose descriptors are close-on-exec from the moment they exist. (`openpty`
/// sets that only afterwards, and a child another thread starts in between would inherit them: a pipe process
/// holding a terminal's slave would keep that terminal's output from ever ending.)
fn open_pty(cols: u16, rows: u16) -> nix::Result<Pty> {
    let flags = OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let master = posix_openpt(flags | OFlag::O_NONBLOCK)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let path = ptsname_r(&master)?;
    let slave = nix::fcntl::open(path.as_str(), flags, nix::sys::stat::Mode::empty())?;
    let master = OwnedFd::from(master);
    sys::set_window_size(&master, cols, rows)
        .map_err(|e| nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(0)))?;
    Ok(Pty { master, slave, path: PathBuf::from(path) })
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU16;

    use super::*;

    #[test]
    fn a_create_pty_request_gives_its_spec_member_for_member() {
        let size = |n| NonZeroU16::new(n).expect("not zero");
        let request = Request::CreatePty {
            program: "vim".into(),
            args: vec!["-u".into(), "NONE".into()],
            cwd: "/home/me".into(),
            env: HashMap::from([("LANG".into(), "C".into())]),
            group_id: "g".into(),
            title: "editor".into(),
            cols: size(132),
            rows: size(43),
            shell_integration: Some(true),
            scrollback_lines: Some(500),
            replay_bytes: Some(65536),
        };
        let expected = PtySpec {
            program: "vim".into(),
            args: vec!["-u".into(), "NONE".into()],
            cwd: PathBuf::from("/home/me"),
            env: HashMap::from([("LANG".into(), "C".into())]),
            group_id: "g".into(),
            title: "editor".into(),
            cols: 132,
            rows: 43,
            shell_integration: true,
            scrollback_lines: Some(500),
            replay_bytes: Some(65536),
        };
        assert_eq!(PtySpec::from_request(request), Some(expected));
    }

    #[test]
    fn another_request_gives_no_spec() {
        assert_eq!(PtySpec::from_request(Request::Ping), None);
    }
}

//! Starting a daemon binary for the tests, the benchmarks, the load harness and the conformance runner: one
//! launcher that runs `PROGRAM daemon --name NAME --runtime-dir DIR [ARGS]`, waits (bounded, by event, never by
//! sleeping) for the registration that names the process it started, and stops that process when dropped, so
//! that no caller leaves a daemon behind. It knows the daemon only by its command line and registration file.
//!
//! ```no_run
//! # fn demo() -> Result<(), opencode_pty_client::launch::LaunchError> {
//! use opencode_pty_client::launch::Launch;
//! let daemon = Launch::new("target/debug/opencode-pty", "/tmp/root", "test")
//!     .args(["--handoff-ttl-ms", "2000"])
//!     .start()?;
//! println!("listening on {}", daemon.registration().socket);
//! # Ok(()) }
//! ```

mod wait;

#[cfg(test)]
mod tests;

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use opencode_pty_protocol::Registration;

/// How long [`Launch::start`] waits for the registration unless [`Launch::deadline`] says otherwise.
pub const START_DEADLINE: Duration = Duration::from_secs(20);

/// How long a dropped [`LaunchedDaemon`] has to exit after SIGTERM before it is killed, unless
/// [`Launch::stop_grace`] says otherwise.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// Why a daemon could not be started, or waited for.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The program could not be run.
    #[error("cannot start {}: {cause}", program.display())]
    Spawn {
        /// The program run (the wrapper, when there is one).
        program: PathBuf,
        /// The operating system's error.
        cause: std::io::Error,
    },
    /// The daemon exited before it wrote its registration.
    #[error("the daemon exited ({status}) before writing its registration")]
    Exited {
        /// How it ended.
        status: ExitStatus,
    },
    /// No registration naming the daemon's pid appeared in time.
    #[error("no registration naming the daemon's pid {pid} appeared at {} within {within:?}", file.display())]
    NoRegistration {
        /// The daemon's pid.
        pid: u32,
        /// The registration file waited for.
        file: PathBuf,
        /// The deadline.
        within: Duration,
    },
    /// The events a wait needs could not be set up or waited for.
    #[error("cannot watch {what}: {cause}")]
    Watch {
        /// What was to be watched.
        what: String,
        /// The operating system's error.
        cause: std::io::Error,
    },
    /// Whether the daemon had exited could not be learnt.
    #[error("cannot wait for the daemon: {0}")]
    Reap(std::io::Error),
}

/// How to start a daemon: a builder, like [`Command`], whose [`Launch::start`] spawns it and waits for it.
/// The daemon's stdout is always discarded; its stdin and stderr are discarded unless set.
#[derive(Debug)]
pub struct Launch {
    /// The daemon binary.
    program: PathBuf,
    /// A program (and its arguments) that runs first and `exec`s the daemon in its place, keeping its pid.
    wrapper: Option<(PathBuf, Vec<OsString>)>,
    /// `--runtime-dir`, as given to the daemon.
    runtime_dir: PathBuf,
    /// `--name`.
    name: OsString,
    /// Arguments after the name and runtime directory.
    args: Vec<OsString>,
    /// Variables set (`Some`) or removed (`None`), in order.
    env: Vec<(OsString, Option<OsString>)>,
    /// The daemon's working directory, when not ours.
    current_dir: Option<PathBuf>,
    stdin: Option<Stdio>,
    stderr: Option<Stdio>,
    /// The bound on the wait for the registration.
    deadline: Duration,
    /// The bound on the wait after SIGTERM when the daemon is dropped.
    stop_grace: Duration,
}

impl Launch {
    /// `program daemon --name name --runtime-dir runtime_dir`. The runtime directory must exist (the daemon
    /// makes `runtime_dir/name` in it); a relative one is taken from the daemon's working directory.
    pub fn new(program: impl Into<PathBuf>, runtime_dir: impl Into<PathBuf>, name: impl Into<OsString>) -> Launch {
        Launch {
            program: program.into(),
            wrapper: None,
            runtime_dir: runtime_dir.into(),
            name: name.into(),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            stdin: None,
            stderr: None,
            deadline: START_DEADLINE,
            stop_grace: STOP_GRACE,
        }
    }

    /// One more daemon argument, after the name and runtime directory.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Launch {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// More daemon arguments.
    #[must_use]
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Launch {
        self.args.extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// Sets `key` to `value` in the environment the daemon inherits.
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Launch {
        self.env.push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Removes `key` from the environment the daemon inherits.
    #[must_use]
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Launch {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Whether [`Launch::env`] or [`Launch::env_remove`] was given `key` (the last word on it counts).
    pub fn sets_env(&self, key: impl AsRef<OsStr>) -> bool {
        self.env.iter().any(|(name, _)| name == key.as_ref())
    }

    /// The daemon's working directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Launch {
        self.current_dir = Some(dir.into());
        self
    }

    /// The daemon's standard input ([`Stdio::piped`] leaves the write end in [`LaunchedDaemon::child_mut`]).
    #[must_use]
    pub fn stdin(mut self, stdin: Stdio) -> Launch {
        self.stdin = Some(stdin);
        self
    }

    /// Where the daemon's log (its standard error) goes.
    #[must_use]
    pub fn stderr(mut self, stderr: Stdio) -> Launch {
        self.stderr = Some(stderr);
        self
    }

    /// Runs `program args` first, followed by the daemon's whole command line: the wrapper must `exec` the
    /// daemon in its place, since the registration is waited for by the pid started.
    #[must_use]
    pub fn exec_through<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(
        mut self,
        program: impl Into<PathBuf>,
        args: I,
    ) -> Launch {
        let args = args.into_iter().map(|arg| arg.as_ref().to_owned()).collect();
        self.wrapper = Some((program.into(), args));
        self
    }

    /// The bound on the wait for the registration (else [`START_DEADLINE`]).
    #[must_use]
    pub fn deadline(mut self, deadline: Duration) -> Launch {
        self.deadline = deadline;
        self
    }

    /// How long the daemon has to exit after SIGTERM when the handle is dropped, before it is killed (else
    /// [`STOP_GRACE`]; zero kills it at once).
    #[must_use]
    pub fn stop_grace(mut self, grace: Duration) -> Launch {
        self.stop_grace = grace;
        self
    }

    /// Spawns the daemon and waits for its registration: a `REGISTRATION_FILE` in `runtime_dir/name` that
    /// decodes and names the pid started. A daemon that fails to register is killed and reaped.
    ///
    /// # Errors
    ///
    /// [`LaunchError::Spawn`] when the program cannot be run, [`LaunchError::Exited`] when it exits before
    /// registering, [`LaunchError::NoRegistration`] when the deadline passes first, [`LaunchError::Watch`] or
    /// [`LaunchError::Reap`] when waiting fails.
    pub fn start(mut self) -> Result<LaunchedDaemon, LaunchError> {
        let root = match &self.current_dir {
            Some(dir) => dir.join(&self.runtime_dir),
            None => std::env::current_dir()
                .map_err(|cause| LaunchError::Watch { what: "the working directory".to_owned(), cause })?
                .join(&self.runtime_dir),
        };
        let mut command = self.command();
        let mut child = command.spawn().map_err(|cause| {
            let program = self.wrapper.as_ref().map_or(&self.program, |(wrapper, _)| wrapper).clone();
            LaunchError::Spawn { program, cause }
        })?;
        let waited = wait::pidfd(&child).and_then(|pidfd| {
            let registration = wait::registration(&mut child, &pidfd, &root, &self.name, self.deadline)?;
            Ok((pidfd, registration))
        });
        match waited {
            Ok((pidfd, registration)) => {
                let dir = root.join(&self.name);
                Ok(LaunchedDaemon { child, pidfd, registration, dir, stop_grace: self.stop_grace })
            }
            Err(error) => {
                // It never became usable: no grace.
                let _ = child.kill();
                let _ = child.wait();
                Err(error)
            }
        }
    }

    /// The command line, environment and standard streams.
    fn command(&mut self) -> Command {
        let mut command = match &self.wrapper {
            Some((wrapper, args)) => {
                let mut command = Command::new(wrapper);
                command.args(args).arg(&self.program);
                command
            }
            None => Command::new(&self.program),
        };
        command.arg("daemon").arg("--name").arg(&self.name).arg("--runtime-dir").arg(&self.runtime_dir);
        command.args(&self.args);
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        command.stdin(self.stdin.take().unwrap_or_else(Stdio::null));
        command.stdout(Stdio::null());
        command.stderr(self.stderr.take().unwrap_or_else(Stdio::null));
        command
    }
}

/// A daemon [`Launch::start`] started and saw register. Dropping it stops the daemon (SIGTERM, then SIGKILL
/// after the stop grace) and reaps it, unless it has already exited.
#[derive(Debug)]
pub struct LaunchedDaemon {
    child: Child,
    /// The child's pidfd: readable once it has exited.
    pidfd: OwnedFd,
    /// The registration it wrote.
    registration: Registration,
    /// `runtime_dir/name`.
    dir: PathBuf,
    stop_grace: Duration,
}

impl LaunchedDaemon {
    /// The registration the daemon wrote when it started.
    pub fn registration(&self) -> &Registration {
        &self.registration
    }

    /// The daemon's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its runtime directory (`runtime_dir/name`, made absolute).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The process itself: its stdin when piped, or to kill and reap it by hand.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// How the daemon ended, once it has (reaping it); `None` while it runs.
    ///
    /// # Errors
    ///
    /// [`LaunchError::Reap`] when waiting fails.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>, LaunchError> {
        self.child.try_wait().map_err(LaunchError::Reap)
    }

    /// Waits at most `within` for the daemon to exit, and reaps it; `None` when it still runs then.
    ///
    /// # Errors
    ///
    /// [`LaunchError::Watch`] or [`LaunchError::Reap`] when waiting fails.
    pub fn wait_exit(&mut self, within: Duration) -> Result<Option<ExitStatus>, LaunchError> {
        wait::exit(&mut self.child, &self.pidfd, within)
    }

    /// Sends `signal` to the daemon unless it has exited (and been reaped).
    ///
    /// # Errors
    ///
    /// [`LaunchError::Reap`] when it cannot be signalled.
    pub fn signal(&mut self, signal: Signal) -> Result<(), LaunchError> {
        if self.try_wait()?.is_none() {
            let pid = i32::try_from(self.child.id()).map_err(|e| LaunchError::Reap(std::io::Error::other(e)))?;
            kill(Pid::from_raw(pid), signal).map_err(|e| LaunchError::Reap(e.into()))?;
        }
        Ok(())
    }

    /// Stops the daemon: SIGTERM and at most `grace` to exit, then SIGKILL (at once when `grace` is zero);
    /// always reaps it. Returns how it ended.
    ///
    /// # Errors
    ///
    /// [`LaunchError::Reap`] when the last wait fails. A failure to signal or watch it only ends the grace.
    pub fn stop(&mut self, grace: Duration) -> Result<ExitStatus, LaunchError> {
        if !grace.is_zero()
            && let Ok(Some(status)) = self.signal(Signal::SIGTERM).and_then(|()| self.wait_exit(grace))
        {
            return Ok(status);
        }
        let _ = self.child.kill();
        self.child.wait().map_err(LaunchError::Reap)
    }

    /// Kills the daemon at once (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LaunchedDaemon {
    /// Stops a daemon still running, the orderly way first (see [`LaunchedDaemon::stop`]).
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.stop(self.stop_grace);
        }
    }
}

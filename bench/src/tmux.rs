//! tmux as the baseline: one private server per use (its own socket in the work directory, no configuration
//! file), detached sessions of a given size running a shell command, the server's pid for `/proc`, and
//! `kill-server` when done or dropped, so no tmux outlives the run. Sessions keep tmux's defaults
//! (`history-limit` 2000).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::fifo::{Finish, Gate, quote};
use crate::system;
use crate::workload::CatRun;

/// How long one tmux command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// What the report says where tmux is missing.
pub(crate) const MISSING: &str = "tmux not installed";

/// `tmux -V`, or `None` when tmux cannot be run.
pub(crate) fn version() -> Option<String> {
    let output = system::run(Command::new("tmux").arg("-V"), COMMAND_TIMEOUT).ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// A private tmux server with one idle session (`keep`) that holds it up.
#[derive(Debug)]
pub(crate) struct Tmux {
    /// The server's socket (`-S`).
    socket: PathBuf,
    /// Whether `kill-server` is still to be done.
    running: bool,
}

impl Tmux {
    /// Starts a server on `dir/name.sock` with an idle 80x24 session.
    pub(crate) fn start(dir: &Path, name: &str) -> Result<Tmux> {
        let mut tmux = Tmux { socket: dir.join(format!("{name}.sock")), running: true };
        tmux.run(&["new-session", "-d", "-s", "keep", "-x", "80", "-y", "24", "cat"])
            .inspect_err(|_| tmux.running = false)?;
        Ok(tmux)
    }

    /// Runs one tmux command against this server and returns its output.
    pub(crate) fn run(&self, args: &[&str]) -> Result<String> {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(&self.socket).args(["-f", "/dev/null"]).args(args).env_remove("TMUX");
        let output = system::run(&mut command, COMMAND_TIMEOUT)?;
        if !output.status.success() {
            bail!("tmux {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim());
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Starts a detached `cols` x `rows` session `name` running `shell_command` (through tmux's `sh -c`).
    pub(crate) fn new_session(&self, name: &str, cols: u16, rows: u16, shell_command: &str) -> Result<()> {
        let (cols, rows) = (cols.to_string(), rows.to_string());
        self.run(&["new-session", "-d", "-s", name, "-x", &cols, "-y", &rows, shell_command])?;
        Ok(())
    }

    /// The server's pid.
    pub(crate) fn server_pid(&self) -> Result<u32> {
        let text = self.run(&["display-message", "-p", "-t", "keep", "#{pid}"])?;
        text.trim().parse().with_context(|| format!("tmux reported pid {text:?}"))
    }

    /// The visible text of session `name`'s pane.
    pub(crate) fn capture(&self, name: &str) -> Result<String> {
        self.run(&["capture-pane", "-p", "-t", name])
    }

    /// Kills the server and everything in it.
    pub(crate) fn stop(mut self) -> Result<()> {
        self.running = false;
        self.run(&["kill-server"]).map(|_| ())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        if self.running {
            let _ = self.run(&["kill-server"]);
        }
    }
}

impl Tmux {
    /// The tmux side of the ingest and scale cases: `count` detached 80x24 sessions each `cat` `file` once,
    /// all released at one moment by a gate; returns that moment and when each session's `cat` finished (tmux
    /// has read all but at most one PTY buffer by then). The sessions end by themselves.
    pub(crate) fn cat_at_once(&self, dir: &Path, count: usize, file: &Path, limit: Duration) -> Result<CatRun> {
        let mut gate = Gate::new(&dir.join("gate"))?;
        let mut finish = Finish::new(&dir.join("done"), count)?;
        let prefix = dir.file_name().map_or_else(|| "cat".into(), |name| name.to_string_lossy().into_owned());
        for i in 0..count {
            let command = format!("{}; cat {}; {}", gate.wait_command(), quote(file), finish.report_command(i));
            self.new_session(&format!("{prefix}-{i}"), 80, 24, &command)?;
        }
        let started = gate.open(count)?;
        let ends = tokio::task::block_in_place(|| finish.wait(count, limit))?;
        Ok(CatRun { started, ends, cpu: None })
    }
}

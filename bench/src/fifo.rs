//! Start and finish lines made of FIFOs, so that many terminals (ours or tmux's) start at one moment and each
//! reports its own end as an event, without polling. The harness holds both FIFOs open for reading and writing,
//! so a shell's `open` never blocks and a late shell still finds its line.
//!
//! A child waits at the gate with `read _ < GATE` (the shell's `read` takes one byte at a time from a pipe, so
//! each newline releases exactly one child) and reports its end with `echo N > DONE`, one line under
//! `PIPE_BUF`, written atomically.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::sys::stat::Mode;
use nix::unistd::mkfifo;

/// Creates a FIFO at `path` and opens it for reading and writing.
fn open_fifo(path: &Path) -> Result<File> {
    mkfifo(path, Mode::S_IRUSR | Mode::S_IWUSR).with_context(|| format!("mkfifo {}", path.display()))?;
    Ok(OpenOptions::new().read(true).write(true).open(path)?)
}

/// Quotes a path for `sh -c`.
pub(crate) fn quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// The start line.
#[derive(Debug)]
pub(crate) struct Gate {
    /// Where children wait.
    path: PathBuf,
    /// The harness's end.
    file: File,
}

impl Gate {
    /// A new gate at `path`.
    pub(crate) fn new(path: &Path) -> Result<Gate> {
        Ok(Gate { path: path.to_owned(), file: open_fifo(path)? })
    }

    /// The shell words that wait at this gate.
    pub(crate) fn wait_command(&self) -> String {
        format!("read _ < {}", quote(&self.path))
    }

    /// Releases `count` children and returns the moment it did.
    pub(crate) fn open(&mut self, count: usize) -> Result<Instant> {
        let lines = vec![b'\n'; count];
        let now = Instant::now();
        self.file.write_all(&lines)?;
        Ok(now)
    }
}

/// The finish line: each child writes its number when done; a thread timestamps each line as it arrives.
#[derive(Debug)]
pub(crate) struct Finish {
    /// Where children report.
    path: PathBuf,
    /// The harness's end for writing, used to end the reading thread early.
    file: File,
    /// Arrivals: (child number, when read).
    arrivals: mpsc::Receiver<(usize, Instant)>,
}

impl Finish {
    /// A new finish line at `path` expecting `count` children.
    pub(crate) fn new(path: &Path, count: usize) -> Result<Finish> {
        let file = open_fifo(path)?;
        let reader = BufReader::new(file.try_clone()?);
        let (send, arrivals) = mpsc::channel();
        std::thread::Builder::new().name("finish-line".into()).spawn(move || {
            for line in reader.lines().take(count) {
                let Ok(line) = line else { return };
                // Anything but a number (the harness's own wake-up) counts as no arrival.
                if let Ok(number) = line.trim().parse::<usize>()
                    && send.send((number, Instant::now())).is_err()
                {
                    return;
                }
            }
        })?;
        Ok(Finish { path: path.to_owned(), file, arrivals })
    }

    /// The shell words that report child `number` as done.
    pub(crate) fn report_command(&self, number: usize) -> String {
        format!("echo {number} > {}", quote(&self.path))
    }

    /// Waits for `count` arrivals within `limit`: when each child reported, by child number.
    pub(crate) fn wait(&mut self, count: usize, limit: Duration) -> Result<Vec<Instant>> {
        let deadline = Instant::now() + limit;
        let mut done: Vec<Option<Instant>> = vec![None; count];
        for _ in 0..count {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok((number, at)) = self.arrivals.recv_timeout(left) else {
                // Let the reading thread finish: one line for every child that did not report.
                let _ = self.file.write_all(&b"x\n".repeat(count));
                bail!("only {} of {count} children finished within {limit:?}", done.iter().flatten().count());
            };
            *done.get_mut(number).context("a child number out of range")? = Some(at);
        }
        Ok(done.into_iter().flatten().collect())
    }
}

//! `play`: starts a new daemon, owns it, and runs an interactive playground on stdin/stdout. Leaving the
//! playground (`quit`, or the end of its input) drops ownership, which stops the daemon and its processes.

use std::num::NonZeroU16;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use opencode_pty_client::{Client, CreatePipe, CreatePty, Event, Mode, Owner, Response, Role, Signal, Takeover};

use super::escape::{parse_escapes, show_bytes};
use super::observe::{describe, table};
use super::prompt::Input;

/// How long `play` waits for the daemon it started to publish its registration.
pub(super) const START_WAIT: Duration = Duration::from_secs(5);

/// How long `run` waits for the screen to settle after sending a command.
const SETTLE_MAX: Duration = Duration::from_secs(5);

/// How long the output must stay still for the screen to count as settled.
const SETTLE_QUIET: Duration = Duration::from_millis(150);

/// How long the playground waits for its daemon to exit after giving up ownership.
const EXIT_WAIT: Duration = Duration::from_secs(10);

const HELP: &str = "commands:
  new [PROGRAM ARGS...]   start a terminal (default: $SHELL or /bin/sh) and use it
  list                    list the processes: id, mode, pid, size (a pipe's line count), state, output
                          bytes, command
  use ID                  make ID the current terminal
  run COMMAND             type COMMAND and Enter, then show the screen
  send TEXT               type TEXT (escapes: \\r \\n \\t \\e \\\\ \\xHH)
  screen [ID]             show the screen
  rows [N]                show the last N rows, history included
  replay [OFFSET]         show the raw output kept from OFFSET
  resize COLS ROWS        resize the current terminal
  rename [TITLE]          set (or clear) the user title
  wait [MS]               pause (default 250 ms)
  kill [ID]               terminate a process
  pipe FILE PROGRAM ARGS  start a pipe process (no terminal) writing stdout and stderr to FILE
  info ID                 describe a process (JSON)
  await ID                wait until pipe process ID exits and show how
  signal ID SIGNAL        send SIGTERM, SIGINT or SIGKILL to pipe process ID
  demo                    a program asks the terminal where its cursor is, and the daemon's emulator answers
  upgrade [PATH]          upgrade the daemon in place to the binary at PATH (default: its own file on disk);
                          terminals and their output go on
  help                    this text
  quit, exit              stop the daemon and leave (so do Ctrl-D, and Ctrl-C twice at an empty prompt)";

/// The rest of `help`: the commands that use the playground's daemon from another terminal.
fn elsewhere(location: &str) -> String {
    format!(
        "from another terminal, while the playground runs:
  opencode-pty attach ID {location}   use terminal ID there: its screen, your keys (Ctrl-\\ twice detaches)
  opencode-pty watch ID {location}    copy process ID's output there as it comes
  opencode-pty list {location}        the processes (`opencode-pty --help`: every command)"
    )
}

/// The playground's state.
struct Play {
    client: Client,
    current: Option<u64>,
    /// The daemon's `--name` (and `--runtime-dir` when it is not the default), for the commands `help` suggests.
    location: String,
}

/// Runs the playground for a new daemon in `root/name`.
pub(super) async fn play(root: &Path, name: &str) -> anyhow::Result<ExitCode> {
    let dir = root.join(name);
    // How the commands `help` (and the refusal below) suggest name this daemon.
    let mut location = format!("--name {name}");
    if root != opencode_pty::default_root() {
        location += &format!(" --runtime-dir {}", shlex::try_quote(&root.display().to_string())?);
    }
    if let Ok(running) = Client::discover(&dir).await {
        bail!(
            "a daemon already runs in {} (pid {}): play with another `--name`, or stop that one first \
             (`opencode-pty stop {location}`, or `quit` in its playground)",
            dir.display(),
            running.registration().pid
        );
    }
    let mut daemon = start_daemon(root, name)?;
    let (client, mut owner) = match connect(&dir, &mut daemon).await {
        Ok(connected) => connected,
        // It said why on its stderr, which is ours: once is enough.
        Err(Start::Exited(status)) if status.code() == Some(1) => return Ok(ExitCode::FAILURE),
        Err(error) => {
            let _ = daemon.kill();
            let _ = daemon.wait();
            return Err(error.into());
        }
    };
    println!("playground: daemon pid {} in {} (type `help`)", daemon.id(), dir.display());
    let mut play = Play { client, current: None, location };
    let mut input = Input::new()?;
    loop {
        // The owner channel closes when the daemon goes (stopped from elsewhere, killed): say so and leave,
        // rather than answer every later command with a connection error.
        let line = tokio::select! {
            line = input.next() => line?,
            _ = owner.closed() => return Err(daemon_gone(&mut daemon).await),
        };
        let Some(line) = line else { break };
        let line = line.trim();
        if matches!(line, "quit" | "exit") {
            break;
        }
        if line.is_empty() {
            continue;
        }
        // The owner channel's own request: the playground owns the daemon.
        if let Some(path) = line.strip_prefix("upgrade").filter(|rest| rest.is_empty() || rest.starts_with(' ')) {
            match upgrade(&mut owner, path.trim()).await {
                Ok(done) => println!("{done}"),
                Err(error) => println!("error: {error:#}"),
            }
            continue;
        }
        if let Err(error) = play.command(line).await {
            println!("error: {error:#}");
        }
    }
    // Giving up ownership stops the daemon.
    drop(owner);
    let deadline = Instant::now() + EXIT_WAIT;
    loop {
        if let Some(status) = daemon.try_wait()? {
            println!("daemon stopped ({status})");
            return Ok(ExitCode::SUCCESS);
        }
        if Instant::now() >= deadline {
            let _ = daemon.kill();
            let _ = daemon.wait();
            bail!("the daemon did not stop within {EXIT_WAIT:?}; killed it");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `upgrade [PATH]`: the daemon re-executes itself from PATH (relative to the playground's directory), or from
/// its own executable, and answers once the new image serves requests.
async fn upgrade(owner: &mut Owner, path: &str) -> anyhow::Result<String> {
    let program = match path {
        "" => None,
        path => Some(PathBuf::from(absolute(&std::env::current_dir().context("no current directory")?, path))),
    };
    owner.upgrade(program.as_deref()).await?;
    Ok(match program {
        Some(program) => format!("upgraded in place to {}", program.display()),
        None => "upgraded in place to the daemon's own executable".to_owned(),
    })
}

/// Why the playground leaves when its daemon went away, with how the daemon ended once it has.
async fn daemon_gone(daemon: &mut Child) -> anyhow::Error {
    let deadline = Instant::now() + EXIT_WAIT;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = daemon.try_wait() {
            return anyhow::anyhow!("the daemon is gone ({status}); leaving the playground");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    anyhow::anyhow!("the daemon closed the owner channel; leaving the playground")
}

/// Starts `opencode-pty daemon` for `root/name` in the background, in a process group of its own: the
/// terminal's Ctrl-C and hangup reach the playground only, and the daemon learns of them the orderly way, by
/// its owner channel closing when the playground ends.
fn start_daemon(root: &Path, name: &str) -> anyhow::Result<Child> {
    let exe: PathBuf = std::env::current_exe().context("cannot find the opencode-pty binary")?;
    Command::new(exe)
        .process_group(0)
        .args(["daemon", "--name", name, "--runtime-dir"])
        .arg(root)
        // Its start-up line says it waits for an owner: the playground claims it at once, so only warnings show.
        .env("RUST_LOG", std::env::var_os("RUST_LOG").unwrap_or_else(|| "warn".into()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot start the daemon")
}

/// Why the new daemon could not be used.
#[derive(Debug, thiserror::Error)]
enum Start {
    /// It exited first (having said why on stderr).
    #[error("the daemon exited before it could be used ({0})")]
    Exited(std::process::ExitStatus),
    /// Anything else.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

/// Waits for the new daemon's registration, then claims it.
async fn connect(dir: &Path, daemon: &mut Child) -> Result<(Client, Owner), Start> {
    let deadline = Instant::now() + START_WAIT;
    loop {
        if let Some(status) = daemon.try_wait().context("cannot wait for the daemon")? {
            return Err(Start::Exited(status));
        }
        if let Ok(client) = Client::discover(dir).await
            && client.registration().pid == daemon.id()
        {
            let owner = client.own(None).await.context("cannot own the new daemon")?;
            return Ok((client, owner));
        }
        if Instant::now() >= deadline {
            return Err(
                anyhow::anyhow!("the daemon did not register in {} within {START_WAIT:?}", dir.display()).into()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

impl Play {
    fn current(&self, given: Option<&str>) -> anyhow::Result<u64> {
        match given {
            Some(id) => id.parse().with_context(|| format!("not a process id: {id}")),
            None => self.current.context("no current terminal: use `new` or `use ID`"),
        }
    }

    async fn command(&mut self, line: &str) -> anyhow::Result<()> {
        let (word, rest) = line.split_once(' ').map_or((line, ""), |(w, r)| (w, r.trim()));
        let arg = (!rest.is_empty()).then_some(rest);
        match word {
            "help" => println!("{HELP}\n\n{}", elsewhere(&self.location)),
            "new" => {
                let mut words = words(rest)?.into_iter();
                let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
                let program = words.next().unwrap_or(shell);
                let id = self.new_terminal(program, words.collect()).await?;
                println!("started process {id}");
            }
            "list" => {
                let mut processes = self.client.list(Mode::Pty).await?;
                processes.extend(self.client.list(Mode::Pipe).await?);
                table(&mut processes).iter().for_each(|line| println!("{line}"));
            }
            "use" => {
                let id = self.current(arg)?;
                self.client.get(id).await?;
                self.current = Some(id);
            }
            "run" => {
                let id = self.current(None)?;
                let before = self.client.get(id).await?.output_tail;
                self.client.write(id, None, format!("{rest}\r").as_bytes()).await?;
                self.settle(id, before).await?;
                self.show_screen(id).await?;
            }
            "send" => self.client.write(self.current(None)?, None, &parse_escapes(rest)?).await?,
            "screen" => self.show_screen(self.current(arg)?).await?,
            "rows" => {
                let rows = arg.map(|n| n.parse::<NonZeroU16>()).transpose().context("rows must be 1 to 65535")?;
                let read = self.client.read_rows(self.current(None)?, rows).await?;
                read.lines.iter().for_each(|line| println!("{line}"));
            }
            "replay" => {
                let offset = arg.map(str::parse).transpose().context("not an offset")?.unwrap_or(0);
                let replay = self.client.replay(self.current(None)?, offset).await?;
                let lost = if replay.truncated { " (older output was dropped)" } else { "" };
                println!("{}..{}{lost}", replay.available_offset, replay.end_offset);
                println!("{}", show_bytes(&replay.bytes));
            }
            "resize" => {
                let mut numbers = rest.split_whitespace().map(str::parse::<NonZeroU16>);
                let (Some(Ok(cols)), Some(Ok(rows)), None) = (numbers.next(), numbers.next(), numbers.next()) else {
                    bail!("usage: resize COLS ROWS");
                };
                self.client.resize(self.current(None)?, None, cols, rows).await?;
            }
            "rename" => self.client.rename(self.current(None)?, arg).await?,
            "wait" => {
                let ms = arg.map(str::parse).transpose().context("not a number of milliseconds")?.unwrap_or(250);
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            "kill" => {
                let id = self.current(arg)?;
                self.client.terminate(id).await?;
                if self.current == Some(id) {
                    self.current = None;
                }
                println!("terminated process {id}");
            }
            "demo" => self.demo().await?,
            "pipe" => {
                let mut words = words(rest)?.into_iter();
                let (Some(file), Some(program)) = (words.next(), words.next()) else {
                    bail!("usage: pipe FILE PROGRAM [ARGS...]");
                };
                let cwd = std::env::current_dir().context("no current directory")?;
                let mut params = CreatePipe::new(program, cwd.display().to_string(), absolute(&cwd, &file));
                params.args = words.collect();
                // A pipe process gets exactly this environment; the playground passes its own on.
                params.env = std::env::vars().collect();
                let process = self.client.create_pipe(params).await?;
                println!("started pipe process {} writing to {}", process.id, absolute(&cwd, &file));
            }
            "info" => {
                let process = self.client.get(self.current(arg)?).await?;
                println!("{}", describe(&process));
                println!("{}", serde_json::to_string_pretty(&process)?);
            }
            "await" => {
                let exited = self.client.wait(self.current(arg)?).await?;
                let how = match (&exited.exit_code, &exited.signal) {
                    (Some(code), _) => format!("exit code {code}"),
                    (None, Some(signal)) => format!("killed by {signal}"),
                    (None, None) => "unknown status".to_owned(),
                };
                let lines = exited.output_lines.map_or(String::new(), |n| format!(", {n} lines"));
                println!("exited: {how}, {} bytes{lines}", exited.final_offset);
            }
            "signal" => {
                let mut words = rest.split_whitespace();
                let (Some(id), Some(signal), None) = (words.next(), words.next(), words.next()) else {
                    bail!("usage: signal ID SIGTERM|SIGINT|SIGKILL");
                };
                let signal: Signal = serde_json::from_value(serde_json::Value::String(signal.to_owned()))
                    .with_context(|| format!("unknown signal {signal}: use SIGTERM, SIGINT or SIGKILL"))?;
                self.client.signal(self.current(Some(id))?, signal).await?;
            }
            other => bail!("unknown command {other:?} (type `help`)"),
        }
        Ok(())
    }

    async fn new_terminal(&mut self, program: String, args: Vec<String>) -> anyhow::Result<u64> {
        let cwd = std::env::current_dir().map_or("/".into(), |d| d.display().to_string());
        let mut params = CreatePty::new(program, cwd);
        params.args = args;
        params.cols = NonZeroU16::new(100).unwrap_or(NonZeroU16::MIN);
        params.rows = NonZeroU16::new(30).unwrap_or(NonZeroU16::MIN);
        let process = self.client.create_pty(params).await?;
        self.current = Some(process.id);
        Ok(process.id)
    }

    /// Waits until the output has grown past `before` (the echo of what was typed, at least) and then stopped
    /// growing for [`SETTLE_QUIET`], at most [`SETTLE_MAX`] in all.
    async fn settle(&self, id: u64, before: u64) -> anyhow::Result<()> {
        let deadline = Instant::now() + SETTLE_MAX;
        let mut last = (before, Instant::now());
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(30)).await;
            let tail = self.client.get(id).await?.output_tail;
            if tail != last.0 {
                last = (tail, Instant::now());
            } else if tail != before && last.1.elapsed() >= SETTLE_QUIET {
                break;
            }
        }
        Ok(())
    }

    async fn show_screen(&self, id: u64) -> anyhow::Result<()> {
        let snapshot = self.client.snapshot(id).await?;
        let title = snapshot.process.pty.map(|p| p.title).unwrap_or_default();
        println!("--- process {id}: {title} (cursor {},{})", snapshot.cursor_x, snapshot.cursor_y);
        println!("{}", snapshot.text.trim_end_matches('\n'));
        println!("---");
        Ok(())
    }

    /// A child asks where the cursor is (`ESC [ 6 n`); nobody but the daemon's emulator can answer, and the
    /// child prints the answer it read.
    async fn demo(&mut self) -> anyhow::Result<()> {
        let script = "stty raw -echo; printf '\\033[6n'; reply=$(dd bs=1 count=6 2>/dev/null); \
                      printf '\\r\\nthe child asked for the cursor position and read back:\\r\\n'; \
                      printf '%s' \"$reply\" | od -An -c; printf '\\r\\n'";
        let id = self.new_terminal("sh".into(), vec!["-c".into(), script.into()]).await?;
        let mut subscription =
            self.client.subscribe(id, 0, "playground-demo", Role::Observer, Takeover::Refuse).await?;
        let deadline = tokio::time::Instant::now() + SETTLE_MAX * 5;
        loop {
            match tokio::time::timeout_at(deadline, subscription.next()).await {
                Ok(Some(Ok(Event::Message(message)))) if matches!(*message, Response::Exited { .. }) => break,
                Ok(Some(Ok(_))) => {}
                Ok(Some(Err(error))) => return Err(error.into()),
                Ok(None) => bail!("the demo's subscription ended early"),
                Err(_) => bail!("the demo did not finish in time"),
            }
        }
        self.show_screen(id).await
    }
}

/// `file` made absolute against `cwd`.
fn absolute(cwd: &Path, file: &str) -> String {
    cwd.join(file).display().to_string()
}

/// A command's words, split as a shell splits them: `'...'` and `"..."` quote, `\\` escapes (so
/// `new sh -c 'echo a; echo b'` passes one argument after `-c`).
fn words(text: &str) -> anyhow::Result<Vec<String>> {
    shlex::split(text).context("unbalanced quotes")
}

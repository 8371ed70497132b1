//! The commands that observe or operate a running daemon: `status`, `list`, `watch` and `stop`. They find it
//! through its registration (refusing another protocol, then pinging it) and never start one.

use std::io::Write;
use std::num::NonZeroU16;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use opencode_pty_client::{
    Client, Event, InputWait, Mode, OptIn, Pong, ProcessInfo, Response, Role, ShellStateState, Takeover,
};
use opencode_pty_protocol::Lifecycle;
use tokio::io::AsyncWriteExt;

/// How long `stop` waits for the daemon to be gone after `shutdown` (its own cleanup is bounded by 5 s).
pub(super) const STOP_WAIT: Duration = Duration::from_secs(10);

/// How often `stop` checks whether the daemon is gone.
const STOP_POLL: Duration = Duration::from_millis(50);

/// The daemon of `dir`, found and verified.
pub(super) async fn discover(dir: &Path) -> anyhow::Result<Client> {
    if !dir.join(opencode_pty_client::REGISTRATION_FILE).exists() {
        let name = dir.file_name().map_or_else(|| "NAME".into(), |name| name.to_string_lossy());
        bail!(
            "no running daemon found in {} (it has no registration): `opencode-pty play --name {name}` starts one \
             and plays with it, and `opencode-pty status` without `--name` lists the running ones",
            dir.display()
        );
    }
    Client::discover(dir).await.with_context(|| format!("cannot reach the daemon registered in {}", dir.display()))
}

/// How `status` and `list` print: lines for people, or one JSON value for scripts (`--json`), in the protocol's
/// own shapes: `list` the `processes` answer, `status` the `pong` answer with what the daemon was asked besides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// Plain lines.
    Text,
    /// One JSON value on one line.
    Json,
}

impl Format {
    /// The format the `--json` flag asks for.
    pub(super) fn from_json_flag(json: bool) -> Format {
        if json { Format::Json } else { Format::Text }
    }
}

/// `status`: who the daemon is and how many processes it runs.
pub(super) async fn status(dir: &Path, format: Format) -> anyhow::Result<()> {
    let client = discover(dir).await?;
    let pong = client.ping().await?;
    let (ptys, pipes) = (client.list(Mode::Pty).await?.len(), client.list(Mode::Pipe).await?.len());
    let registration = client.registration();
    if format == Format::Json {
        println!("{}", status_json(pong, &registration.socket, dir, (ptys, pipes))?);
    } else {
        println!("daemon pid {} instance {} (protocol {})", pong.pid, pong.instance_id, pong.protocol);
        println!("runtime directory {}", dir.display());
        println!("socket {}", registration.socket);
        println!("{ptys} pty and {pipes} pipe processes");
    }
    Ok(())
}

/// `status --json`: the daemon's `pong` answer as the protocol's type serialises it (`type`, `instance_id`,
/// `pid`, `protocol`, `features`), with the registration's `socket`, the `runtime_dir` and the count of each
/// mode's `processes` (`{"pty": N, "pipe": M}`) added, so that a protocol client's parser reads it as a `pong`.
fn status_json(pong: Pong, socket: &str, dir: &Path, (ptys, pipes): (usize, usize)) -> anyhow::Result<String> {
    let mut value = serde_json::to_value(Response::from(pong))?;
    let members = value.as_object_mut().context("a pong is a JSON object")?;
    members.insert("socket".into(), socket.into());
    members.insert("runtime_dir".into(), dir.to_string_lossy().into());
    members.insert("processes".into(), serde_json::json!({"pty": ptys, "pipe": pipes}));
    Ok(value.to_string())
}

/// One daemon found by [`status_all`].
struct Found {
    name: String,
    /// The pid its registration names.
    pid: Option<u32>,
    /// Its terminals and pipe processes, or why it could not be asked.
    counts: Result<(usize, usize), String>,
    /// Whether it is known to have been claimed: false while it is young enough to be waiting for its first owner.
    claimed: bool,
}

/// `status` without `--name`: every daemon whose registration is under `root`, by name, with its pid, its
/// processes and whether it has an owner.
pub(super) async fn status_all(root: &Path, format: Format) -> anyhow::Result<()> {
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            println!(
                "{}",
                if format == Format::Json { "[]".to_owned() } else { format!("no daemons in {}", root.display()) }
            );
            return Ok(());
        }
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", root.display())),
    };
    let mut dirs: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().join(opencode_pty_client::REGISTRATION_FILE).is_file())
        .map(|entry| entry.path())
        .collect();
    dirs.sort();
    let mut found = Vec::with_capacity(dirs.len());
    for dir in dirs {
        found.push(ask(&dir).await);
    }
    if format == Format::Json {
        let value: Vec<_> = found
            .iter()
            .map(|daemon| {
                let (counts, error) = match &daemon.counts {
                    Ok((ptys, pipes)) => (serde_json::json!({"pty": ptys, "pipe": pipes}), None),
                    Err(error) => (serde_json::Value::Null, Some(error)),
                };
                serde_json::json!({"name": daemon.name, "pid": daemon.pid, "processes": counts,
                                   "claimed": daemon.claimed.then_some(true), "error": error})
            })
            .collect();
        println!("{}", serde_json::Value::Array(value));
        return Ok(());
    }
    if found.is_empty() {
        println!("no daemons in {}", root.display());
        return Ok(());
    }
    println!("{:<20} {:<8} {:<6} {:<6} OWNER", "NAME", "PID", "PTYS", "PIPES");
    for daemon in &found {
        let pid = daemon.pid.map_or("-".to_owned(), |pid| pid.to_string());
        let owner = if daemon.claimed { "yes" } else { "not yet known (started under 5 s ago)" };
        match &daemon.counts {
            Ok((ptys, pipes)) => println!("{:<20} {pid:<8} {ptys:<6} {pipes:<6} {owner}", daemon.name),
            Err(error) => println!("{:<20} {pid:<8} -      -      - ({error})", daemon.name),
        }
    }
    Ok(())
}

/// What one runtime directory's daemon says about itself.
async fn ask(dir: &Path) -> Found {
    let name = dir.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let registration = dir.join(opencode_pty_client::REGISTRATION_FILE);
    let counts = async {
        let client = Client::discover(dir).await?;
        Ok::<_, opencode_pty_client::ClientError>((
            client.registration().pid,
            client.list(Mode::Pty).await?.len(),
            client.list(Mode::Pipe).await?.len(),
        ))
    }
    .await;
    match counts {
        Ok((pid, ptys, pipes)) => {
            // A daemon nobody claims stops at its deadline; one running longer has an owner (or, for at most a
            // handoff's life after its owner left, a successor on the way). The registration is written at the
            // start.
            let age = std::fs::metadata(&registration).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
            let claimed = age.is_some_and(|age| age >= opencode_pty_protocol::OWNER_DEADLINE);
            Found { name, pid: Some(pid), counts: Ok((ptys, pipes)), claimed }
        }
        Err(error) => Found { name, pid: None, counts: Err(format!("not answering: {error}")), claimed: false },
    }
}

/// `list`: one line per process, PTYs then pipes, each in creation order.
pub(super) async fn list(dir: &Path, format: Format) -> anyhow::Result<()> {
    let client = discover(dir).await?;
    // What each terminal waits for, when the daemon can say (SPEC §6.4).
    let offered = &client.registration().features;
    let features: Vec<OptIn> = [("input", OptIn::Input), ("commands", OptIn::Commands)]
        .into_iter()
        .filter(|(name, _)| offered.iter().any(|f| f == name))
        .map(|(_, opt_in)| opt_in)
        .collect();
    let mut processes = client.list_with(Mode::Pty, &features).await?;
    processes.extend(client.list(Mode::Pipe).await?);
    if format == Format::Json {
        // One `processes` answer, as the protocol's type serialises it: the terminals, then the pipe processes.
        println!("{}", serde_json::to_string(&Response::Processes { next: None, processes })?);
        return Ok(());
    }
    if processes.is_empty() {
        println!("no processes");
    }
    // The command line of each shell's running command (SPEC K2).
    for process in &mut processes {
        let running = process.pty.as_ref().and_then(|pty| pty.shell.as_ref()).and_then(|shell| shell.command_id);
        if let Some(command_id) = running
            && let Ok(answer) = client.commands(process.id, NonZeroU16::new(1)).await
            && let Some(command) = answer.commands.into_iter().find(|c| c.command_id == command_id)
            && let Some(pty) = process.pty.as_mut()
        {
            // Shown in the title's place: what the terminal is busy with.
            pty.title = format!("running: {}", one_line(&command.command));
        }
    }
    table(&mut processes).iter().for_each(|line| println!("{line}"));
    Ok(())
}

/// A command line on one line, cut to 60 characters.
fn one_line(command: &str) -> String {
    let flat: String = command.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    match flat.char_indices().nth(60) {
        Some((at, _)) => format!("{}...", &flat[..at]),
        None => flat,
    }
}

/// The header of [`table`].
pub(super) const TABLE_HEADER: &str = "  ID  MODE  PID          SIZE       STATE        OUTPUT                COMMAND";

/// `processes` as lines for people: a header, then one line each in id order (nothing for none).
pub(super) fn table(processes: &mut [ProcessInfo]) -> Vec<String> {
    if processes.is_empty() {
        return Vec::new();
    }
    processes.sort_by_key(|process| process.id);
    std::iter::once(TABLE_HEADER.to_owned()).chain(processes.iter().map(describe)).collect()
}

/// One line about a process: id, mode, pid, size (a terminal's columns and rows, a pipe's line count),
/// lifecycle, how many bytes it wrote (and how many of them a terminal still keeps), and its command (quoted as
/// a shell would need it, control characters spelled out), with a PTY's title or a pipe's output file after it.
pub(super) fn describe(process: &ProcessInfo) -> String {
    let pid = process.pid.map_or("-".to_owned(), |p| p.to_string());
    // What a running terminal waits for, when the answer carries it.
    let waiting = match process.pty.as_ref().and_then(|pty| pty.input) {
        Some(Some(InputWait::Password)) => " (waits for a password)",
        Some(Some(InputWait::Line)) => " (waits for a line)",
        Some(Some(InputWait::Key)) => " (waits for keys)",
        Some(Some(InputWait::Prompt)) => " (at its prompt)",
        Some(None) | None => match process.pty.as_ref().and_then(|pty| pty.shell.as_ref()).map(|s| s.state) {
            Some(ShellStateState::Prompt) => " (at its prompt)",
            Some(ShellStateState::Running) => " (runs a command)",
            Some(ShellStateState::Starting) | None => "",
        },
    };
    let lifecycle = match &process.lifecycle {
        Lifecycle::Running => format!("running{waiting}"),
        Lifecycle::Exited { exit_code: Some(code), .. } => format!("exited {code}"),
        Lifecycle::Exited { signal: Some(signal), .. } => format!("killed by {signal}"),
        Lifecycle::Exited { .. } => "exited".to_owned(),
        Lifecycle::Failed { message } => format!("failed: {message}"),
    };
    let (head, tail) = (process.output_head, process.output_tail);
    let output = match head {
        0 => format!("{tail} bytes"),
        _ => format!("{tail} bytes, {} kept", tail - head),
    };
    let command = process.command.iter().map(|word| quote(word)).collect::<Vec<_>>().join(" ");
    let (mode, size, after) = match (&process.pty, &process.pipe) {
        (Some(pty), _) => ("pty", format!("{}x{}", pty.cols, pty.rows), format!("  [{}]", pty.title)),
        (_, Some(pipe)) => {
            let lines = if pipe.output_lines == 1 { "line" } else { "lines" };
            ("pipe", format!("{} {lines}", pipe.output_lines), format!(" > {}", pipe.output_path))
        }
        _ => ("?", String::new(), String::new()),
    };
    format!("{:>4}  {mode:<5} {pid:<12} {size:<10} {lifecycle:<12} {output:<21} {command}{after}", process.id)
}

/// `word` as a shell would need it: as it is, or quoted, or, when it holds control characters (a script's
/// newlines), in `$'...'` with each one spelled out, so that one process stays on one line.
fn quote(word: &str) -> String {
    if !word.chars().any(char::is_control) {
        // Only a word with NUL, which has a control character, could fail here.
        return shlex::try_quote(word).map_or_else(|_| word.to_owned(), |quoted| quoted.into_owned());
    }
    let mut quoted = String::from("$'");
    for c in word.chars() {
        match c {
            '\\' => quoted.push_str("\\\\"),
            '\'' => quoted.push_str("\\'"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            '\x1b' => quoted.push_str("\\e"),
            c if c.is_ascii_control() => quoted.push_str(&format!("\\x{:02x}", u32::from(c))),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => quoted.push(c),
        }
    }
    quoted.push('\'');
    quoted
}

/// `watch ID`: the raw output from offset 0 to stdout, until the process exits. A pipe process's output is
/// its file, which is followed the way `tail -f` would, to its end once the process has exited.
pub(super) async fn watch(dir: &Path, id: u64) -> anyhow::Result<()> {
    let client = discover(dir).await?;
    let process = client.get(id).await?;
    if let Some(pipe) = &process.pipe {
        return follow(&client, id, Path::new(&pipe.output_path)).await;
    }
    let attachment = format!("watch-{}", std::process::id());
    let mut subscription = client.subscribe(id, 0, &attachment, Role::Observer, Takeover::Refuse).await?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&subscription.attached().replay)?;
    stdout.flush()?;
    while let Some(event) = subscription.next().await {
        let event = match event {
            Ok(event) => event,
            // Closed without `exited`: see below why.
            Err(opencode_pty_client::ClientError::Closed) => break,
            Err(error) => return Err(error.into()),
        };
        match event {
            Event::Output { bytes, .. } => {
                stdout.write_all(&bytes)?;
                stdout.flush()?;
            }
            Event::Message(message) if matches!(*message, Response::Exited { .. }) => return Ok(()),
            // Gone on across an in-place upgrade: the output continues at the same offset.
            Event::Message(_) | Event::Resumed(_) => {}
        }
    }
    // The connection closed without `exited`: the process was terminated (it is gone), or the daemon stopped.
    match client.get(id).await {
        Err(error) if error.to_string().ends_with("not found") => bail!("process {id} was terminated"),
        Err(_) => bail!("the daemon stopped while process {id} was running"),
        Ok(_) => bail!("the subscription to process {id} ended before the process exited"),
    }
}

/// How often `watch` looks for more of a pipe process's file.
const FOLLOW_POLL: Duration = Duration::from_millis(100);

/// Copies the file at `path` to stdout as it grows, until pipe process `id` has exited and all it wrote is
/// out (the daemon closes the file before it reports the exit).
async fn follow(client: &Client, id: u64, path: &Path) -> anyhow::Result<()> {
    let mut file = tokio::fs::File::open(path).await.with_context(|| format!("cannot open {}", path.display()))?;
    let mut wait = std::pin::pin!(client.wait(id));
    let mut exited = false;
    let mut stdout = tokio::io::stdout();
    loop {
        tokio::io::copy(&mut file, &mut stdout).await.with_context(|| format!("reading {}", path.display()))?;
        stdout.flush().await?;
        if exited {
            return Ok(());
        }
        tokio::select! {
            result = &mut wait => {
                result.map_err(|error| match error.to_string().as_str() {
                    "terminated" => anyhow::anyhow!("process {id} was terminated"),
                    _ => anyhow::Error::from(error),
                })?;
                exited = true;
            }
            _ = tokio::time::sleep(FOLLOW_POLL) => {}
        }
    }
}

/// `stop`: `shutdown`, then wait until the daemon's process is gone.
pub(super) async fn stop(dir: &Path) -> anyhow::Result<()> {
    let client = discover(dir).await?;
    let pid = client.registration().pid;
    client.shutdown().await?;
    let deadline = Instant::now() + STOP_WAIT;
    while process_exists(pid) {
        if Instant::now() >= deadline {
            bail!("daemon pid {pid} is still running {STOP_WAIT:?} after shutdown");
        }
        tokio::time::sleep(STOP_POLL).await;
    }
    println!("stopped daemon pid {pid}");
    Ok(())
}

/// Whether `pid` names a live process (on Linux a zombie counts as gone: it has stopped running).
pub(super) fn process_exists(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        return opencode_pty::inspect::proc_stat(pid).is_some_and(|stat| !stat.is_dead());
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
    !matches!(nix::sys::signal::kill(pid, None), Err(nix::errno::Errno::ESRCH))
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn a_word_with_control_characters_is_spelled_out_on_one_line() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("two words"), "'two words'");
        assert_eq!(quote("echo a\necho 'b'\t\\"), "$'echo a\\necho \\'b\\'\\t\\\\'");
        assert_eq!(quote("\x1b[1m\x07\u{85}"), "$'\\e[1m\\x07\\u0085'");
    }
}

//! `attach ID`: this terminal becomes the process's terminal. The local terminal goes raw; the screen is
//! drawn from the daemon's checkpoint, then live output follows; keystrokes go to the process as its
//! controller (`--takeover` takes control from another attachment; `--observe` only watches); the process's
//! size follows the local terminal (SIGWINCH); Ctrl-\ twice detaches and leaves the process running; when the
//! process exits the local terminal is restored and the exit shown, and `attach` exits with its code.

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use opencode_pty::DAEMON_STOPPING;
use opencode_pty_client::{Client, ClientError, Event, Response, Role, Subscription, Takeover};
use opencode_pty_protocol::Lifecycle;
use rustix::termios::{self, OptionalActions, Termios};
use tokio::io::AsyncReadExt;
use tokio::signal::unix::{SignalKind, signal};

use super::observe::{discover, process_exists};
use super::screen::ScreenTracker;

/// The detach key, pressed twice in a row: Ctrl-\ (FS). Once, it reaches the process (with the next key).
pub(super) const DETACH_KEY: u8 = 0x1c;

/// What the local terminal is reset with on leaving: the main screen, a visible cursor, no mouse reporting,
/// no bracketed paste, no keypad or cursor-key modes, the default pen.
const RESET_MODES: &[u8] =
    b"\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>\x1b[0m";

/// Clears the screen and the scrollback and homes the cursor, before a checkpoint is drawn.
const CLEAR: &[u8] = b"\x1b[H\x1b[2J\x1b[3J";

/// Clears the main screen and homes the cursor, on leaving a full-screen program (the scrollback is kept).
const CLEAR_MAIN: &[u8] = b"\x1b[H\x1b[2J";

/// How long `attach` looks for why its connection to the daemon ended (the daemon stopping, the process
/// terminated) before it reports the bare error.
const END_PROBE: Duration = Duration::from_secs(3);

/// How often it looks meanwhile.
const END_POLL: Duration = Duration::from_millis(50);

/// How this attachment takes part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Types into the process; `Takeover::Take` replaces another controller.
    Control(Takeover),
    /// Only watches.
    Observe,
}

/// The local terminal in raw mode; dropping it restores the settings it had.
struct RawTerminal {
    saved: Termios,
}

impl RawTerminal {
    fn enter() -> anyhow::Result<RawTerminal> {
        let stdin = std::io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd()).context("attach needs a terminal on stdin")?;
        let mut raw = saved.clone();
        raw.make_raw();
        termios::tcsetattr(stdin.as_fd(), OptionalActions::Flush, &raw).context("cannot make the terminal raw")?;
        Ok(RawTerminal { saved })
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(std::io::stdin().as_fd(), OptionalActions::Flush, &self.saved);
    }
}

/// The local terminal's size, columns and rows.
fn local_size() -> anyhow::Result<(u16, u16)> {
    let size = termios::tcgetwinsize(std::io::stdout().as_fd()).context("cannot read the terminal's size")?;
    Ok((size.ws_col.max(1), size.ws_row.max(1)))
}

/// How the attachment ended.
enum End {
    Detached,
    Exited { code: Option<u32>, signal: Option<String> },
    TakenOver(Option<String>),
}

/// Runs `attach` for process `id` of the daemon in `dir`.
pub(super) async fn attach(dir: &Path, id: u64, mode: Mode) -> anyhow::Result<ExitCode> {
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        bail!(
            "attach needs a terminal: run it in one (here stdin or stdout is not a terminal); \
             `opencode-pty watch {id}` copies the process's output without one"
        );
    }
    let client = discover(dir).await?;
    let attachment = format!("attach-{}", std::process::id());
    // Watched before the size is read, so that no change is lost between the two.
    let resized = signal(SignalKind::window_change()).context("cannot watch for size changes")?;
    // The screen as it is now, and the offset it shows: the subscription continues from there.
    let snapshot = client.snapshot(id).await?;
    let (role, takeover) = match mode {
        Mode::Control(takeover) => (Role::Controller, takeover),
        Mode::Observe => (Role::Observer, Takeover::Refuse),
    };
    let subscription = match client.subscribe(id, snapshot.process.output_tail, &attachment, role, takeover).await {
        Ok(subscription) => subscription,
        Err(error @ ClientError::Daemon { .. }) => return Err(refused(error, id)),
        Err(error) => return Err(ended(&client, id, error).await),
    };
    let raw = RawTerminal::enter()?;
    let mut screen = ScreenTracker::default();
    let mut out = std::io::stdout().lock();
    for part in [CLEAR, &snapshot.checkpoint, &subscription.attached().replay] {
        out.write_all(part)?;
        screen.write(part);
    }
    out.flush()?;
    drop(out);
    // An exited process has no size to follow: its `exited` event, next on the subscription, ends this.
    if role == Role::Controller && matches!(snapshot.process.lifecycle, Lifecycle::Running) {
        // A size that differs comes back as `resized` with a checkpoint for it, which redraws the screen.
        follow_size(&client, id, &attachment).await?;
    }
    let end = relay(&client, id, &attachment, role, subscription, resized, &mut screen).await;
    // Back on the main screen; from a full-screen program, a clean one with the cursor at its top, so that what
    // follows (this message, the shell's prompt) is not left wherever that screen's cursor was.
    let mut out = std::io::stdout().lock();
    out.write_all(RESET_MODES)?;
    let before = if screen.alternate() {
        out.write_all(CLEAR_MAIN)?;
        ""
    } else {
        "\r\n"
    };
    out.flush()?;
    drop(out);
    drop(raw);
    match end? {
        End::Detached => {
            println!("{before}[detached from process {id}; it is still running]");
            Ok(ExitCode::SUCCESS)
        }
        End::Exited { code, signal } => {
            let how = match (code, &signal) {
                (Some(code), _) => format!("with code {code}"),
                (None, Some(signal)) => format!("by {signal}"),
                (None, None) => "(how is not known)".to_owned(),
            };
            println!("{before}[process {id} exited {how}]");
            Ok(ExitCode::from(code.map_or(1, |code| u8::try_from(code).unwrap_or(u8::MAX))))
        }
        End::TakenOver(by) => {
            let by = by.map_or_else(|| "another attachment".to_owned(), |by| format!("attachment {by}"));
            println!("{before}[{by} took control of process {id}; detached]");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A refused subscription, with what to do about another controller.
fn refused(error: ClientError, id: u64) -> anyhow::Error {
    match &error {
        ClientError::Daemon { message } if message.starts_with(opencode_pty::ALREADY_CONTROLLED) => {
            anyhow!("process {id}: {message}; `--takeover` takes control from it, `--observe` only watches without it")
        }
        _ => error.into(),
    }
}

/// Resizes the process to the local terminal's size.
async fn follow_size(client: &Client, id: u64, attachment: &str) -> anyhow::Result<()> {
    let (cols, rows) = local_size()?;
    let resized = client.resize(id, Some(attachment), nonzero(cols), nonzero(rows)).await;
    unless_exited(client, id, resized).await
}

/// A request's failure, unless the process exited meanwhile (its controller went with it, so `write` and
/// `resize` are refused; its `exited` event, on the way, ends the attachment).
async fn unless_exited(client: &Client, id: u64, result: Result<(), ClientError>) -> anyhow::Result<()> {
    let Err(error) = result else { return Ok(()) };
    match client.get(id).await {
        Ok(process) if !matches!(process.lifecycle, Lifecycle::Running) => Ok(()),
        _ => Err(ended(client, id, error).await),
    }
}

/// Why the attachment cannot go on after `error`: the process was terminated, the daemon stopped, or the
/// error itself. A stopping daemon may still answer for a moment, so this looks again, for at most
/// [`END_PROBE`], until the daemon is gone, says it is stopping, or no longer knows the process.
async fn ended(client: &Client, id: u64, error: ClientError) -> anyhow::Error {
    let stopped = || anyhow!("the daemon stopped, and process {id} with it; attach has nothing left to show");
    let stopping = |error: &ClientError| matches!(error, ClientError::Daemon { message } if message == DAEMON_STOPPING);
    if stopping(&error) {
        return stopped();
    }
    let daemon = client.registration().pid;
    let deadline = tokio::time::Instant::now() + END_PROBE;
    loop {
        if !process_exists(daemon) {
            return stopped();
        }
        match client.get(id).await {
            Err(ClientError::Daemon { message }) if message.ends_with("not found") => {
                return anyhow!("process {id} was terminated");
            }
            Err(answer @ ClientError::Daemon { .. }) if !stopping(&answer) => return error.into(),
            // Not answering, or answering that it stops.
            Err(_) => return stopped(),
            // The daemon's own refusal stands while it runs on (another attachment took control, say).
            Ok(_) if matches!(error, ClientError::Daemon { .. }) => return error.into(),
            Ok(_) => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return anyhow::Error::from(error).context(format!("attached to process {id}"));
        }
        tokio::time::sleep(END_POLL).await;
    }
}

fn nonzero(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN)
}

/// Output to the screen, keys to the process, the size to the process, until a detach, the exit, or losing
/// control.
async fn relay(
    client: &Client,
    id: u64,
    attachment: &str,
    role: Role,
    mut subscription: Subscription,
    mut resized: tokio::signal::unix::Signal,
    screen: &mut ScreenTracker,
) -> anyhow::Result<End> {
    let mut stdin = tokio::io::stdin();
    let mut keys = [0u8; 4096];
    let mut held_detach = false;
    loop {
        tokio::select! {
            event = subscription.next() => match event {
                Some(Ok(event)) => if let Some(end) = show(event, attachment, role, screen)? {
                    return Ok(end);
                },
                Some(Err(error)) => return Err(ended(client, id, error).await),
                None => return Err(ended(client, id, ClientError::Closed).await),
            },
            read = stdin.read(&mut keys) => {
                let n = read.context("reading the keyboard")?;
                if n == 0 {
                    return Ok(End::Detached);
                }
                let mut send = Vec::with_capacity(n + 1);
                for &key in &keys[..n] {
                    match (held_detach, key == DETACH_KEY) {
                        (true, true) => return Ok(End::Detached),
                        (false, true) => held_detach = true,
                        (true, false) => {
                            send.extend_from_slice(&[DETACH_KEY, key]);
                            held_detach = false;
                        }
                        (false, false) => send.push(key),
                    }
                }
                if role == Role::Controller && !send.is_empty() {
                    let written = client.write(id, Some(attachment), &send).await;
                    unless_exited(client, id, written).await?;
                }
            },
            _ = resized.recv(), if role == Role::Controller => follow_size(client, id, attachment).await?,
        }
    }
}

/// Draws one event; the end of the attachment when the event is one (the exit, or, for a controller, another
/// attachment taking control).
fn show(event: Event, attachment: &str, role: Role, screen: &mut ScreenTracker) -> anyhow::Result<Option<End>> {
    let mut out = std::io::stdout().lock();
    match event {
        Event::Output { bytes, .. } => {
            out.write_all(&bytes)?;
            screen.write(&bytes);
        }
        Event::Message(message) => match *message {
            Response::Resized { checkpoint_base64, .. } => {
                use base64::Engine;
                let checkpoint = base64::engine::general_purpose::STANDARD
                    .decode(checkpoint_base64)
                    .context("the resize's checkpoint is not base64")?;
                for part in [CLEAR, &checkpoint] {
                    out.write_all(part)?;
                    screen.write(part);
                }
            }
            Response::Exited { exit_code, signal, .. } => return Ok(Some(End::Exited { code: exit_code, signal })),
            Response::ControllerChanged { attachment_id, .. }
                if role == Role::Controller && attachment_id.as_deref() != Some(attachment) =>
            {
                return Ok(Some(End::TakenOver(attachment_id)));
            }
            _ => {}
        },
        // The daemon was upgraded in place and the subscription went on at the same offset; a controller that
        // came back as an observer was taken over during the break.
        Event::Resumed(resumed) if role == Role::Controller && resumed.role != Role::Controller => {
            return Ok(Some(End::TakenOver(None)));
        }
        Event::Resumed(_) => {}
    }
    out.flush()?;
    Ok(None)
}

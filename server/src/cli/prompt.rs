//! The playground's input: on a terminal, a prompt with line editing and history (rustyline, on a thread of
//! its own, asked for each line only once the previous command is done, so the prompt never lands in the
//! middle of a command's output); otherwise plain lines from stdin, with no prompt, for scripts and tests. Ctrl-C
//! abandons the line; at an empty prompt, twice in a row, it leaves, as Ctrl-D does.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use rustyline::history::DefaultHistory;
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};
use tokio::sync::mpsc;

/// The prompt shown on a terminal.
const PROMPT: &str = "play> ";

/// What a Ctrl-C at an empty prompt says.
pub(super) const LEAVE_HINT: &str =
    "(Ctrl-C again leaves the playground and stops its daemon; so do Ctrl-D and `quit`)";

/// The line editor's helper, there only to note whether the line being edited is empty (the editor asks it
/// for a hint after every edit), which a Ctrl-C does not say.
struct EmptyLine {
    empty: Arc<AtomicBool>,
}

impl rustyline::hint::Hinter for EmptyLine {
    type Hint = String;

    fn hint(&self, line: &str, _: usize, _: &rustyline::Context<'_>) -> Option<String> {
        self.empty.store(line.is_empty(), Ordering::Relaxed);
        None
    }
}

impl rustyline::completion::Completer for EmptyLine {
    type Candidate = String;
}

impl rustyline::highlight::Highlighter for EmptyLine {}

impl rustyline::validate::Validator for EmptyLine {}

impl rustyline::Helper for EmptyLine {}

/// Lines typed at the prompt: how many may wait (one: the next is asked for only after this one is taken).
const TYPED_LINES: usize = 1;

/// Where the playground's commands come from.
pub(super) enum Input {
    /// Plain lines.
    Lines(Lines<BufReader<Stdin>>),
    /// The line editor's thread: each `()` sent on `ask` makes it prompt once; the line (or `None` at the end
    /// of input) comes back on `typed`. `asked` says a prompt is out and its line not yet taken.
    Editor { ask: std::sync::mpsc::Sender<()>, typed: mpsc::Receiver<Option<String>>, asked: bool },
}

impl Input {
    /// The line editor when stdin and stdout are a terminal, plain lines otherwise.
    pub(super) fn new() -> anyhow::Result<Input> {
        if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
            return Ok(Input::Lines(BufReader::new(tokio::io::stdin()).lines()));
        }
        let mut editor =
            rustyline::Editor::<EmptyLine, DefaultHistory>::new().context("cannot start the line editor")?;
        let empty = Arc::new(AtomicBool::new(true));
        editor.set_helper(Some(EmptyLine { empty: empty.clone() }));
        let (ask, asked) = std::sync::mpsc::channel::<()>();
        let (send, typed) = mpsc::channel(TYPED_LINES);
        std::thread::Builder::new().name("opencode-pty-prompt".into()).spawn(move || {
            // Set by a Ctrl-C at an empty prompt: a second one in a row leaves.
            let mut leaving = false;
            while asked.recv().is_ok() {
                empty.store(true, Ordering::Relaxed);
                let line = match editor.readline(PROMPT) {
                    Ok(line) => {
                        let _ = editor.add_history_entry(line.as_str());
                        leaving = false;
                        Some(line)
                    }
                    // Ctrl-C abandons the line, as in a shell; at an empty prompt, twice in a row, it leaves.
                    Err(rustyline::error::ReadlineError::Interrupted) if empty.load(Ordering::Relaxed) => {
                        if leaving {
                            None
                        } else {
                            println!("{LEAVE_HINT}");
                            leaving = true;
                            Some(String::new())
                        }
                    }
                    Err(rustyline::error::ReadlineError::Interrupted) => {
                        leaving = false;
                        Some(String::new())
                    }
                    Err(_) => None,
                };
                let end = line.is_none();
                if send.blocking_send(line).is_err() || end {
                    return;
                }
            }
        })?;
        Ok(Input::Editor { ask, typed, asked: false })
    }

    /// The next line, or `None` at the end of input. Cancel safe: a line typed meanwhile is kept for the next
    /// call.
    pub(super) async fn next(&mut self) -> anyhow::Result<Option<String>> {
        match self {
            Input::Lines(lines) => Ok(lines.next_line().await?),
            Input::Editor { ask, typed, asked } => {
                if !*asked {
                    *asked = ask.send(()).is_ok();
                }
                let line = typed.recv().await.flatten();
                *asked = false;
                Ok(line)
            }
        }
    }
}

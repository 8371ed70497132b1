//! A terminal's screen as a client sees it, to compare before and after an upgrade: the `snapshot` answer, and
//! its checkpoint replayed into a fresh emulator of the terminal's size (screen and history text, every cell's
//! text, width and style, wrap flags, cursor, modes and title).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use opencode_pty_vt::{Blanks, Color, Terminal};
use serde_json::{Value, json};

use crate::support::Daemon;

/// History the replaying emulator keeps: more than the daemon's terminals hold in these tests.
const REPLAY_HISTORY: usize = 10_000;

/// What `snapshot` answered for a terminal.
#[derive(Debug, PartialEq)]
pub(super) struct Screen {
    pub(super) text: String,
    pub(super) checkpoint: Vec<u8>,
    pub(super) cursor: (u64, u64),
    /// The process's `pty` member (size, titles, foreground process).
    pub(super) pty: Value,
}

impl Screen {
    /// Terminal `id`'s screen now.
    pub(super) fn of(daemon: &Daemon, id: u64) -> Screen {
        let answer = daemon.request(json!({"op": "snapshot", "id": id}));
        assert_eq!(answer["type"], "snapshot", "{answer}");
        let checkpoint = BASE64.decode(answer["checkpoint_base64"].as_str().expect("checkpoint")).expect("base64");
        Screen {
            text: answer["text"].as_str().expect("text").to_owned(),
            checkpoint,
            cursor: (answer["cursor_x"].as_u64().expect("cursor_x"), answer["cursor_y"].as_u64().expect("cursor_y")),
            pty: answer["process"]["pty"].clone(),
        }
    }

    /// The checkpoint written to a fresh emulator of the terminal's size.
    pub(super) fn replayed(&self) -> Terminal {
        let size = |name: &str| self.pty[name].as_u64().and_then(|n| u16::try_from(n).ok()).expect("a size");
        let mut terminal = Terminal::new(size("cols"), size("rows"), REPLAY_HISTORY).expect("an emulator");
        terminal.write(&self.checkpoint);
        terminal
    }
}

/// Fails unless `after` shows what `before` showed: the same snapshot, and the same emulator state once each
/// checkpoint is replayed (compared whole, not as bytes), which is the text the snapshot gave.
pub(super) fn assert_same_screen(before: &Screen, after: &Screen) {
    let (replayed_before, replayed_after) = (before.replayed(), after.replayed());
    let text = |terminal: &Terminal| terminal.plain_text().expect("plain text");
    assert_eq!(text(&replayed_before), before.text, "the checkpoint taken before replays to the snapshot's text");
    let diff = replayed_before.state_diff(&replayed_after, Blanks::Exact).expect("a comparison");
    assert_eq!(diff, None, "the checkpoints before and after replay to different screens");
    let rows = |terminal: &Terminal| terminal.read_row_range(0, terminal.total_rows(), usize::MAX).expect("rows");
    assert_eq!(rows(&replayed_after), rows(&replayed_before), "the text of history and screen, row by row");
    assert_eq!(after.text, before.text, "the snapshot's text");
    assert_eq!(after.cursor, before.cursor, "the snapshot's cursor");
    assert_eq!(after.pty, before.pty, "the terminal's size and titles");
}

/// The style of the cell at column `x` of the cursor's row, in a replayed terminal.
pub(super) fn style_on_cursor_row(terminal: &Terminal, x: usize) -> (Color, Color, bool) {
    let rows = usize::from(terminal.size().1);
    let y = terminal.total_rows() - rows + usize::from(terminal.cursor().y);
    let row = terminal.row_info(y).expect("the cursor's row");
    let style = row.cells[x].style;
    (style.fg, style.bg, style.bold)
}

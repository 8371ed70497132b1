//! A seeded generator of adversarial terminal input, shared by the checkpoint fidelity test and the
//! `checkpoint_fidelity` example: random text with wide characters and combining marks, tabs, SGR, cursor
//! movement, erase and insert/delete of lines and characters, and per class scroll regions, autowrap off,
//! saved cursors, charsets, insert mode and the alternate screen.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// What a generated screen may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Text, SGR, tabs, CUP, ED, EL, IL, DL, ICH, DCH, ECH and line feeds on the primary screen.
    Text,
    /// `Text` plus switches to and from the alternate screen.
    Alternate,
    /// `Alternate` plus scroll regions, autowrap off, DECSC/DECRC, DEC special graphics and insert mode.
    Modes,
    /// `Text`, then pushed out of the exactly emitted rows into old history by line feeds, so the
    /// formatter's part of the checkpoint carries it.
    DeepHistory,
}

impl Class {
    /// Every class, in report order.
    pub(crate) const ALL: [Class; 4] = [Class::Text, Class::Alternate, Class::Modes, Class::DeepHistory];

    /// A short name for reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Class::Text => "text (ED/EL/IL/DL/CUP, wide, tabs)",
            Class::Alternate => "+ alternate screen",
            Class::Modes => "+ DECSTBM, DECAWM, DECSC, charset, IRM",
            Class::DeepHistory => "text, pushed into old history",
        }
    }
}

/// One generated case: the terminal size and the bytes to feed it.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
    /// The input.
    pub input: Vec<u8>,
}

const WORDS: [&str; 12] =
    ["hello", "ls -la", "漢字", "🙂", "e\u{301}", "wide界", "x", "[ok]", "tab\there", "  ", "ﾊﾟ", "αβγ"];

/// The case for `seed` in `class`: the same seed always gives the same bytes.
pub(crate) fn generate(class: Class, seed: u64) -> Case {
    let mut rng = StdRng::seed_from_u64(seed ^ (class as u64) << 56);
    let cols = rng.random_range(4..=40u16);
    let rows = rng.random_range(2..=12u16);
    let mut input = Vec::new();
    let steps = rng.random_range(5..=120);
    for _ in 0..steps {
        let choice = rng.random_range(0..100);
        let row = rng.random_range(1..=rows + 1);
        let col = rng.random_range(1..=cols + 1);
        let n = rng.random_range(0..=3);
        let s = match choice {
            0..=29 => WORDS[rng.random_range(0..WORDS.len())].to_owned(),
            30..=39 => "\r\n".to_owned(),
            40..=43 => "\t".to_owned(),
            44..=51 => sgr(&mut rng),
            52..=57 => format!("\x1b[{row};{col}H"),
            58..=61 => format!("\x1b[{n}J"),
            62..=65 => format!("\x1b[{n}K"),
            66..=68 => format!("\x1b[{n}L"),
            69..=71 => format!("\x1b[{n}M"),
            72..=73 => format!("\x1b[{n}@"),
            74..=75 => format!("\x1b[{n}P"),
            76..=77 => format!("\x1b[{n}X"),
            78..=81 => "\n".to_owned(),
            82..=84 => {
                "0123456789abcdefghijklmnopqrstuvwxyz0123456789".get(..usize::from(col)).unwrap_or("").to_owned()
            }
            85..=89 if matches!(class, Class::Alternate | Class::Modes) => {
                if rng.random_bool(0.5) { "\x1b[?1049h" } else { "\x1b[?1049l" }.to_owned()
            }
            90..=99 if class == Class::Modes => modes(&mut rng, rows),
            _ => "z".to_owned(),
        };
        input.extend_from_slice(s.as_bytes());
    }
    if class == Class::DeepHistory {
        input.extend_from_slice(b"\x1b[0m\x1b[r");
        for _ in 0..opencode_pty_vt::EXACT_HISTORY_ROWS + usize::from(rows) + 1 {
            input.extend_from_slice(b"\r\n");
        }
    }
    Case { cols, rows, input }
}

fn sgr(rng: &mut StdRng) -> String {
    match rng.random_range(0..8) {
        0 => "\x1b[0m".to_owned(),
        1 => format!("\x1b[{}m", rng.random_range(30..=37)),
        2 => format!("\x1b[{}m", rng.random_range(40..=47)),
        3 => format!("\x1b[38;5;{}m", rng.random_range(0..=255)),
        4 => format!("\x1b[48;2;{};{};{}m", rng.random_range(0..=255), rng.random_range(0..=255), 9),
        5 => "\x1b[1;4m".to_owned(),
        6 => "\x1b[7m".to_owned(),
        _ => "\x1b[3;9m".to_owned(),
    }
}

fn modes(rng: &mut StdRng, rows: u16) -> String {
    match rng.random_range(0..8) {
        0 => {
            let top = rng.random_range(1..=rows);
            let bottom = rng.random_range(top..=rows);
            format!("\x1b[{top};{bottom}r")
        }
        1 => "\x1b[r".to_owned(),
        2 => "\x1b[?7l".to_owned(),
        3 => "\x1b[?7h".to_owned(),
        4 => "\x1b7".to_owned(),
        5 => "\x1b8".to_owned(),
        6 => if rng.random_bool(0.5) { "\x1b(0" } else { "\x1b(B" }.to_owned(),
        _ => if rng.random_bool(0.5) { "\x1b[4h" } else { "\x1b[4l" }.to_owned(),
    }
}

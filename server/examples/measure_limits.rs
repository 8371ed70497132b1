//! Measures the largest terminals the limits allow (`MAX_COLS` x `MAX_CELLS / MAX_COLS`, and the tallest,
//! `MAX_CELLS / MAX_ROWS` x `MAX_ROWS`) against an 80x24 baseline in the same run, over the daemon's socket:
//! `create_pty`, then, with the screen and history filled with coloured text, `snapshot`, `resize` down to a
//! quarter and back, `read_rows` of a screenful, and `terminate`. Each figure is the median of a few runs
//! (one for create and terminate). A last case fills the screen (no history) with the worst text for the
//! checkpoint's exact form, every cell in its own style with combining marks and wide characters, so the
//! checkpoint falls back to plain rows (SPEC C4); it emits only the exact rows that fit, so this stays fast.
//! Run: `just bench-limits` (it builds the release binary first).

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use opencode_pty_protocol::{Frame, MAX_CELLS, MAX_COLS, MAX_ROWS, Registration, encode_control, read_frame};
use opencode_pty_testkit::screens::{self, EVERY_ATTRIBUTE, StyledCells};
use serde_json::{Value, json};

mod support;
use support::start_owned;

/// Runs of each repeated operation; the median is reported.
const RUNS: usize = 5;

/// History lines written before the screen: more than the emulator keeps, so its scrollback is full.
const FULL_HISTORY: usize = 10_000;

/// A partial history, with which even the largest terminal's checkpoint stays under its 5 MiB limit.
const SOME_HISTORY: usize = 1_000;

/// One request on its own connection; the answer and the size of its frame.
fn request(registration: &Registration, request: Value) -> (Value, usize) {
    let mut stream = UnixStream::connect(&registration.socket).expect("connect");
    let Value::Object(map) = json!({"token": registration.token, "request": request}) else { unreachable!() };
    stream.write_all(&encode_control(&map).expect("encode")).expect("send");
    match read_frame(&mut stream).expect("frame") {
        Some(Frame::Control(map)) => {
            let len = serde_json::to_vec(&map).expect("json").len();
            (Value::Object(map), len)
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// `lines` lines exactly `cols` wide, a new 256-colour pen every 8 characters, as a file of that many bytes.
fn write_text(path: &Path, cols: u16, lines: usize) -> u64 {
    write_file(path, &coloured_text(cols, lines))
}

fn write_file(path: &Path, text: &[u8]) -> u64 {
    std::fs::write(path, text).expect("write the text");
    text.len() as u64
}

/// The coloured text of [`write_text`]: each line ends in a reset and `\n` (the PTY adds the `\r`).
fn coloured_text(cols: u16, lines: usize) -> Vec<u8> {
    screens::coloured_lines(usize::from(cols), lines, b"\x1b[0m\n")
}

/// The worst screen for a checkpoint's exact form: every cell in its own style (truecolour foreground,
/// background and underline colour, every attribute, curly underline) with two combining marks, and every
/// third cell a wide character with one.
fn adversarial_text(cols: u16, lines: usize) -> Vec<u8> {
    let cells = StyledCells { attributes: EVERY_ATTRIBUTE, wide: true, between_rows: b"\x1b[0m\n" };
    let mut text = cells.screen(usize::from(cols), lines);
    text.extend_from_slice(b"\x1b[0m\n");
    text
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// What one terminal size measured, in the order printed.
struct Figures {
    create: Duration,
    snapshot: Duration,
    /// The snapshot's outcome: its frame size, or the daemon's error.
    snapshot_result: String,
    resize_down: Duration,
    resize_back: Duration,
    resize_result: String,
    read_rows: Duration,
    terminate: Duration,
}

fn outcome(answer: &Value, len: usize) -> String {
    match answer["type"].as_str() {
        Some("error") => format!("error: {}", answer["message"].as_str().unwrap_or_default()),
        Some(kind) => format!("{kind}, {:.2} MiB frame", len as f64 / f64::from(1 << 20)),
        None => "no type".into(),
    }
}

fn measure(registration: &Registration, dir: &Path, cols: u16, rows: u16, history: usize, worst: bool) -> Figures {
    let file = dir.join(format!("text-{cols}x{rows}-{history}-{worst}"));
    let lines = history + usize::from(rows);
    let bytes = if worst { write_file(&file, &adversarial_text(cols, lines)) } else { write_text(&file, cols, lines) };
    let script = format!("cat '{}'; exec sleep 600", file.display());
    let create = json!({"op": "create_pty", "program": "sh", "args": ["-c", script], "cwd": "/", "env": {},
                        "group_id": "measure", "title": "measure", "cols": cols, "rows": rows});
    let started = Instant::now();
    let (created, _) = request(registration, create);
    let create = started.elapsed();
    let id = created["process"]["id"].as_u64().unwrap_or_else(|| panic!("create {cols}x{rows}: {created}"));
    // The terminal has parsed everything once its tail covers the file (the PTY turns each LF into CR LF).
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (info, _) = request(registration, json!({"op": "get", "id": id}));
        if info["process"]["output_tail"].as_u64().is_some_and(|tail| tail >= bytes) {
            break;
        }
        assert!(Instant::now() < deadline, "the text never reached the terminal");
        std::thread::sleep(Duration::from_millis(20));
    }
    let timed = |request_body: Value| {
        let started = Instant::now();
        let (answer, len) = request(registration, request_body);
        (started.elapsed(), answer, len)
    };
    let (mut snapshots, mut downs, mut backs, mut reads) = (vec![], vec![], vec![], vec![]);
    let (mut snapshot_result, mut resize_result) = (String::new(), String::new());
    let resize = |c: u16, r: u16| json!({"op": "resize", "id": id, "attachment_id": null, "cols": c, "rows": r});
    for _ in 0..RUNS {
        let (took, answer, len) = timed(json!({"op": "snapshot", "id": id}));
        snapshots.push(took);
        snapshot_result = outcome(&answer, len);
        let (took, answer, len) = timed(resize(cols.div_ceil(2), rows.div_ceil(2)));
        downs.push(took);
        let down = outcome(&answer, len);
        let (took, answer, len) = timed(resize(cols, rows));
        backs.push(took);
        resize_result = format!("down: {down}; back: {}", outcome(&answer, len));
        let (took, answer, _) = timed(json!({"op": "read_rows", "id": id}));
        // A screen of the worst text is over the `read_rows` budget (SPEC §4.3): that is timed too.
        assert!(answer["type"] == "rows" || worst, "{answer}");
        reads.push(took);
    }
    let (terminate, answer, _) = timed(json!({"op": "terminate", "id": id}));
    assert_eq!(answer["type"], "ok", "{answer}");
    Figures {
        create,
        snapshot: median(snapshots),
        snapshot_result,
        resize_down: median(downs),
        resize_back: median(backs),
        resize_result,
        read_rows: median(reads),
        terminate,
    }
}

fn main() {
    let root = tempfile::tempdir().expect("tempdir");
    let (mut child, registration, owner) = start_owned(root.path());
    let wide = (MAX_COLS, u16::try_from(MAX_CELLS / u32::from(MAX_COLS)).expect("rows"));
    let tall = (u16::try_from(MAX_CELLS / u32::from(MAX_ROWS)).expect("cols"), MAX_ROWS);

    // How fast a size over the limits is refused (the 65535x65535).
    let started = Instant::now();
    let (refused, _) = request(
        &registration,
        json!({"op": "create_pty", "program": "sh", "args": [], "cwd": "/", "env": {}, "group_id": "measure",
               "title": "measure", "cols": 65535, "rows": 65535}),
    );
    println!("create_pty 65535x65535: {:.2} ms, {}", ms(started.elapsed()), outcome(&refused, 0));

    for (history, worst) in [(SOME_HISTORY, false), (FULL_HISTORY, false), (0, true)] {
        let text = if worst { "every cell in its own style" } else { "coloured text" };
        println!("\nscreen and {history} lines of history, {text} (median of {RUNS}):");
        let base = measure(&registration, root.path(), 80, 24, history, worst);
        for (cols, rows) in [wide, tall] {
            let big = measure(&registration, root.path(), cols, rows, history, worst);
            println!("  {cols}x{rows} against 80x24:");
            let rows_of = [
                ("create", big.create, base.create),
                ("snapshot", big.snapshot, base.snapshot),
                ("resize to half", big.resize_down, base.resize_down),
                ("resize back", big.resize_back, base.resize_back),
                ("read_rows", big.read_rows, base.read_rows),
                ("terminate", big.terminate, base.terminate),
            ];
            for (what, big, base) in rows_of {
                println!(
                    "    {what:<15} {:>8.2} ms  (80x24: {:>6.2} ms, ratio {:>6.1}x)",
                    ms(big),
                    ms(base),
                    big.as_secs_f64() / base.as_secs_f64()
                );
            }
            println!("    snapshot: {}", big.snapshot_result);
            println!("    resize: {}", big.resize_result);
        }
        println!("  80x24 snapshot: {}", base.snapshot_result);
    }

    drop(owner);
    let _ = child.child_mut().wait();
}

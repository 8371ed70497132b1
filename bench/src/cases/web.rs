//! The web terminal of issue 32 in a real browser against `opencode-pty attach`: page load to the restored
//! screen of an 80x24 terminal with 10,000 lines of history, and a 16 MiB `cat` shown by the page, per
//! renderer (ghostty-web, xterm.js), measured by `examples/web-terminal/bench/browser.js` in headless Chromium;
//! the same two through `attach` on a PTY of the harness (`attach.rs`) are the baseline. Without node, the
//! example's packages or Chromium, the browser rows say so in a note and the attach rows are measured alone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use opencode_pty_client::{Client, CreatePty};
use serde_json::Value;

use super::attach::{Attach, COLS, ROWS};
use crate::daemon::{self, Daemon};
use crate::data::{self, SEED};
use crate::plan::Context;
use crate::stats::{Row, Table, Unit, mb_per_s};
use crate::system;

/// The note of the browser rows in the quick run.
pub(crate) const NOT_QUICK: &str = "not in the quick run";

/// How long one run of browser.js may take (two renderers, each with its page loads and its cat).
const BROWSER_TIMEOUT: Duration = Duration::from_secs(900);

/// How long `node --version` may take.
const NODE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the history terminal may take to print its lines, and attach to show a screen.
const SCREEN_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the daemon's screen is looked at while the history prints.
const SCREEN_POLL: Duration = Duration::from_millis(50);

/// What the history terminal prints after its numbered lines (the same as browser.js).
const HISTORY_MARKER: &str = "HISTORY-END";

/// The renderers, as browser.js names them, with their row keys and labels.
const RENDERERS: [(&str, &str); 2] = [("ghostty", "ghostty-web"), ("xterm", "xterm.js")];

/// The example, from this crate.
fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/web-terminal")
}

/// Why the browser cannot be measured here, or `None` when it can.
fn browser_missing(quick: bool) -> Option<String> {
    if quick {
        return Some(NOT_QUICK.to_owned());
    }
    if !system::run(Command::new("node").arg("--version"), NODE_TIMEOUT).is_ok_and(|out| out.status.success()) {
        return Some("node not installed".to_owned());
    }
    let example = example_dir();
    let packages = ["playwright-core", "ghostty-web", "@xterm/xterm", "ws", "opencode-pty-client/dist"];
    if let Some(missing) = packages.iter().find(|package| !example.join("node_modules").join(package).exists()) {
        return Some(format!(
            "the example's packages are not installed (no {missing}: cd examples/web-terminal && npm ci && npm run \
             client)"
        ));
    }
    let chromium = std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if !chromium.is_file() {
        return Some(format!("chromium not installed ({})", chromium.display()));
    }
    None
}

/// The web table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let lines = plan.web_history_lines;
    let size = if plan.web_cat_bytes >= 1 << 20 {
        format!("{} MiB", plan.web_cat_bytes >> 20)
    } else {
        format!("{} KiB", plan.web_cat_bytes >> 10)
    };
    let mut table = Table::new(
        "web",
        "Web terminal: restore and throughput in a browser",
        format!(
            "The web terminal of `examples/web-terminal` in headless Chromium (Debian's, driven by playwright-core), \
             measured by `examples/web-terminal/bench/browser.js`, once per renderer, against `opencode-pty attach` \
             on an 80x24 PTY of the harness. Restore: a bash at 80x24 has printed {lines} numbered lines and a \
             marker; from `page.goto` (a fresh page, `&observe=1` so that it keeps the daemon's 80x24) until the \
             page says it is restored and its terminal's visible rows are exactly the daemon's; for attach, from \
             starting `attach --observe` until its output, parsed by libghostty-vt, shows the same rows; \
             {restores} of each per repetition. Throughput: `cat` of {size} of seeded log text (colours, \
             UTF-8, CRLF) in a bash whose controller is the page (its window fitted so that its terminal is 80x24), \
             from pressing Enter until the page's terminal shows a marker printed after it (a wait in the page, \
             no sleeps); for attach (the controller), from writing Enter to its PTY until the marker is in its \
             output, read raw, and read and parsed by libghostty-vt as a terminal would. MB/s of the file's size. \
             Ratios against attach: for times above 1 is slower, for MB/s below 1 is slower.",
            restores = plan.web_restores
        ),
    );
    let attach_restore = table.add(Row::new(
        "attach_restore",
        format!("attach: start to the restored screen ({lines} lines of history)"),
        Unit::Milliseconds,
    ));
    let mut page_restore = HashMap::new();
    for (renderer, name) in RENDERERS {
        let row = Row::new(
            format!("{renderer}_restore"),
            format!("{name}: page load to the restored screen"),
            Unit::Milliseconds,
        )
        .vs(&["attach_restore"]);
        page_restore.insert(renderer, table.add(row));
    }
    let attach_cat = table.add(Row::new(
        "attach_cat",
        format!("attach: {size} cat, output parsed (libghostty-vt)"),
        Unit::MegabytesPerSecond,
    ));
    let attach_cat_raw =
        table.add(Row::new("attach_cat_raw", format!("attach: {size} cat, output read raw"), Unit::MegabytesPerSecond));
    let mut page_cat = HashMap::new();
    for (renderer, name) in RENDERERS {
        let row =
            Row::new(format!("{renderer}_cat"), format!("{name}: {size} cat in the page"), Unit::MegabytesPerSecond)
                .vs(&["attach_cat", "attach_cat_raw"]);
        page_cat.insert(renderer, table.add(row));
    }

    let dir = ctx.fresh_dir("web")?;
    let file = data::write_file(&dir, "cat.log", &data::log_text(SEED ^ 7, usize::try_from(plan.web_cat_bytes)?))?;
    let missing = browser_missing(plan.quick);
    if let Some(why) = &missing {
        for row in page_restore.values().chain(page_cat.values()) {
            table.note(*row, why.clone());
        }
    }
    let baseline = Baseline::start(ctx, &dir, &file).await?;
    for repetition in 0..plan.repetitions {
        if missing.is_none() {
            let found = tokio::task::block_in_place(|| browser(ctx, &dir, &file))?;
            if repetition == 0
                && let Some(version) = found["chromium"].as_str()
            {
                table.method.push_str(&format!(" Chromium {version}."));
            }
            for (renderer, _) in RENDERERS {
                let result = found
                    .get("renderers")
                    .and_then(Value::as_array)
                    .and_then(|all| all.iter().find(|one| one["renderer"] == renderer))
                    .with_context(|| format!("browser.js gave no result for {renderer}"))?;
                record_page(&mut table, page_restore[renderer], page_cat[renderer], result, lines);
            }
        }
        for _ in 0..plan.web_restores {
            table.push_sample(attach_restore, baseline.restore(ctx).await?);
        }
        let (parsed, raw) = baseline.cat(ctx, repetition).await?;
        table.push_sample(attach_cat, parsed);
        table.push_sample(attach_cat_raw, raw);
    }
    baseline.stop().await?;
    Ok(vec![table.finish()])
}

/// Adds one browser.js result of a renderer to its rows (its error, or a shortfall, as a note).
fn record_page(table: &mut Table, restore: usize, cat: usize, result: &Value, lines: u64) {
    let numbers = |value: &Value| value.as_array().map(|all| all.iter().filter_map(Value::as_f64).collect::<Vec<_>>());
    for ms in numbers(&result["restore"]["ms"]).unwrap_or_default() {
        table.push_sample(restore, ms);
    }
    if let Some(kept) = result["restore"]["numberedRows"].as_u64().filter(|kept| *kept < lines) {
        table.note(restore, format!("the page's terminal kept {kept} of the {lines} history lines"));
    }
    if let Some(error) = result["cat"]["error"].as_str() {
        table.note(cat, format!("failed: {}", error.lines().next().unwrap_or_default()));
    }
    let mismatch = &result["cat"]["mismatch"];
    if let (Some(row), Some(page), Some(daemon)) =
        (mismatch["row"].as_u64(), mismatch["page"].as_str(), mismatch["daemon"].as_str())
    {
        table.note(
            cat,
            format!(
                "after the cat the page's screen differed from the daemon's: its row {} showed {page:?} where the \
                 daemon's has {daemon:?}",
                row + 1
            ),
        );
    }
    for rate in numbers(&result["cat"]["mbPerS"]).unwrap_or_default() {
        table.push_sample(cat, rate);
    }
    let size = &result["cat"]["size"];
    if let (Some(cols), Some(rows)) = (size["cols"].as_u64(), size["rows"].as_u64())
        && (cols, rows) != (u64::from(COLS), u64::from(ROWS))
    {
        table.note(cat, format!("the page's terminal was {cols}x{rows}"));
    }
}

/// One run of browser.js (one cat per renderer, `web_restores` page loads): its JSON document.
fn browser(ctx: &Context, dir: &Path, file: &Path) -> Result<Value> {
    let plan = &ctx.plan;
    let (out, err) = (dir.join("browser.json"), dir.join("browser.log"));
    let mut child = Command::new("node")
        .arg("bench/browser.js")
        .arg("--file")
        .arg(file)
        .args(["--restores", &plan.web_restores.to_string(), "--cats", "1"])
        .args(["--history", &plan.web_history_lines.to_string()])
        .current_dir(example_dir())
        .env("OPENCODE_PTY_BIN", &ctx.daemon)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out)?)
        .stderr(std::fs::File::create(&err)?)
        .spawn()
        .context("starting node bench/browser.js")?;
    let deadline = Instant::now() + BROWSER_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("browser.js did not finish within {BROWSER_TIMEOUT:?}; it was killed");
        }
        std::thread::sleep(SCREEN_POLL);
    };
    let log = std::fs::read_to_string(&err).unwrap_or_default();
    if !status.success() {
        bail!("browser.js failed ({status}):\n{log}");
    }
    let text = std::fs::read_to_string(&out)?;
    serde_json::from_str(&text).with_context(|| format!("browser.js printed no JSON document:\n{text}\n{log}"))
}

/// The attach side: a daemon with the history terminal and a shell for the cat.
struct Baseline {
    daemon: Daemon,
    root: PathBuf,
    /// The terminal with the history, and its visible rows.
    history: u64,
    expected: Vec<String>,
    /// The shell the cats run in (in the file's folder).
    shell: u64,
    file: PathBuf,
    bytes: u64,
}

impl Baseline {
    async fn start(ctx: &Context, dir: &Path, file: &Path) -> Result<Baseline> {
        let root = dir.join("daemon");
        let daemon = Daemon::start(&ctx.daemon, &root).await?;
        let client = daemon.client();
        let lines = ctx.plan.web_history_lines;
        let history = bash(
            client,
            dir,
            vec![
                "--norc".into(),
                "--noprofile".into(),
                "-c".into(),
                format!(
                    "seq -f 'history line %.0f' 1 {lines}; echo {HISTORY_MARKER}; exec env PS1='$ ' /bin/bash --norc \
                     --noprofile -i"
                ),
            ],
        )
        .await?;
        let expected = history_printed(client, history).await?;
        let folder = file.parent().context("the file's folder")?;
        let shell = bash(client, folder, vec!["--norc".into(), "--noprofile".into(), "-i".into()]).await?;
        let bytes = std::fs::metadata(file)?.len();
        Ok(Baseline { daemon, root, history, expected, shell, file: file.to_owned(), bytes })
    }

    /// Starting `attach --observe` to its restored screen of the history terminal; milliseconds.
    async fn restore(&self, ctx: &Context) -> Result<f64> {
        let expected = &self.expected;
        tokio::task::block_in_place(|| {
            let started = Instant::now();
            let mut attach = Attach::start(&ctx.daemon, &self.root, daemon::NAME, self.history, true)?;
            attach.until_screen("attach's restored screen", SCREEN_TIMEOUT, |rows| rows == expected.as_slice())?;
            let elapsed = started.elapsed().as_secs_f64() * 1e3;
            attach.detach()?;
            Ok(elapsed)
        })
    }

    /// One cat with attach's output parsed, then one read raw, as the controller; MB/s of each.
    async fn cat(&self, ctx: &Context, repetition: usize) -> Result<(f64, f64)> {
        let name = self.file.file_name().context("the file's name")?.to_string_lossy().into_owned();
        let limit = ctx.plan.timeout();
        tokio::task::block_in_place(|| {
            let mut attach = Attach::start(&ctx.daemon, &self.root, daemon::NAME, self.shell, false)?;
            attach.until_screen("attach showing the prompt", SCREEN_TIMEOUT, |rows| {
                rows.last().is_some_and(|row| row.starts_with('$'))
            })?;
            let mut rates = [0.0; 2];
            for (index, parse) in [true, false].into_iter().enumerate() {
                let tag = format!("{repetition}{}", if parse { 'p' } else { 'r' });
                // The marker is printed, not typed: the command's echo does not hold it.
                let command = format!("cat {name}; printf '\\nCAT%s\\n' -END-{tag}");
                attach.type_keys(command.as_bytes())?;
                attach.until_screen("attach echoing the command", SCREEN_TIMEOUT, |rows| {
                    rows.last().is_some_and(|row| row.ends_with(&command))
                })?;
                let started = Instant::now();
                attach.type_keys(b"\r")?;
                attach.until_bytes(format!("CAT-END-{tag}").as_bytes(), parse, limit)?;
                rates[index] = mb_per_s(self.bytes, started.elapsed().as_secs_f64());
                if parse {
                    // What follows the marker (the prompt) is parsed too, for the next wait on the screen.
                    attach.until_screen("attach showing the prompt again", SCREEN_TIMEOUT, |rows| {
                        rows.last().is_some_and(|row| row == "$")
                    })?;
                }
            }
            attach.detach()?;
            Ok((rates[0], rates[1]))
        })
    }

    async fn stop(self) -> Result<()> {
        let client = self.daemon.client();
        client.terminate(self.history).await?;
        client.terminate(self.shell).await?;
        self.daemon.stop().await
    }
}

/// A bash at 80x24 in `cwd` with `args` and the prompt `$ `.
async fn bash(client: &Client, cwd: &Path, args: Vec<String>) -> Result<u64> {
    let env = [("PS1", "$ "), ("HOME", &cwd.display().to_string())]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect();
    let params = CreatePty { args, env, ..CreatePty::new("/bin/bash", cwd.display().to_string()) };
    Ok(client.create_pty(params).await?.id)
}

/// Waits until the history terminal shows its marker and the prompt after it; its visible rows then.
async fn history_printed(client: &Client, id: u64) -> Result<Vec<String>> {
    let deadline = Instant::now() + SCREEN_TIMEOUT;
    loop {
        let text = client.snapshot(id).await?.text;
        let mut rows: Vec<String> = text.split('\n').map(|row| row.trim_end().to_owned()).collect();
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        if let Some(marker) = rows.iter().position(|row| row == HISTORY_MARKER)
            && rows[marker + 1..].iter().any(|row| row.starts_with('$'))
        {
            return Ok(rows);
        }
        if Instant::now() > deadline {
            bail!("the history terminal did not print its {HISTORY_MARKER} within {SCREEN_TIMEOUT:?}:\n{text}");
        }
        tokio::time::sleep(SCREEN_POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_result_gives_samples_and_says_what_went_wrong() {
        let mut table = Table::new("web", "Web", "method");
        let restore = table.add(Row::new("restore", "restore", Unit::Milliseconds));
        let cat = table.add(Row::new("cat", "cat", Unit::MegabytesPerSecond));
        let result = serde_json::json!({
            "renderer": "ghostty",
            "restore": { "ms": [300.0, 400.0], "numberedRows": 1165 },
            "cat": {
                "mbPerS": [1.5],
                "size": { "cols": 81, "rows": 24 },
                "mismatch": { "row": 2, "page": "abc", "daemon": "ab" }
            }
        });
        record_page(&mut table, restore, cat, &result, 10_000);
        let failed = serde_json::json!({ "restore": { "ms": [350.0] }, "cat": { "error": "crashed\nstack" } });
        record_page(&mut table, restore, cat, &failed, 10_000);
        let table = table.finish();
        let restore = table.row("restore").expect("row");
        assert_eq!(restore.samples, vec![300.0, 400.0, 350.0]);
        assert_eq!(restore.note.as_deref(), Some("the page's terminal kept 1165 of the 10000 history lines"));
        let cat = table.row("cat").expect("row");
        assert_eq!(cat.samples, vec![1.5]);
        let note = cat.note.as_deref().expect("a note");
        assert!(note.contains("its row 3 showed \"abc\" where the daemon's has \"ab\""), "{note}");
        let mut failed_only = Table::new("web", "Web", "method");
        let row = failed_only.add(Row::new("cat", "cat", Unit::MegabytesPerSecond));
        record_page(&mut failed_only, row, row, &failed, 10_000);
        assert_eq!(failed_only.rows[row].note.as_deref(), Some("failed: crashed"));
    }
}

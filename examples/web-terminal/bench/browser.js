/** Benchmark of the web terminal in headless Chromium, per renderer: page load to the restored screen of an 80x24
 * terminal with 10,000 lines of history, and the MB/s of a 16 MiB `cat` shown by the page; one JSON document. */

import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startWebTerminal } from "../lib/web.js";
import { eventually, launchBrowser, startDaemon } from "../test/support.js";

const USAGE = `usage: [OPENCODE_PTY_BIN=PATH] node bench/browser.js [--file PATH] [--restores N] [--cats N]
    [--history LINES] [--renderers ghostty,xterm]

Prints one JSON document on stdout (progress goes to stderr). The daemon is OPENCODE_PTY_BIN, else this
repository's target/release (or debug) build. --file is the text the throughput run cats
(default: 16 MiB generated here with a fixed seed).`;

/** The terminal size both measurements are about. */
const COLS = 80;
const ROWS = 24;

/** The bound of a page load to its restored screen. */
const RESTORE_TIMEOUT_MS = 60_000;

/** The bound of one `cat` to its end marker in the page (16 MiB at 1 MB/s would still fit). */
const CAT_TIMEOUT_MS = 240_000;

/** The bound of every smaller wait (a prompt, a size, the daemon's screen). */
const STEP_TIMEOUT_MS = 30_000;

/** How long the page's screen may take to agree with the daemon's once the cat's marker shows. */
const MATCH_TIMEOUT_MS = 5_000;

/** How often a wait inside the page looks again. */
const PAGE_POLL_MS = 5;

/** How often a wait in Node looks again. */
const NODE_POLL_MS = 20;

/** What the history terminal prints after its numbered lines: the restored screen must end with it. */
const HISTORY_MARKER = "HISTORY-END";

/** The bytes of the generated file when no --file is given. */
const DEFAULT_FILE_BYTES = 16 << 20;

/** The seed of the generated file. */
const SEED = 0x6f70656e636f6465n;

/** How long the page's terminal size must hold still after a viewport change to count as fitted. */
const FIT_STILL_MS = 400;

/** Viewport sizes tried while fitting the page's terminal to exactly 80x24. */
const MAX_FIT_TRIES = 12;

const RENDERERS = { ghostty: "ghostty-web", xterm: "xterm.js" };

const { values } = parseArgs({
  options: {
    file: { type: "string" },
    restores: { type: "string", default: "5" },
    cats: { type: "string", default: "3" },
    history: { type: "string", default: "10000" },
    renderers: { type: "string", default: "ghostty,xterm" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.error(USAGE);
  process.exit(0);
}
const restores = positive(values.restores, "--restores");
const cats = positive(values.cats, "--cats");
const historyLines = positive(values.history, "--history");
const renderers = values.renderers.split(",").filter((name) => name);
for (const name of renderers) {
  if (!(name in RENDERERS)) {
    fail(`unknown renderer ${name} (ghostty or xterm)`);
  }
}

function positive(text, what) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    fail(`${what} needs a whole number above 0, not ${text}`);
  }
  return value;
}

function fail(message) {
  console.error(`browser.js: ${message}`);
  process.exit(2);
}

function log(message) {
  console.error(`browser.js: ${message}`);
}

/** `eventually` of the tests with this script's bound, one step's. */
function until(what, probe, limit = STEP_TIMEOUT_MS) {
  return eventually(what, probe, async () => "", limit);
}

/** Rows without the blank ones at the bottom. */
function trimmed(rows) {
  const end = rows.findLastIndex((row) => row !== "");
  return rows.slice(0, end + 1);
}

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Mixed text from a fixed seed (xorshift64*): words of a log, SGR colours, accents, CJK, CRLF line ends. */
function generatedText(bytes) {
  const mask = (1n << 64n) - 1n;
  let state = SEED;
  const below = (n) => {
    state ^= state >> 12n;
    state = (state ^ (state << 25n)) & mask;
    state ^= state >> 27n;
    return Number(((state * 0x2545f4914f6cdd1dn) & mask) % BigInt(n));
  };
  const words = ["INFO", "WARN", "request", "done", "in", "ms", "Compiling", "src/main.rs:42:17", "worker", "GET"];
  const other = ["é", "ü", "漢字", "端末", "→", "✓"];
  const parts = [];
  let length = 0;
  for (let line = 0; length < bytes; line += 1) {
    let text = `\x1b[2m${String(line).padStart(8, "0")}\x1b[0m`;
    for (let word = 4 + below(10); word > 0; word -= 1) {
      const pick = below(10);
      text += pick === 0 ? `\x1b[${31 + below(7)}m` : pick === 1 ? "\x1b[0m" : "";
      text += ` ${pick === 2 ? other[below(other.length)] : words[below(words.length)]}`;
    }
    text += "\x1b[0m\r\n";
    parts.push(text);
    length += Buffer.byteLength(text);
  }
  return Buffer.from(parts.join("")).subarray(0, bytes);
}

/** A bash at 80x24 in `cwd`, started with `args` (an interactive one by default). */
function shell(daemon, cwd, args = ["--norc", "--noprofile", "-i"]) {
  return daemon.createPty({
    program: "/bin/bash",
    args,
    cwd,
    env: { PS1: "$ ", HOME: cwd },
    cols: COLS,
    rows: ROWS,
  });
}

/** The visible rows the daemon shows for `id`, once `check` holds for them. */
async function daemonScreen(daemon, id, what, check) {
  return until(what, async () => {
    const rows = trimmed((await daemon.snapshot(id)).text.split("\n"));
    return check(rows) ? rows : null;
  });
}

/** Page load to the restored screen, `restores` times, as an observer (the page keeps the daemon's 80x24). */
async function measureRestore(browser, url, expected) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
  const samples = [];
  let restored = null;
  try {
    for (let round = 0; round < restores; round += 1) {
      const page = await context.newPage();
      const errors = [];
      page.on("pageerror", (error) => errors.push(error.message));
      const started = performance.now();
      await page.goto(`${url}&observe=1`, { timeout: RESTORE_TIMEOUT_MS });
      await page.waitForFunction(
        (rows) => {
          const web = window.webTerminal;
          if (!web?.state.restored) {
            return false;
          }
          const screen = web.screen();
          const end = screen.findLastIndex((row) => row !== "");
          return JSON.stringify(screen.slice(0, end + 1)) === JSON.stringify(rows);
        },
        expected,
        { timeout: RESTORE_TIMEOUT_MS, polling: PAGE_POLL_MS },
      );
      samples.push(performance.now() - started);
      restored = await page.evaluate(async () => {
        await window.webTerminal.fence();
        const rows = window.webTerminal.history();
        return {
          size: window.webTerminal.size(),
          historyRows: rows.length,
          numberedRows: rows.filter((row) => /^history line \d+$/.test(row)).length,
          firstNumbered: rows.find((row) => /^history line \d+$/.test(row)) ?? null,
        };
      });
      if (errors.length > 0) {
        throw new Error(`the page reported: ${errors.join("; ")}`);
      }
      await page.close();
    }
  } finally {
    await context.close();
  }
  const mode = "observer (&observe=1: the page keeps the daemon's 80x24)";
  return { ms: samples, medianMs: median(samples), mode, ...restored };
}

/** Sets the viewport so that the page's terminal fits exactly 80x24 (its cell size is its renderer's); the size
 * it got. */
async function fitTo80x24(page) {
  const size = () => page.evaluate(() => window.webTerminal.size());
  const settle = async (viewport) => {
    const before = await size();
    await page.setViewportSize(viewport);
    // The fit follows a ResizeObserver, in its own time: the size once it changed and then held still for
    // FIT_STILL_MS, or held still that long twice over without changing (a viewport that fits the same size).
    let last = before;
    let since = Date.now();
    const started = Date.now();
    return until("the page's terminal fitted to the window", async () => {
      const now = await size();
      if (now.cols !== last.cols || now.rows !== last.rows) {
        last = now;
        since = Date.now();
        return null;
      }
      const changed = now.cols !== before.cols || now.rows !== before.rows;
      const still = Date.now() - since;
      return (changed && still >= FIT_STILL_MS) || Date.now() - started >= 2 * FIT_STILL_MS ? now : null;
    });
  };
  const a = await settle({ width: 900, height: 600 });
  const b = await settle({ width: 1100, height: 800 });
  if (b.cols <= a.cols || b.rows <= a.rows) {
    const seen = `${JSON.stringify(a)}, then ${JSON.stringify(b)}`;
    throw new Error(`the page's terminal did not grow with the window (${seen})`);
  }
  // A first guess from the cell size, then a bisection of each side between a window too small and one too big.
  const fresh = (want, from, cell) => ({ low: null, high: null, want, cell, now: Math.round(from + 0.5 * cell) });
  const width = fresh(COLS, 900 + (COLS - a.cols) * (200 / (b.cols - a.cols)), 200 / (b.cols - a.cols));
  const height = fresh(ROWS, 600 + (ROWS - a.rows) * (200 / (b.rows - a.rows)), 200 / (b.rows - a.rows));
  let got = a;
  for (let attempt = 0; attempt < MAX_FIT_TRIES; attempt += 1) {
    got = await settle({ width: width.now, height: height.now });
    if (got.cols === COLS && got.rows === ROWS) {
      break;
    }
    for (const [side, cells] of [
      [width, got.cols],
      [height, got.rows],
    ]) {
      if (cells < side.want) {
        side.low = side.now;
      } else if (cells > side.want) {
        side.high = side.now;
      } else {
        continue;
      }
      side.now =
        side.low !== null && side.high !== null
          ? Math.round((side.low + side.high) / 2)
          : Math.round(side.now + (side.want - cells) * side.cell);
    }
  }
  const viewport = { width: width.now, height: height.now };
  return { size: got, viewport };
}

/** The page's restore count and the output bytes it has written since its last restore. */
function counters(page) {
  return page.evaluate(() => ({ restores: window.webTerminal.state.restores, bytes: window.webTerminal.state.bytes }));
}

/** `null` once the page's visible rows are the daemon's (within {@link MATCH_TIMEOUT_MS}), else the first row
 * that differs, in both. */
async function differs(page, daemon, id) {
  let found = null;
  const deadline = Date.now() + MATCH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const theirs = trimmed((await daemon.snapshot(id)).text.split("\n"));
    const ours = trimmed(await page.evaluate(async () => {
      await window.webTerminal.fence();
      return window.webTerminal.screen();
    }));
    const row = Array.from({ length: Math.max(ours.length, theirs.length) }, (_, index) => index).find(
      (index) => ours[index] !== theirs[index],
    );
    if (row === undefined) {
      return null;
    }
    found = { row, page: ours[row] ?? "", daemon: theirs[row] ?? "" };
    await new Promise((resolve) => setTimeout(resolve, NODE_POLL_MS));
  }
  return found;
}

/** `cat` of `file` in a fresh shell whose controller is the page, `cats` times: from Enter to the page showing
 * the end marker printed after it. */
async function measureCat(browser, daemon, file, renderer) {
  const bytes = statSync(file).size;
  const pty = await shell(daemon, dirname(file));
  const web = await startWebTerminal({ daemon, id: pty.id });
  const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
  const seconds = [];
  let fitted;
  const received = [];
  /** How the page's screen differed from the daemon's after a cat, if it did. */
  let mismatch = null;
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${web.url}&renderer=${renderer}`, { timeout: STEP_TIMEOUT_MS });
    await page.waitForFunction(() => window.webTerminal?.state.role === "controller", null, {
      timeout: STEP_TIMEOUT_MS,
    });
    fitted = await fitTo80x24(page);
    await until("the daemon's terminal at the page's size", async () => {
      const size = (await daemon.get(pty.id)).pty;
      return size?.cols === fitted.size.cols && size?.rows === fitted.size.rows;
    });
    await page.waitForFunction(() => window.webTerminal.screen().some((row) => row.startsWith("$")), null, {
      timeout: STEP_TIMEOUT_MS,
    });
    for (let round = 1; round <= cats; round += 1) {
      const marker = `CAT-END-${round}`;
      const command = `cat ${basename(file)}; printf '\\nCAT%s\\n' -END-${round}`;
      await page.keyboard.type(command);
      await page.waitForFunction((text) => window.webTerminal.screen().some((row) => row.endsWith(text)), command, {
        timeout: STEP_TIMEOUT_MS,
        polling: PAGE_POLL_MS,
      });
      const before = await counters(page);
      const started = performance.now();
      await page.keyboard.press("Enter");
      await page
        .waitForFunction(
          (text) => {
            const web = window.webTerminal;
            return web.state.errors.length > 0 || web.screen().some((row) => row.startsWith(text));
          },
          marker,
          {
          timeout: CAT_TIMEOUT_MS,
          polling: PAGE_POLL_MS,
        })
        .catch(async (error) => {
          const seen = await page.evaluate(() => ({
            state: window.webTerminal.state,
            screen: window.webTerminal.screen(),
          }));
          throw new Error(`${error.message}\nthe page: ${JSON.stringify(seen)}`);
        });
      const elapsed = (performance.now() - started) / 1000;
      const pageErrors = await page.evaluate(() => window.webTerminal.state.errors);
      if (pageErrors.length > 0) {
        const shown = await page.evaluate(() => window.webTerminal.state.bytes);
        throw new Error(`the page's terminal failed after ${shown} bytes of the cat: ${pageErrors[0].split("\n")[0]}`);
      }
      seconds.push(elapsed);
      const after = await counters(page);
      if (after.restores !== before.restores) {
        throw new Error("the page's screen was restored again during the cat (a resize?)");
      }
      received.push(after.bytes - before.bytes);
      mismatch ??= await differs(page, daemon, pty.id);
    }
    if (errors.length > 0) {
      throw new Error(`the page reported: ${errors.join("; ")}`);
    }
  } finally {
    await context.close();
    await web.close();
    await daemon.terminate(pty.id).catch(() => undefined);
  }
  const mbPerS = seconds.map((s) => bytes / 1e6 / s);
  return {
    fileBytes: bytes,
    seconds,
    mbPerS,
    medianMbPerS: median(mbPerS),
    receivedBytes: received,
    size: fitted.size,
    viewport: fitted.viewport,
    mode: "controller",
    mismatch,
  };
}

/** This repository's daemon binary, for `OPENCODE_PTY_BIN` when it is not set (as `npm start` finds it). */
function repositoryBinary() {
  const target = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "target");
  return ["release", "debug"].map((profile) => join(target, profile, "opencode-pty")).find((path) => existsSync(path));
}

async function main() {
  process.env.OPENCODE_PTY_BIN ??= repositoryBinary();
  const work = mkdtempSync(join(tmpdir(), "opencode-pty-web-bench-"));
  const { daemon, stop } = await startDaemon();
  let browser;
  try {
    let file = values.file;
    if (!file) {
      file = join(work, "cat.log");
      writeFileSync(file, generatedText(DEFAULT_FILE_BYTES));
    }
    browser = await launchBrowser();
    // One terminal with the history, observed by every page load of every renderer.
    const history = await shell(daemon, work, [
      "--norc",
      "--noprofile",
      "-c",
      `seq -f 'history line %.0f' 1 ${historyLines}; echo ${HISTORY_MARKER}; ` +
        "exec env PS1='$ ' /bin/bash --norc --noprofile -i",
    ]);
    const expected = await daemonScreen(daemon, history.id, "the history printed", (rows) => {
      const marker = rows.indexOf(HISTORY_MARKER);
      return marker >= 0 && rows.slice(marker + 1).some((row) => row.startsWith("$"));
    });
    const historyWeb = await startWebTerminal({ daemon, id: history.id });
    const results = [];
    try {
      for (const renderer of renderers) {
        log(`${RENDERERS[renderer]}: ${restores} page loads`);
        const restore = await measureRestore(browser, `${historyWeb.url}&renderer=${renderer}`, expected);
        log(`${RENDERERS[renderer]}: restored in ${restore.medianMs.toFixed(0)} ms (median); ${cats} cats`);
        const cat = await measureCat(browser, daemon, file, renderer).catch((error) => ({ error: error.message }));
        const how = cat.error ? `cat failed: ${cat.error}` : `cat at ${cat.medianMbPerS.toFixed(1)} MB/s (median)`;
        log(`${RENDERERS[renderer]}: ${how}`);
        results.push({ renderer, name: RENDERERS[renderer], restore, cat });
      }
    } finally {
      await historyWeb.close();
    }
    const document = {
      chromium: browser.version(),
      historyLines,
      expectedScreen: expected,
      file,
      renderers: results,
    };
    process.stdout.write(`${JSON.stringify(document)}\n`);
  } finally {
    await browser?.close();
    await stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();

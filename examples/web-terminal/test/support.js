/** Helpers of the browser tests: a daemon in a temporary directory, headless Chromium, bounded waits. */

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { Daemon } from "opencode-pty-client";

/** The longest a test waits for one thing (20 s): generous for a loaded 2-core machine. */
export const WAIT_MS = 20_000;

/** How often a wait looks again. */
const POLL_MS = 20;

/** The Chromium the tests drive: `$CHROMIUM`, else Debian's (`.ci/run` installs it); never a downloaded one. */
export function chromiumPath() {
  const path = process.env.CHROMIUM ?? "/usr/bin/chromium";
  assert.ok(existsSync(path), `no Chromium at ${path}: install Debian's chromium (.ci/run does) or set CHROMIUM`);
  return path;
}

/** Where the screenshots go: `$WEB_TERMINAL_OUT` (cargo's test sets it under target/), else a temporary folder. */
export function outputDir(...parts) {
  const dir = join(process.env.WEB_TERMINAL_OUT ?? join(tmpdir(), "opencode-pty-web-terminal"), ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A daemon spawned and owned through the client in a fresh runtime directory; `stop()` releases it (the
 * daemon stops with its terminals) and removes the directory, killing it first if it is still there. */
export async function startDaemon() {
  const binary = process.env.OPENCODE_PTY_BIN;
  assert.ok(binary, "set OPENCODE_PTY_BIN to the opencode-pty binary (cargo test runs these tests with it set)");
  const runtimeDir = mkdtempSync(join(tmpdir(), "opencode-pty-web-"));
  const { daemon, owner } = await Daemon.spawn({ binary, runtimeDir, name: "web", timeoutMs: WAIT_MS });
  const stop = async () => {
    await owner.release();
    await eventually("the daemon gone", () => !alive(daemon.pid));
    rmSync(runtimeDir, { recursive: true, force: true });
  };
  return { daemon, runtimeDir, stop };
}

/** Whether a process id is alive. */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `probe` until it returns a truthy value, for at most `limit` ms ({@link WAIT_MS} unless given); that
 * value. `detail` says what was seen when the wait fails. */
export async function eventually(what, probe, detail = async () => "", limit = WAIT_MS) {
  const deadline = Date.now() + limit;
  for (;;) {
    const value = await probe();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      assert.fail(`${what}: not within ${limit} ms. ${await detail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Headless Chromium. */
export async function launchBrowser() {
  return chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"], timeout: WAIT_MS });
}

/** The page's terminal, through `window.webTerminal` (public/app.js). */
export class Tab {
  constructor(page) {
    this.page = page;
    this.errors = [];
    page.on("pageerror", (error) => this.errors.push(error.message));
  }

  /** Opens `url` and waits for the restored screen. */
  static async open(context, url) {
    const tab = new Tab(await context.newPage());
    await tab.page.goto(url);
    await tab.restored();
    return tab;
  }

  /** Waits until the page has attached and written its checkpoint and replay. */
  async restored() {
    await this.page.waitForFunction(() => window.webTerminal?.state.restored === true, null, { timeout: WAIT_MS });
  }

  /** Reloads the page and waits for the restored screen. */
  async reload() {
    await this.page.reload();
    await this.restored();
  }

  /** The rows the page's terminal shows, once everything it received is written. */
  screen() {
    return this.page.evaluate(async () => {
      await window.webTerminal.fence();
      return window.webTerminal.screen();
    });
  }

  history() {
    return this.page.evaluate(async () => {
      await window.webTerminal.fence();
      return window.webTerminal.history();
    });
  }

  state() {
    return this.page.evaluate(() => ({
      ...window.webTerminal.state,
      size: window.webTerminal.size(),
      alternate: window.webTerminal.alternate(),
    }));
  }

  /** Waits until the screen satisfies `check` (given the rows); the rows. */
  async until(what, check) {
    return eventually(
      what,
      async () => {
        const rows = await this.screen();
        return check(rows) ? rows : null;
      },
      async () => `the page shows:\n${(await this.screen()).join("\n")}\nstate ${JSON.stringify(await this.state())}`,
    );
  }

  /** Types `text` as key presses into the page's terminal. */
  async type(text) {
    await this.page.keyboard.type(text);
  }

  async shot(dir, name) {
    await this.page.screenshot({ path: join(dir, `${name}.png`) });
  }
}

/** The visible rows without the blank ones at the bottom. */
export function trimmed(rows) {
  const end = rows.findLastIndex((row) => row !== "");
  return rows.slice(0, end + 1);
}

/** Waits until the page shows what the daemon's snapshot shows (the same rows of text); those rows. */
export async function matchesDaemon(tab, daemon, id) {
  let daemonRows = [];
  return eventually(
    "the page's screen and the daemon's snapshot agree",
    async () => {
      const snapshot = await daemon.snapshot(id);
      daemonRows = trimmed(snapshot.text.split("\n"));
      const pageRows = trimmed(await tab.screen());
      return JSON.stringify(pageRows) === JSON.stringify(daemonRows) ? pageRows : null;
    },
    async () => `the daemon shows:\n${daemonRows.join("\n")}\nthe page shows:\n${trimmed(await tab.screen()).join("\n")}`,
  );
}

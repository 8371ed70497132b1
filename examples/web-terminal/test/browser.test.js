/** The web terminal in headless Chromium, once per renderer: typing, a full-screen program across a reload,
 * resizing, two tabs, takeover, and a reload during output. Each step saves a screenshot and compares the
 * page's terminal text with the daemon's. */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { startWebTerminal } from "../lib/web.js";
import { eventually, launchBrowser, matchesDaemon, outputDir, startDaemon, Tab, trimmed } from "./support.js";

/** How long one step may take, its waits included. */
const STEP_MS = 90_000;

/** Lines of the file the pager shows. */
const PAGER_LINES = 200;

/** Lines of history a reload must bring back. */
const HISTORY_LINES = 10000;

/** Lines printed while a tab reloads. */
const STREAM_LINES = 400;

for (const renderer of ["ghostty", "xterm"]) {
  describe(`the web terminal with ${renderer === "ghostty" ? "ghostty-web" : "xterm.js"}`, () => {
    let daemon;
    let stopDaemon;
    let web;
    let browser;
    let context;
    let id;
    let url;
    let work;
    /** @type {Tab} */
    let first;
    /** @type {Tab} */
    let second;
    const shots = outputDir(renderer);

    before(async () => {
      ({ daemon, stop: stopDaemon } = await startDaemon());
      work = mkdtempSync(join(tmpdir(), "opencode-pty-web-work-"));
      const numbers = Array.from({ length: PAGER_LINES }, (_, index) => `line ${index + 1}`).join("\n");
      writeFileSync(join(work, "numbers.txt"), `${numbers}\n`);
      const pty = await daemon.createPty({
        program: "/bin/bash",
        args: ["--norc", "--noprofile", "-i"],
        cwd: work,
        env: { PS1: "$ ", LESS: "", LESSHISTFILE: "-", HOME: work },
        cols: 80,
        rows: 24,
      });
      id = pty.id;
      web = await startWebTerminal({ daemon, id });
      url = `${web.url}&renderer=${renderer}`;
      browser = await launchBrowser();
      context = await browser.newContext({ viewport: { width: 800, height: 500 } });
    });

    after(async () => {
      await browser?.close();
      await web?.close();
      await stopDaemon?.();
      rmSync(work, { recursive: true, force: true });
    });

    test("a typed command's output shows in the page", { timeout: STEP_MS }, async () => {
      first = await Tab.open(context, url);
      assert.equal((await first.state()).role, "controller", "the first tab controls");
      await first.until("the prompt", (rows) => rows.some((row) => row.startsWith("$")));
      await first.type("printf '\\033]0;%s\\007' web-title; echo hi\n");
      await first.until("the output of echo hi", (rows) => rows.includes("hi"));
      await eventually("the terminal's title as the page's", async () => (await first.page.title()) === "web-title");
      await matchesDaemon(first, daemon, id);
      await first.shot(shots, "01-echo-hi");
    });

    test("a full-screen program's screen comes back after a reload, the shell's after it quits", { timeout: STEP_MS }, async () => {
      const shell = trimmed(await first.screen());
      await first.type("less numbers.txt\n");
      const pager = await first.until("less showing the file", (rows) => rows[0] === "line 1" && rows.includes("line 10"));
      assert.equal((await first.state()).alternate, true, "less runs on the alternate screen");
      await matchesDaemon(first, daemon, id);
      await first.shot(shots, "02-less");

      const restoresBefore = (await first.state()).restores;
      await first.reload();
      const reloaded = await first.state();
      assert.equal(reloaded.role, "controller", "the reloaded tab controls again (the same tab id)");
      assert.ok(reloaded.alternate, "the restored screen is the alternate one");
      assert.ok(reloaded.restores >= 1 && restoresBefore >= 1);
      assert.deepEqual(await first.screen(), pager, "the reload shows the pager's screen as it was");
      await matchesDaemon(first, daemon, id);
      await first.shot(shots, "03-less-reloaded");

      await first.type("q");
      const back = await first.until("the shell's screen", (rows) => !rows.includes("line 10") && rows.includes("hi"));
      assert.equal((await first.state()).alternate, false);
      assert.deepEqual(trimmed(back).slice(0, shell.length - 1), shell.slice(0, shell.length - 1), "the shell's rows are back");
      await matchesDaemon(first, daemon, id);
      await first.shot(shots, "04-less-quit");
    });

    test("resizing the window resizes the terminal, and the child sees it", { timeout: STEP_MS }, async () => {
      const before = (await first.state()).size;
      await first.page.setViewportSize({ width: 640, height: 360 });
      const size = await eventually("the page's terminal fitted to the smaller window", async () => {
        const now = (await first.state()).size;
        return now.cols < before.cols && now.rows < before.rows ? now : null;
      });
      await eventually("the daemon's terminal at the page's size", async () => {
        const info = await daemon.get(id);
        return info.pty?.cols === size.cols && info.pty?.rows === size.rows;
      });
      await first.type("stty size\n");
      await first.until("stty size", (rows) => rows.includes(`${size.rows} ${size.cols}`));
      await matchesDaemon(first, daemon, id);
      await first.shot(shots, "05-resized");
    });

    test("a second tab observes: what one types, both show", { timeout: STEP_MS }, async () => {
      second = await Tab.open(context, url);
      const state = await second.state();
      assert.equal(state.role, "observer", "the second tab observes while the first controls");
      assert.deepEqual(state.size, (await first.state()).size, "the observer shows the terminal at its size");
      await second.type("zzz"); // an observer's keys go nowhere
      await first.type("echo two tabs\n");
      await first.until("the output in the first tab", (rows) => rows.includes("two tabs"));
      const rows = await second.until("the output in the second tab", (rows) => rows.includes("two tabs"));
      assert.ok(rows.includes("$ echo two tabs"), "nothing the observer typed reached the shell");
      assert.deepEqual(trimmed(await second.screen()), trimmed(await first.screen()), "both tabs show the same");
      await matchesDaemon(second, daemon, id);
      await first.shot(shots, "06-two-tabs-first");
      await second.shot(shots, "06-two-tabs-second");
    });

    test("a takeover moves control to the other tab", { timeout: STEP_MS }, async () => {
      await second.page.click("#takeover");
      await eventually("the second tab controls", async () => (await second.state()).role === "controller");
      await eventually("the first tab observes", async () => (await first.state()).role === "observer");
      assert.equal(await first.page.isVisible("#takeover"), true, "the first tab now offers to take over");
      const size = (await second.state()).size;
      await eventually("the daemon's terminal at the new controller's size", async () => {
        const info = await daemon.get(id);
        return info.pty?.cols === size.cols && info.pty?.rows === size.rows;
      });
      await second.type("stty size\n");
      await second.until("stty size from the new controller", (rows) => rows.includes(`${size.rows} ${size.cols}`));
      await first.until("the same in the first tab", (rows) => rows.includes(`${size.rows} ${size.cols}`));
      assert.deepEqual((await first.state()).size, size, "the observer follows the terminal's new size");
      await matchesDaemon(first, daemon, id);
      await first.shot(shots, "07-takeover-first");
      await second.shot(shots, "07-takeover-second");
    });

    test("a tab reloaded during output misses no line and repeats none", { timeout: STEP_MS }, async () => {
      await second.type(`clear; for i in $(seq 1 ${STREAM_LINES}); do echo "n$i"; sleep 0.005; done; echo stream-end\n`);
      await first.until("the stream started", (rows) => rows.some((row) => /^n\d+$/.test(row)));
      await first.reload();
      await first.until("the stream's end", (rows) => rows.includes("stream-end"));
      const numbered = (await first.history()).filter((row) => /^n\d+$/.test(row));
      const expected = Array.from({ length: STREAM_LINES }, (_, index) => `n${index + 1}`);
      assert.deepEqual(numbered, expected, "every line once, in order, across the reload");
      await first.shot(shots, "08-reload-during-output");
    });

    test("a reload brings back the history, not only the screen", { timeout: STEP_MS }, async () => {
      await second.type(`clear; seq -f 'h%g' 1 ${HISTORY_LINES}\n`);
      await second.until("the history printed", (rows) => rows.includes(`h${HISTORY_LINES}`));
      await second.reload();
      const kept = (await second.history()).filter((row) => /^h\d+$/.test(row));
      const expected = Array.from({ length: HISTORY_LINES }, (_, index) => `h${index + 1}`);
      assert.deepEqual(kept, expected, "every history line back after the reload");
      await second.shot(shots, "08-history-reloaded");
    });

    test("the process's exit reaches every tab", { timeout: STEP_MS }, async () => {
      await second.type("exit 3\n");
      for (const tab of [first, second]) {
        await eventually("the exit in the tab", async () => (await tab.state()).exitCode === 3);
        assert.deepEqual(tab.errors, [], "no error in the page");
      }
      await second.shot(shots, "09-exited");
    });
  });
}

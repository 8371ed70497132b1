/** `npm start` (server.js) as a user runs it: it starts a daemon and a shell, serves the page, and stops both
 * on SIGTERM. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { alive, eventually, WAIT_MS } from "./support.js";

const SERVER = join(dirname(fileURLToPath(import.meta.url)), "..", "server.js");

test("npm start serves a new shell, and SIGTERM stops it and the daemon it started", { timeout: 120_000 }, async (t) => {
  assert.ok(process.env.OPENCODE_PTY_BIN, "set OPENCODE_PTY_BIN (cargo test does)");
  const runtimeDir = mkdtempSync(join(tmpdir(), "opencode-pty-web-start-"));
  t.after(() => rmSync(runtimeDir, { recursive: true, force: true }));
  const server = spawn(process.execPath, [SERVER, "--name", "start", "--runtime-dir", runtimeDir, "--shell", "/bin/sh"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => server.exitCode === null && server.kill("SIGKILL"));
  let said = "";
  server.stdout.on("data", (data) => (said += data));
  server.stderr.on("data", (data) => (said += data));
  const url = await eventually("the URL", () => /open (http:\S+)/.exec(said)?.[1], async () => said);
  assert.match(said, /this process owns the daemon/);
  const page = await fetch(url, { signal: AbortSignal.timeout(WAIT_MS) });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<script type="module" src="\/app.js">/);
  for (const path of ["/app.js", "/vendor/ghostty-web/ghostty-web.js", "/vendor/xterm/lib/xterm.mjs", "/vendor/addon-fit/addon-fit.mjs"]) {
    const response = await fetch(new URL(path, url), { signal: AbortSignal.timeout(WAIT_MS) });
    assert.equal(response.status, 200, path);
    assert.match(response.headers.get("content-type") ?? "", /javascript/, path);
  }
  for (const path of ["/../server.js", "/%2e%2e/server.js", "/vendor/xterm/../../../package.json", "/missing"]) {
    const response = await fetch(new URL(path, url), { signal: AbortSignal.timeout(WAIT_MS) });
    assert.equal(response.status, 404, `${path} is not served`);
  }
  const { Daemon } = await import("opencode-pty-client");
  const daemon = await Daemon.discover({ runtimeDir, name: "start" });
  const [shell] = await daemon.list("pty");
  assert.deepEqual(shell?.command, ["/bin/sh"], "the shell it started");
  const exited = new Promise((resolve) => server.on("exit", (code) => resolve(code)));
  server.kill("SIGTERM");
  assert.equal(await exited, 0);
  await eventually("the daemon gone", () => !alive(daemon.pid));
});

test("npm start refuses a bad --port or --pty before it starts anything", { timeout: 60_000 }, async (t) => {
  const runtimeDir = mkdtempSync(join(tmpdir(), "opencode-pty-web-args-"));
  t.after(() => rmSync(runtimeDir, { recursive: true, force: true }));
  for (const [option, value] of [["--port", "http"], ["--port", "70000"], ["--pty", "0"], ["--pty", "x1"]]) {
    const run = spawn(process.execPath, [SERVER, "--runtime-dir", runtimeDir, option, value], { stdio: ["ignore", "pipe", "pipe"] });
    let said = "";
    run.stderr.on("data", (data) => (said += data));
    const code = await new Promise((resolve) => run.on("exit", (exitCode) => resolve(exitCode)));
    assert.equal(code, 2, `${option} ${value}`);
    assert.match(said, new RegExp(`^${option} needs a whole number`), said);
  }
  assert.deepEqual(readdirSync(runtimeDir), [], "no daemon was started");
});

//! What no client-side timeout may cut (SPEC N8): a subscription held quiet for longer than 15 s (three times
//! the default call timeout, past the daemon's own first-request deadline) still delivers, and a `wait` on a
//! pipe process that runs longer than the default timeout is answered.

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";

import { Daemon, DEFAULT_TIMEOUT_MS } from "../src/index.js";
import { bytes, releaseAtEnd, spawned, until } from "./support.js";

const HELD_MS = 16_000;

test("a subscription held for more than 15 s still delivers, and a long wait is answered", { timeout: 60_000 }, async (t) => {
  const { daemon: started, owner, runtimeDir } = await spawned(t);
  releaseAtEnd(t, owner);
  // A handle with the default timeout, which neither the wait nor the subscription may be cut by.
  const daemon = await Daemon.discover({ runtimeDir, name: started.name });
  assert.equal(daemon.timeoutMs, DEFAULT_TIMEOUT_MS);
  const pty = await daemon.createPty({ program: "/bin/sh", cwd: "/", env: { PS1: "$ " }, cols: 80, rows: 24 });
  const subscription = await daemon.subscribe({ id: pty.id, attachmentId: "patient", role: "controller" });
  const runFor = Math.ceil((DEFAULT_TIMEOUT_MS * 3) / 2 / 1000);
  const pipe = await daemon.createPipe({ program: "/bin/sleep", args: [String(runFor)], cwd: "/", outputPath: join(runtimeDir, "p.txt") });
  const since = Date.now();
  const waited = daemon.wait(pipe.id);
  // The point of the test is the passage of time itself: nothing happens on either connection meanwhile.
  await new Promise((resolve) => setTimeout(resolve, HELD_MS));
  const exited = await waited;
  assert.equal(exited.exitCode, 0);
  assert.ok(Date.now() - since > DEFAULT_TIMEOUT_MS, "the wait outlived the default timeout");
  await daemon.input({ id: pty.id, attachmentId: "patient", cols: 80, rows: 24, data: bytes("echo late-$((2+3))\r") });
  await until(subscription, (_, output) => output.includes("late-5"));
  assert.equal(subscription.endReason, null);
  subscription.close();
  assert.equal(await subscription.next(), null);
  assert.equal(subscription.endReason, "detached");
});

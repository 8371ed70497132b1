//! Cancelling a call at any moment leaves nothing behind: a claim or a subscription aborted before its
//! connection was even made, or cut by a zero timeout, closes its socket, so the daemon is not claimed and the
//! terminal has no controller by an orphan; the next claim or controller succeeds.

import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";

import { AbortError, Daemon, DaemonError, TimeoutError, type Subscription } from "../src/index.js";
import { abortable } from "../src/node/connection.js";
import { launchDaemon } from "../src/node/spawn.js";
import { binary, eventually, killAtEnd, releaseAtEnd, spawned, tempDir, WAIT_MS } from "./support.js";

const limit = { timeout: 60_000 };
const shell = { program: "/bin/sh", cwd: "/", env: { PS1: "$ " }, cols: 80, rows: 24 };

/** The Unix-socket handles this process holds open (the test runner's own pipes included). */
function pipes(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === "PipeWrap").length;
}

/** {@link pipes} once the sockets closed just before are gone: their handles count until the event loop has
 * passed its close phase, which a few turns guarantee. */
async function settledPipes(): Promise<number> {
  for (let turn = 0; turn < 3; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  return pipes();
}

/** A daemon started but not claimed (it stops by itself 5 s after starting unless claimed, SPEC O1). */
async function unclaimed(t: TestContext): Promise<Daemon> {
  const runtimeDir = tempDir(t);
  const name = "unclaimed";
  const { registration } = await launchDaemon(
    { binary: binary(), dir: `${runtimeDir}/${name}`, runtimeDir, name, env: process.env, withholdEnv: [], stderr: "ignore" },
    { timeoutMs: WAIT_MS },
  );
  killAtEnd(t, registration.pid);
  return Daemon.discover({ runtimeDir, name, timeoutMs: WAIT_MS });
}

test("a claim aborted before it connected leaves no socket and no owner", limit, async (t) => {
  const daemon = await unclaimed(t);
  const before = await settledPipes();
  const controller = new AbortController();
  const claiming = daemon.claim({ signal: controller.signal });
  process.nextTick(() => controller.abort());
  await assert.rejects(claiming, AbortError);
  await eventually("the aborted claim's socket closed", () => pipes() === before);
  // Without the fix an orphan connection claimed the daemon: "daemon already has a live owner".
  const owner = await daemon.claim();
  releaseAtEnd(t, owner);
  assert.equal((await daemon.ping()).instance_id, daemon.instanceId);
});

test("a controller subscription aborted before it connected leaves no controller behind", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  const pty = await daemon.createPty(shell);
  const before = await settledPipes();
  const controller = new AbortController();
  const subscribing = daemon.subscribe({ id: pty.id, attachmentId: "orphan", role: "controller" }, { signal: controller.signal });
  process.nextTick(() => controller.abort());
  await assert.rejects(subscribing, AbortError);
  await eventually("the aborted subscription's socket closed", () => pipes() === before);
  const subscription = await daemon.subscribe({ id: pty.id, attachmentId: "real", role: "controller" });
  assert.equal(subscription.attached.role, "controller");
  subscription.close();
});

test("a subscription cut by a zero timeout leaves no socket and no controller behind", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  const pty = await daemon.createPty(shell);
  const before = await settledPipes();
  try {
    // The daemon may answer before the timer fires on a fast machine; either way nothing may stay open.
    (await daemon.subscribe({ id: pty.id, attachmentId: "hasty", role: "controller" }, { timeoutMs: 0 })).close();
  } catch (error) {
    assert.ok(error instanceof TimeoutError, String(error));
  }
  await eventually("the timed-out subscription's socket closed", () => pipes() === before);
  // The daemon may not have seen the cut connection go yet when the first attempt arrives.
  let subscription: Subscription | null = null;
  await eventually("a new controller attaches", async () => {
    try {
      subscription = await daemon.subscribe({ id: pty.id, attachmentId: "patient", role: "controller" });
      return true;
    } catch (error) {
      assert.ok(error instanceof DaemonError && error.message.startsWith("terminal already has controller"), String(error));
      return false;
    }
  });
  (subscription as Subscription | null)?.close();
});

test("waiting on work with an already aborted signal leaves no unhandled rejection", limit, async () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown): void => {
    unhandled.push(reason);
  };
  process.on("unhandledRejection", record);
  try {
    let fail: (error: Error) => void = () => undefined;
    const work = new Promise<never>((_, reject) => {
      fail = reject;
    });
    // The cancel step makes the work fail, as closing a connection makes its read fail.
    await assert.rejects(abortable("a read", AbortSignal.abort(), () => fail(new Error("cut")), work), AbortError);
    for (let turn = 0; turn < 3; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.deepEqual(unhandled, []);
  } finally {
    process.off("unhandledRejection", record);
  }
});

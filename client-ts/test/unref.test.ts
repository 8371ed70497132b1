//! `Owner.unref()` and `ref()`: a Node process that owns a daemon and calls `unref()` (on the owner, or on a
//! `ManagedDaemon`) exits on its own when it has nothing else to do (and its daemon, having lost its owner,
//! stops); after `ref()` the owner channel keeps it running until the channel ends (here: the daemon is killed).

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test, type TestContext } from "node:test";

import { alive, binary, eventually, killAtEnd, tempDir, WAIT_MS } from "./support.js";

const limit = { timeout: 60_000 };

/** Starts the owner child; resolves with it, its daemon's pid and a way to wait for one line of its output. */
async function ownerChild(t: TestContext, mode: "unref" | "ref" | "managed") {
  const script = fileURLToPath(new URL("./unref-child.js", import.meta.url));
  const child = spawn(process.execPath, [script, tempDir(t), mode], {
    env: { ...process.env, OPENCODE_PTY_BIN: binary() },
    stdio: ["ignore", "pipe", "inherit"],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const lines: string[] = [];
  let wake: (() => void) | null = null;
  let buffered = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    lines.push(...parts);
    wake?.();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const line = async (prefix: string): Promise<string> => {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const found = lines.find((l) => l.startsWith(prefix));
      if (found !== undefined) return found;
      assert.ok(Date.now() < deadline, `the owner child did not say ${prefix} within ${WAIT_MS} ms: ${lines.join(" | ")}`);
      await Promise.race([new Promise<void>((resolve) => (wake = resolve)), exited, timeout(deadline - Date.now())]);
    }
  };
  const ready = await line("ready ");
  const pid = Number(ready.slice("ready ".length));
  killAtEnd(t, pid);
  return { child, pid, line, exited, lines };
}

function timeout(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(ms, 0)).unref());
}

/** Waits for `child` to exit; fails after {@link WAIT_MS}. */
async function exitOf(child: ChildProcess, exited: Promise<number | null>): Promise<number | null> {
  const result = await Promise.race([exited, timeout(WAIT_MS).then(() => "still running" as const)]);
  assert.notEqual(result, "still running", `the owner process (pid ${child.pid}) did not exit within ${WAIT_MS} ms`);
  return result as number | null;
}

for (const mode of ["unref", "managed"] as const) {
  const how = mode === "unref" ? "owner.unref()" : "ManagedDaemon.unref()";
  test(`a process that owns a daemon and calls ${how} exits on its own`, limit, async (t) => {
    const { child, pid, exited, lines } = await ownerChild(t, mode);
    assert.equal(await exitOf(child, exited), 0);
    assert.ok(!lines.includes("owner closed"), "it exited without waiting for the owner channel to end");
    // Its owner channel closed with it, so the daemon stops (SPEC O5).
    await eventually(`daemon ${pid} stopped after its owner exited`, () => !alive(pid));
  });
}

test("after owner.ref() the owner channel keeps the process running until it ends", limit, async (t) => {
  const { child, pid, line, exited } = await ownerChild(t, "ref");
  assert.equal(child.exitCode, null, "still running after its script finished");
  process.kill(pid, "SIGKILL");
  // Only a running process can notice the channel end and say so; then nothing keeps it.
  await line("owner closed");
  assert.equal(await exitOf(child, exited), 0);
});

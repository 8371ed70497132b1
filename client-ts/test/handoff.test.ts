//! Handoff to a second client in another Node process (SPEC §7.3): the first owner prepares a handoff, a child
//! process claims the daemon with it, the first owner's channel is superseded, and the successor stops the
//! daemon, which leaves nothing behind.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { isAbsolute, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { Daemon, DaemonError } from "../src/index.js";
import { binary, eventually, killAtEnd, leftNothing, spawned, tempDir, WAIT_MS } from "./support.js";

test("a second Node process claims the daemon with the handoff ticket", { timeout: 60_000 }, async (t) => {
  const { daemon, owner, runtimeDir } = await spawned(t);
  const pty = await daemon.createPty({ program: "/bin/sh", cwd: "/", cols: 80, rows: 24 });
  const handoff = await owner.prepareHandoff();
  assert.deepEqual(await owner.prepareHandoff(), handoff, "asking again returns the same ticket");
  assert.equal(handoff.instanceId, daemon.instanceId);
  const child = fileURLToPath(new URL("./handoff-child.js", import.meta.url));
  const result = await new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve) => {
    execFile(process.execPath, [child, JSON.stringify(handoff)], { timeout: WAIT_MS }, (error, stdout, stderr) =>
      resolve({ stdout, stderr, code: error ? (typeof error.code === "number" ? error.code : 1) : 0 }),
    );
  });
  assert.equal(result.code, 0, `the successor failed: ${result.stderr}`);
  const report = JSON.parse(result.stdout) as { instanceId: string; processes: number[] };
  assert.deepEqual(report, { instanceId: daemon.instanceId, processes: [pty.id] });
  // The successor stopped the daemon; the first owner's channel ended with it.
  await owner.closed;
  await eventually("daemon, runtime directory and socket gone", () => leftNothing(daemon, runtimeDir));
});

test("a superseded owner is told so", { timeout: 60_000 }, async (t) => {
  const { daemon, owner } = await spawned(t);
  const handoff = await owner.prepareHandoff();
  const successor = await daemon.claim({ ticket: handoff.ticket });
  t.after(() => successor.release());
  await assert.rejects(owner.prepareHandoff(), (e: unknown) => e instanceof DaemonError && e.message === "owner connection has been superseded");
  await owner.closed;
  await assert.rejects(daemon.claim({ ticket: handoff.ticket }), (e: unknown) => e instanceof DaemonError && e.message === "invalid handoff ticket");
  assert.equal((await daemon.ping()).instance_id, daemon.instanceId, "the daemon runs on under its successor");
});

test("a relative runtime directory is resolved, so the handoff names it absolutely", { timeout: 60_000 }, async (t) => {
  const runtimeDir = tempDir(t);
  const { daemon, owner } = await Daemon.spawn({ binary: binary(), runtimeDir: relative(process.cwd(), runtimeDir), name: "rel", timeoutMs: WAIT_MS });
  killAtEnd(t, daemon.pid);
  t.after(() => owner.release());
  assert.equal(daemon.runtimeDir, runtimeDir);
  const handoff = await owner.prepareHandoff();
  assert.ok(isAbsolute(handoff.runtimeDir), handoff.runtimeDir);
  assert.equal(handoff.runtimeDir, runtimeDir);
});

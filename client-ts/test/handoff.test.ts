//! Handoff to a second client in another Node process (SPEC §7.3): the first owner prepares a handoff, a child
//! process claims the daemon with it, the first owner's channel is superseded, and the successor stops the
//! daemon, which leaves nothing behind. A handoff that cannot be used fails with `HandoffError` saying what
//! was found and why: expired (before any connection), gone, replaced by another instance, ticket refused.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { isAbsolute, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

import { claimHandoff, Daemon, DaemonError, HandoffError } from "../src/index.js";
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

test("an expired handoff is refused before any connection is made", { timeout: 60_000 }, async (t) => {
  const runtimeDir = tempDir(t);
  const dir = join(runtimeDir, "old");
  mkdirSync(dir, { mode: 0o700 });
  const socket = join(dir, "s.sock");
  let connections = 0;
  const server = createServer((connection) => {
    connections++;
    connection.destroy();
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const id = "d".repeat(32);
  const registration = { instance_id: id, pid: process.pid, protocol: 8, features: [], socket, token: id };
  writeFileSync(join(dir, "service.json"), JSON.stringify(registration), { mode: 0o600 });
  const handoff = { runtimeDir, name: "old", instanceId: id, ticket: "e".repeat(32), expiresAt: Date.now() - 1 };
  const error = await claimHandoff(handoff).catch((e: unknown) => e);
  assert.ok(error instanceof HandoffError, String(error));
  assert.deepEqual([error.reason, error.found, error.daemonMessage, error.code, error._tag], ["expired", null, null, "HANDOFF", "HandoffError"]);
  assert.match(error.message, /expired \d+ ms ago/);
  assert.equal(connections, 0, "nothing connected to the daemon's socket");
});

test("a refused ticket and a replaced daemon say what was found there", { timeout: 60_000 }, async (t) => {
  const { daemon, owner } = await spawned(t);
  t.after(() => owner.release());
  const handoff = await owner.prepareHandoff();
  const refused = await claimHandoff({ ...handoff, ticket: "0".repeat(32) }).catch((e: unknown) => e);
  assert.ok(refused instanceof HandoffError, String(refused));
  assert.equal(refused.reason, "refused");
  assert.equal(refused.daemonMessage, "invalid handoff ticket");
  assert.ok(refused.found instanceof Daemon, "the daemon handle that answered");
  assert.deepEqual([refused.found.instanceId, refused.found.pid], [daemon.instanceId, daemon.pid]);
  assert.ok(refused.cause instanceof DaemonError);
  const other = "f".repeat(32);
  const replaced = await claimHandoff({ ...handoff, instanceId: other }).catch((e: unknown) => e);
  assert.ok(replaced instanceof HandoffError, String(replaced));
  assert.equal(replaced.reason, "replaced");
  assert.equal(replaced.found?.instanceId, daemon.instanceId);
  assert.match(replaced.message, new RegExp(`names daemon ${other}, but daemon ${daemon.instanceId} \\(pid ${daemon.pid}\\)`));
  const gone = await claimHandoff({ ...handoff, runtimeDir: tempDir(t) }).catch((e: unknown) => e);
  assert.ok(gone instanceof HandoffError && gone.reason === "gone" && gone.found === null, String(gone));
  // The owner keeps the daemon through all of it.
  assert.equal((await daemon.ping()).instance_id, daemon.instanceId);
});

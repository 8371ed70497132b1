//! The helpers for a daemon that may not run: `discoverIfRunning` finds one only while it answers, and
//! `shutdownAndWait` returns only once the daemon, its processes and its files are gone.

import assert from "node:assert/strict";
import { chmodSync, existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { ConnectionError, discoverIfRunning, shutdownAndWait } from "../src/index.js";
import { alive, eventually, killAtEnd, spawned, tempDir } from "./support.js";

const limit = { timeout: 60_000 };

test("discoverIfRunning: null with no daemon or a dead one, the daemon while it runs", limit, async (t) => {
  assert.equal(await discoverIfRunning({ runtimeDir: tempDir(t), name: "none" }), null);
  const { daemon, runtimeDir } = await spawned(t, "maybe");
  assert.equal((await discoverIfRunning({ runtimeDir, name: "maybe" }))?.instanceId, daemon.instanceId);
  process.kill(daemon.pid, "SIGKILL");
  await eventually("the killed daemon gone", () => !alive(daemon.pid));
  assert.equal(await discoverIfRunning({ runtimeDir, name: "maybe" }), null, "a registration nobody answers at");
  chmodSync(join(runtimeDir, "maybe", "service.json"), 0o644);
  await assert.rejects(discoverIfRunning({ runtimeDir, name: "maybe" }), (e: unknown) => e instanceof ConnectionError && e.reason === "registration");
});

test("shutdownAndWait returns once the daemon, its PTY's child and its files are gone", limit, async (t) => {
  const { daemon, owner, runtimeDir } = await spawned(t);
  const pty = await daemon.createPty({ program: "/bin/sh", cwd: "/", cols: 80, rows: 24 });
  const child = pty.pid ?? assert.fail("a running PTY has a pid");
  killAtEnd(t, child);
  await shutdownAndWait(daemon);
  // No waiting here: the helper's promise is the wait.
  assert.equal(alive(daemon.pid), false, "the daemon's process is gone");
  assert.equal(alive(child), false, "the PTY's child is gone");
  assert.equal(existsSync(join(runtimeDir, daemon.name, "service.json")), false, "the registration is gone");
  await owner.closed;
  // Again on a daemon already gone: nothing to wait for.
  await shutdownAndWait(daemon);
});

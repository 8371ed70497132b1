//! Starting daemons: a failed `Daemon.spawn` leaves no process behind, and `connectOrSpawn` copes with a
//! rival caller starting a daemon at the same moment and with a registration left by a daemon that died.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { alreadyOwned, connectOrSpawn, ConnectionError, Daemon, type Owner } from "../src/index.js";
import { alive, binary, eventually, killAtEnd, releaseAtEnd, spawned, tempDir, WAIT_MS } from "./support.js";

const limit = { timeout: 60_000 };

test("a spawn that fails after the launch stops the daemon it started", limit, async (t) => {
  const runtimeDir = tempDir(t);
  // Registers itself (under its own pid, as a daemon does) with a socket nobody listens on, then lingers.
  const fake = join(runtimeDir, "fake-daemon");
  const id = "c".repeat(32);
  writeFileSync(
    fake,
    `#!/bin/sh
dir="$5/$3"
mkdir -p "$dir"
printf '{"instance_id":"${id}","pid":%d,"protocol":8,"features":[],"socket":"%s","token":"${id}"}' $$ "$dir/nobody.sock" > "$dir/new.tmp"
chmod 600 "$dir/new.tmp"
mv "$dir/new.tmp" "$dir/service.json"
exec sleep 60
`,
    { mode: 0o755 },
  );
  await assert.rejects(
    Daemon.spawn({ binary: fake, runtimeDir, name: "doomed", timeoutMs: WAIT_MS }),
    (e: unknown) => e instanceof ConnectionError && e.reason === "unreachable",
  );
  const { pid } = JSON.parse(readFileSync(join(runtimeDir, "doomed", "service.json"), "utf8")) as { pid: number };
  killAtEnd(t, pid);
  assert.equal(alive(pid), false, "the launched process was stopped and reaped before spawn rejected");
});

test("two connectOrSpawn racing on one runtime directory both get the one daemon that won", limit, async (t) => {
  const runtimeDir = tempDir(t);
  const options = { binary: binary(), runtimeDir, name: "raced", timeoutMs: WAIT_MS };
  const settled = await Promise.allSettled([connectOrSpawn(options), connectOrSpawn(options)]);
  for (const result of settled) {
    if (result.status === "fulfilled") {
      killAtEnd(t, result.value.daemon.pid);
      if (result.value.owner) releaseAtEnd(t, result.value.owner);
    }
  }
  const [a, b] = settled.map((result) => {
    assert.equal(result.status, "fulfilled", result.status === "rejected" ? String(result.reason) : "");
    return (result as PromiseFulfilledResult<Awaited<ReturnType<typeof connectOrSpawn>>>).value;
  });
  assert.ok(a && b);
  assert.equal(a.daemon.instanceId, b.daemon.instanceId);
  assert.deepEqual([a.spawned, b.spawned].sort(), [false, true], "exactly one of them started (and owns) it");
  assert.equal([a.owner, b.owner].filter((owner) => owner !== null).length, 1);
});

/** Claims the daemon of `runtimeDir/name` as soon as it answers, polling every millisecond (ten times as often as
 * a spawn looks for its registration, so it usually claims first); null when someone else claimed it. */
async function claimFirst(runtimeDir: string, name: string): Promise<{ daemon: Daemon; owner: Owner } | null> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    let daemon: Daemon | null = null;
    try {
      daemon = await Daemon.discover({ runtimeDir, name, timeoutMs: WAIT_MS });
      return { daemon, owner: await daemon.claim({ timeoutMs: WAIT_MS }) };
    } catch (error) {
      if (alreadyOwned(error)) return null;
      if (daemon !== null || Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

test("a daemon another client claims first is left running by connectOrSpawn, which uses it", limit, async (t) => {
  let rivalWon = 0;
  for (let attempt = 0; attempt < 8 && rivalWon === 0; attempt++) {
    const runtimeDir = tempDir(t);
    const name = "contested";
    const [mine, theirs] = await Promise.allSettled([
      connectOrSpawn({ binary: binary(), runtimeDir, name, timeoutMs: WAIT_MS }),
      claimFirst(runtimeDir, name),
    ]);
    assert.equal(mine.status, "fulfilled", mine.status === "rejected" ? String(mine.reason) : "");
    assert.equal(theirs.status, "fulfilled", theirs.status === "rejected" ? String(theirs.reason) : "");
    const connected = (mine as PromiseFulfilledResult<Awaited<ReturnType<typeof connectOrSpawn>>>).value;
    const rival = (theirs as PromiseFulfilledResult<Awaited<ReturnType<typeof claimFirst>>>).value;
    killAtEnd(t, connected.daemon.pid);
    if (connected.owner) releaseAtEnd(t, connected.owner);
    if (rival === null) {
      assert.ok(connected.owner, "nobody else claimed it, so the call that started it owns it");
      continue;
    }
    rivalWon += 1;
    releaseAtEnd(t, rival.owner);
    assert.equal(connected.owner, null, "the rival owns it");
    assert.equal(connected.daemon.instanceId, rival.daemon.instanceId, "the same daemon");
    assert.ok(alive(rival.daemon.pid), "the daemon its rival claimed is still running");
    await rival.daemon.ping();
  }
  assert.ok(rivalWon > 0, "the rival never claimed first in 8 attempts");
});

test("connectOrSpawn starts a new daemon over the registration of one that was killed", limit, async (t) => {
  const { daemon: dead, runtimeDir } = await spawned(t, "phoenix");
  process.kill(dead.pid, "SIGKILL");
  await eventually("the killed daemon gone", () => !alive(dead.pid));
  const next = await connectOrSpawn({ binary: binary(), runtimeDir, name: "phoenix", timeoutMs: WAIT_MS });
  killAtEnd(t, next.daemon.pid);
  assert.ok(next.owner);
  releaseAtEnd(t, next.owner);
  assert.equal(next.spawned, true);
  assert.notEqual(next.daemon.instanceId, dead.instanceId);
  assert.equal((await next.daemon.ping()).pid, next.daemon.pid);
});

test("withholdEnv keeps named variables of the daemon's environment out of its PTYs", limit, async (t) => {
  const runtimeDir = tempDir(t);
  const env = { ...process.env, OPENCODE_PTY_TS_SECRET: "hidden", OPENCODE_PTY_TS_KEPT: "kept" };
  const { daemon, owner } = await Daemon.spawn({
    binary: binary(),
    runtimeDir,
    name: "withheld",
    env,
    withholdEnv: ["OPENCODE_PTY_TS_SECRET"],
    timeoutMs: WAIT_MS,
  });
  killAtEnd(t, daemon.pid);
  releaseAtEnd(t, owner);
  const script = 'printf "[%s|%s]" "${OPENCODE_PTY_TS_SECRET-unset}" "$OPENCODE_PTY_TS_KEPT"';
  const pty = await daemon.createPty({ program: "/bin/sh", args: ["-c", script], cwd: "/", cols: 80, rows: 24 });
  const subscription = await daemon.subscribe({ id: pty.id, attachmentId: "a", offset: 0 });
  let output = Buffer.from(subscription.attached.replay).toString();
  for await (const event of subscription) {
    if (event.type === "output") output += Buffer.from(event.bytes).toString();
  }
  assert.equal(output, "[unset|kept]");
});

//! `ManagedDaemon` against the real daemon: it starts and claims a daemon, and brings one back when the daemon
//! is killed (`kill -9` of its pid) at every step of that (just started, just claimed, ready), at every step of
//! using a daemon owned elsewhere (found, in use), and after moving to a fresh runtime directory; it falls back
//! from a runtime directory it cannot use; two handles racing share one daemon; a handoff moves ownership from
//! one handle to another; a daemon owned elsewhere and replaced (its token refused) is rediscovered. Every wait
//! is on an event, bounded by WAIT_MS.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test, type TestContext } from "node:test";

import {
  ConnectionError,
  Daemon,
  ManagedDaemon,
  shutdownAndWait,
  VersionMismatchError,
  type ManagedEvent,
  type ManagedOptions,
} from "../src/index.js";
import { alive, binary, eventually, fakeDaemon, killAtEnd, tempDir, WAIT_MS } from "./support.js";

const limit = { timeout: 120_000 };

/** A handle under test: its events as they come, a bounded wait for one, and cleanup when the test ends. */
function managed(t: TestContext, options: Partial<ManagedOptions> & { readonly runtimeDir: string }) {
  const events: ManagedEvent[] = [];
  const waiters = new Set<() => void>();
  const handle = new ManagedDaemon({ binary: binary(), name: "managed", timeoutMs: WAIT_MS, ...options });
  handle.on((event) => {
    events.push(event);
    // Every daemon this handle starts or meets is killed at the end, whatever happened.
    if (event.type === "spawned") killAtEnd(t, event.pid);
    for (const wake of [...waiters]) wake();
  });
  t.after(() => handle.close());
  /** Waits until an event from index `from` on matches; returns it and its index. */
  const waitFor = async (what: string, match: (event: ManagedEvent) => boolean, from = 0) => {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const index = events.findIndex((event, i) => i >= from && match(event));
      if (index >= 0) return { event: events[index] as ManagedEvent, index };
      const left = deadline - Date.now();
      assert.ok(left > 0, `no ${what} within ${WAIT_MS} ms; events: ${types(events).join(", ")}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        const wake = (): void => {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve();
        };
        waiters.add(wake);
      });
    }
  };
  return { handle, events, waitFor };
}

function types(events: readonly ManagedEvent[]): string[] {
  return events.map((event) => (event.type === "lost" ? `lost(${event.reason})` : event.type));
}

/** The pid an event names, for the steps a test kills at. */
function pidOf(event: ManagedEvent): number | null {
  if (event.type === "spawned") return event.pid;
  if ("daemon" in event) return event.daemon.pid;
  return null;
}

/** Kills (SIGKILL) the daemon named by the first event of type `step`, synchronously inside the listener, so
 * the handle's next step meets a dead daemon. Resolves with the pid once killed. */
function killAt(handle: ManagedDaemon, step: ManagedEvent["type"]): Promise<number> {
  return new Promise((resolve) => {
    const stop = handle.on((event) => {
      const pid = event.type === step ? pidOf(event) : null;
      if (pid !== null) {
        stop();
        process.kill(pid, "SIGKILL");
        resolve(pid);
      }
    });
  });
}

/** Checks that the handle ends up ready on a live daemon other than `killed` that answers, and returns it. */
async function recoveredFrom(subject: ReturnType<typeof managed>, killed: number): Promise<Daemon> {
  const { event } = await subject.waitFor("a ready daemon other than the killed one", (e) => e.type === "ready" && e.daemon.pid !== killed);
  assert.equal(event.type, "ready");
  const daemon = await subject.handle.daemon();
  assert.notEqual(daemon.pid, killed);
  assert.equal((await daemon.ping()).pid, daemon.pid, "the recovered daemon answers");
  await eventually(`killed daemon ${killed} gone`, () => !alive(killed));
  return daemon;
}

test("a managed handle starts and claims a daemon, and reports it", limit, async (t) => {
  const subject = managed(t, { runtimeDir: tempDir(t) });
  const daemon = await subject.handle.daemon();
  assert.deepEqual(types(subject.events), ["spawned", "claimed", "ready"]);
  const state = subject.handle.current;
  assert.ok(state?.owner, "it owns the daemon it started");
  assert.equal(state.daemon, daemon);
  assert.equal(await subject.handle.daemon(), daemon, "the current daemon is kept");
  assert.equal((await subject.handle.use((d) => d.ping())).instance_id, daemon.instanceId);
  await subject.handle.close();
  await eventually("the released daemon stopped", () => !alive(daemon.pid));
  assert.equal(subject.events.at(-1)?.type, "closed");
  await assert.rejects(subject.handle.daemon(), ConnectionError);
});

for (const step of ["spawned", "claimed", "ready"] as const) {
  test(`a daemon killed when ${step} is replaced by a new one`, limit, async (t) => {
    const subject = managed(t, { runtimeDir: tempDir(t) });
    const killing = killAt(subject.handle, step);
    // The first call may get the doomed daemon (killed after it was handed out) or the recovered one.
    await subject.handle.daemon().catch(() => undefined);
    const killed = await killing;
    const kill = subject.events.findIndex((event) => event.type === step);
    await recoveredFrom(subject, killed);
    const after = types(subject.events.slice(kill + 1));
    assert.ok(after.includes("retrying") || after.includes("lost(owner-closed)"), after.join(", "));
    assert.ok(after.includes("spawned") && after.includes("claimed"), `a new daemon was started and claimed: ${after.join(", ")}`);
    assert.ok(subject.handle.current?.owner, "and it owns it");
  });
}

/** A daemon at `runtimeDir/managed` owned by the test itself, so the handle finds it owned elsewhere. */
async function ownedElsewhere(t: TestContext, runtimeDir: string) {
  const spawned = await Daemon.spawn({ binary: binary(), runtimeDir, name: "managed", timeoutMs: WAIT_MS });
  killAtEnd(t, spawned.daemon.pid);
  t.after(() => spawned.owner.release());
  return spawned;
}

test("a daemon owned elsewhere is used without ownership, and replaced when killed while found", limit, async (t) => {
  const runtimeDir = tempDir(t);
  const first = managed(t, { runtimeDir });
  const elsewhere = await ownedElsewhere(t, runtimeDir);
  assert.equal(await first.handle.daemon().then((d) => d.instanceId), elsewhere.daemon.instanceId);
  assert.deepEqual(types(first.events), ["discovered", "owned-elsewhere", "ready"]);
  assert.equal(first.handle.current?.owner, null);
  await first.handle.close();

  const subject = managed(t, { runtimeDir });
  const killing = killAt(subject.handle, "discovered");
  await subject.handle.daemon().catch(() => undefined);
  const killed = await killing;
  assert.equal(killed, elsewhere.daemon.pid);
  await recoveredFrom(subject, killed);
  assert.ok(subject.handle.current?.owner, "the new daemon is its own");
});

test("a daemon owned elsewhere that dies is noticed by the next call, which runs again on a new daemon", limit, async (t) => {
  const runtimeDir = tempDir(t);
  const elsewhere = await ownedElsewhere(t, runtimeDir);
  const subject = managed(t, { runtimeDir });
  await subject.handle.daemon();
  process.kill(elsewhere.daemon.pid, "SIGKILL");
  await elsewhere.owner.closed;
  await eventually("the killed daemon reaped", () => !alive(elsewhere.daemon.pid));
  const pong = await subject.handle.use((daemon) => daemon.ping());
  assert.notEqual(pong.pid, elsewhere.daemon.pid);
  const after = types(subject.events);
  assert.deepEqual(after.slice(0, 4), ["discovered", "owned-elsewhere", "ready", "lost(unreachable)"]);
  assert.ok(after.includes("spawned") && after.at(-1) === "ready", after.join(", "));
  await recoveredFrom(subject, elsewhere.daemon.pid);
});

test("a daemon owned elsewhere that was replaced (its token refused) is rediscovered and the call repeated", limit, async (t) => {
  const runtimeDir = tempDir(t);
  const old = await ownedElsewhere(t, runtimeDir);
  const subject = managed(t, { runtimeDir });
  await subject.handle.daemon();
  await shutdownAndWait(old.daemon, { timeoutMs: WAIT_MS });
  // A new daemon in the same runtime directory listens at the same socket path, with another token.
  const replacement = await ownedElsewhere(t, runtimeDir);
  const pong = await subject.handle.use((daemon) => daemon.ping());
  assert.equal(pong.instance_id, replacement.daemon.instanceId);
  assert.deepEqual(types(subject.events), [
    "discovered",
    "owned-elsewhere",
    "ready",
    "lost(authentication)",
    "discovered",
    "owned-elsewhere",
    "ready",
  ]);
});

test("a request whose connection closed before its answer gives the daemon up but is not repeated", limit, async (t) => {
  // A daemon owned elsewhere that closes every connection it takes a request other than ping or own on.
  const runtimeDir = await fakeDaemon(t, (op, pong) => {
    if (op === "ping") return pong;
    if (op === "own") return { type: "error", message: "daemon already has a live owner" };
    return "close";
  });
  const subject = managed(t, { runtimeDir, name: "fake" });
  let runs = 0;
  await assert.rejects(
    subject.handle.use((daemon) => {
      runs++;
      return daemon.get(1);
    }),
    (e: unknown) => e instanceof ConnectionError && e.reason === "closed",
  );
  assert.equal(runs, 1, "it may have been done, so it is not repeated");
  assert.deepEqual(types(subject.events), ["discovered", "owned-elsewhere", "ready", "lost(closed)"]);
  assert.equal(subject.handle.current, null);
  assert.equal((await subject.handle.daemon()).instanceId, "a".repeat(32), "the next call rediscovers");
});

test("a daemon killed just after a handoff was claimed is replaced", limit, async (t) => {
  const runtimeDir = tempDir(t);
  const previous = managed(t, { runtimeDir });
  await previous.handle.daemon();
  const handoff = await previous.handle.prepareHandoff();
  const next = managed(t, { runtimeDir, handoff });
  const killing = killAt(next.handle, "claimed");
  await next.handle.daemon().catch(() => undefined);
  const killed = await killing;
  await recoveredFrom(next, killed);
  assert.ok(types(next.events).includes("lost(owner-closed)"), types(next.events).join(", "));
  assert.ok(!types(previous.events).includes("spawned", 1), "the previous owner, handing off, does not respawn");
});

/** A runtime directory whose `managed/` holds the registration of a daemon of protocol 7. */
function foreignPlace(t: TestContext): string {
  const runtimeDir = tempDir(t);
  const dir = join(runtimeDir, "managed");
  mkdirSync(dir, { mode: 0o700 });
  const id = "7".repeat(32);
  const registration = { instance_id: id, pid: 1, protocol: 7, features: [], socket: join(dir, "s.sock"), token: id };
  writeFileSync(join(dir, "service.json"), JSON.stringify(registration), { mode: 0o600 });
  return runtimeDir;
}

test("a runtime directory it cannot use makes it fall back to a fresh one, and recover there", limit, async (t) => {
  const runtimeDir = foreignPlace(t);
  const subject = managed(t, { runtimeDir });
  await subject.handle.daemon();
  const { event } = await subject.waitFor("fallback", (e) => e.type === "fallback");
  assert.ok(event.type === "fallback");
  assert.deepEqual(event.from, { runtimeDir, name: "managed" });
  assert.equal(event.to.runtimeDir, runtimeDir);
  assert.match(event.to.name, /^managed-[0-9a-f]{8}$/);
  assert.ok(event.error instanceof VersionMismatchError && event.error.protocol === 7);
  assert.deepEqual(types(subject.events), ["fallback", "spawned", "claimed", "ready"]);
  assert.deepEqual(subject.handle.location, event.to);
  const killed = (await subject.handle.daemon()).pid;
  const before = subject.events.length;
  process.kill(killed, "SIGKILL");
  await recoveredFrom(subject, killed);
  const after = types(subject.events.slice(before));
  assert.deepEqual(after.slice(0, 1), ["lost(owner-closed)"]);
  assert.ok(after.includes("spawned") && !after.includes("fallback"), after.join(", "));
  assert.deepEqual(subject.handle.current?.location, event.to, "it stays in the fresh directory");
});

test("without fallback, a runtime directory it cannot use fails the recovery", limit, async (t) => {
  const subject = managed(t, { runtimeDir: foreignPlace(t), fallback: false });
  await assert.rejects(subject.handle.daemon(), VersionMismatchError);
  assert.deepEqual(types(subject.events), ["failed"]);
});

test("two handles racing on one runtime directory share the daemon one of them started", limit, async (t) => {
  const runtimeDir = tempDir(t);
  const a = managed(t, { runtimeDir });
  const b = managed(t, { runtimeDir });
  const [first, second] = await Promise.all([a.handle.daemon(), b.handle.daemon()]);
  assert.equal(first.instanceId, second.instanceId);
  const owners = [a.handle.current?.owner, b.handle.current?.owner].filter((owner) => owner);
  assert.equal(owners.length, 1, `exactly one owns it: ${types(a.events)} / ${types(b.events)}`);
});

test("a handoff moves ownership from one handle to another", limit, async (t) => {
  const runtimeDir = tempDir(t);
  const previous = managed(t, { runtimeDir });
  const daemon = await previous.handle.daemon();
  const handoff = await previous.handle.prepareHandoff();
  const next = managed(t, { runtimeDir, handoff });
  assert.equal((await next.handle.daemon()).instanceId, daemon.instanceId);
  const { event } = await next.waitFor("claimed", (e) => e.type === "claimed");
  assert.ok(event.type === "claimed" && event.via === "handoff");
  assert.deepEqual(next.handle.location, { runtimeDir, name: "managed" }, "the handoff's location");
  await previous.handle.close();
  assert.equal((await next.handle.use((d) => d.ping())).pid, daemon.pid, "the daemon runs on under its successor");
  assert.deepEqual(types(previous.events), ["spawned", "claimed", "ready", "closed"], "no loss, no respawn");
});

//! Going on across an in-place upgrade, against an in-memory daemon that announces the `upgrade` feature: a
//! subscription whose connection ends before `exited` pings, finds the same instance and subscribes again from
//! where output stopped with the same attachment id, yielding `resumed` and contiguous output; another instance,
//! no daemon, a daemon that never answers, another protocol and lost bytes end it as before. `wait` and
//! `waitCommand` are asked again; `run` says its command may have been typed. `Owner.upgrade`'s requests.

import assert from "node:assert/strict";
import { test } from "node:test";

import { base64Encode } from "../src/core/bytes.js";
import {
  ConnectionError,
  Daemon,
  DaemonError,
  memoryTransport,
  UPGRADE_FEATURE,
  VersionMismatchError,
  type Channel,
  type MemoryPeer,
  type Registration,
  type SubscriptionEvent,
  type Transport,
} from "../src/index.js";

const quick = { timeout: 10_000 };

const registration: Registration = {
  instance_id: "0123456789abcdef0123456789abcdef",
  pid: 4242,
  protocol: 8,
  features: [UPGRADE_FEATURE],
  socket: "/memory/daemon.sock",
  token: "f".repeat(32),
};

/** A running PTY's process info as the daemon sends it. */
const process3 = {
  id: 3, mode: "pty", pid: 100, command: ["sh"], cwd: "/", group_id: "", lifecycle: { status: "running" },
  output_head: 0, output_tail: 0, started_at: 1, exited_at: null,
  pty: { title: "sh", user_title: null, foreground_process: null, cols: 80, rows: 24 },
};

/** An `attached` answer of process 3 whose replay `data` starts at `from`. */
function attached(role: string, generation: number, from: number, data: string): Record<string, unknown> {
  const bytes = new TextEncoder().encode(data);
  return {
    type: "attached", process: process3, role, generation, requested_offset: from, available_offset: from,
    end_offset: from + bytes.length, truncated: false, replay_base64: base64Encode(bytes),
  };
}

/** How the in-memory daemon answers `ping` now: as itself, as another instance, in another protocol, never, or
 * nobody listens at all (the connection is refused, as after a crash). */
type PingMode = "same" | "other" | "protocol-9" | "never" | "refused";

/** The in-memory daemon: `ping` as `mode.ping` says (after the first, which confirms the handle), every other
 * request to `answer`; `requests` records every request, pings included. */
interface Fake {
  daemon: Daemon;
  requests: Record<string, unknown>[];
  mode: { ping: PingMode };
}

async function fake(
  answer: (request: Record<string, unknown>, peer: MemoryPeer, index: number) => void,
  options: { features?: string[]; resumeWindowMs?: number } = {},
): Promise<Fake> {
  const requests: Record<string, unknown>[] = [];
  const mode: { ping: PingMode } = { ping: "same" };
  const features = options.features ?? [UPGRADE_FEATURE];
  const inner = memoryTransport((envelope, peer) => {
    const request = envelope["request"] as Record<string, unknown>;
    requests.push(request);
    if (request["op"] === "ping") {
      if (mode.ping === "never") return;
      const instance_id = mode.ping === "other" ? "9".repeat(32) : registration.instance_id;
      const protocol = mode.ping === "protocol-9" ? 9 : 8;
      peer.send({ type: "pong", instance_id, pid: registration.pid, protocol, features });
      peer.end();
      return;
    }
    answer(request, peer, requests.filter((r) => r["op"] !== "ping").length);
  });
  const transport: Transport = (socket) => (mode.ping === "refused" ? refused(socket) : inner(socket));
  const daemon = await Daemon.fromRegistration(
    { ...registration, features },
    { runtimeDir: "/memory", name: "test", transport, timeoutMs: 2_000, resumeWindowMs: options.resumeWindowMs },
  );
  requests.length = 0;
  return { daemon, requests, mode };
}

/** A channel to a socket nobody listens at: connecting is refused. */
function refused(socket: string): Channel {
  const cause = Object.assign(new Error(`connect ECONNREFUSED ${socket}`), { code: "ECONNREFUSED" });
  const error = new ConnectionError(`cannot connect to ${socket}: ${cause.message}`, "unreachable", { cause });
  const ready = Promise.reject(error);
  ready.catch(() => undefined);
  return {
    ready,
    closed: Promise.resolve(),
    sent: false,
    send: () => Promise.reject(error),
    read: () => Promise.reject(error),
    close: () => undefined,
    destroy: () => undefined,
    unref: () => undefined,
    ref: () => undefined,
  };
}

const text = (data: string): Uint8Array => new TextEncoder().encode(data);

test("a subscription goes on across an upgrade with contiguous offsets and the same attachment", quick, async () => {
  const { daemon, requests } = await fake((_request, peer, index) => {
    if (index === 1) {
      peer.send(attached("controller", 1, 0, "hello"));
      peer.output(5, text(" wor"));
      peer.end(); // The upgrade closes the connection between two frames.
    } else {
      peer.send(attached("controller", 1, 9, "ld"));
      peer.output(11, text("!"));
      peer.send({ type: "exited", exit_code: 0, final_offset: 12, exited_at: 2 });
      peer.end();
    }
  });
  const subscription = await daemon.subscribe({ id: 3, attachmentId: "tab-1", role: "controller", takeover: "take" });
  const events: SubscriptionEvent[] = [];
  const offsets: number[] = [];
  for await (const event of subscription) {
    events.push(event);
    offsets.push(subscription.offset);
  }
  // The offset moves with the bytes yielded, never ahead of them.
  assert.deepEqual(offsets, [9, 9, 11, 12, 12]);
  assert.deepEqual(events, [
    { type: "output", start: 5, end: 9, bytes: text(" wor") },
    { type: "resumed", offset: 9, process: process3, role: "controller", generation: 1, attempts: 1 },
    { type: "output", start: 9, end: 11, bytes: text("ld") },
    { type: "output", start: 11, end: 12, bytes: text("!") },
    { type: "exited", exitCode: 0, finalOffset: 12, exitedAt: 2 },
  ]);
  assert.equal(subscription.offset, 12);
  assert.equal(subscription.endReason, "exited");
  assert.deepEqual(requests, [
    { op: "subscribe", id: 3, offset: 0, attachment_id: "tab-1", role: "controller", takeover: true },
    { op: "ping" },
    // From where output stopped, as the controller it was, without taking over.
    { op: "subscribe", id: 3, offset: 9, attachment_id: "tab-1", role: "controller", takeover: false },
  ]);
});

test("a broken connection resumes too, and a controller taken over during the break goes on as an observer", quick, async () => {
  const { daemon, requests } = await fake((_request, peer, index) => {
    if (index === 1) {
      peer.send(attached("controller", 1, 0, "hi"));
      peer.destroy();
    } else if (index === 2) {
      peer.send({ type: "error", message: "terminal already has controller tab-2" });
      peer.end();
    } else {
      peer.send(attached("observer", 2, 2, ""));
    }
  });
  const subscription = await daemon.subscribe({ id: 3, attachmentId: "tab-1", role: "controller", events: ["input"] });
  const event = await subscription.next();
  assert.deepEqual(event, { type: "resumed", offset: 2, process: process3, role: "observer", generation: 2, attempts: 2 });
  const roles = requests.filter((r) => r["op"] === "subscribe").map((r) => [r["role"], r["takeover"], r["events"]]);
  assert.deepEqual(roles, [
    ["controller", false, ["input"]],
    ["controller", false, ["input"]],
    ["observer", false, ["input"]],
  ]);
  subscription.close();
});

test("an observer told it became the controller resumes as the controller", quick, async () => {
  const { daemon, requests } = await fake((_request, peer, index) => {
    if (index === 1) {
      peer.send(attached("observer", 1, 0, ""));
      peer.send({ type: "controller_changed", attachment_id: "tab-1", generation: 2 });
      peer.end();
    } else {
      peer.send(attached("controller", 2, 0, ""));
    }
  });
  const subscription = await daemon.subscribe({ id: 3, attachmentId: "tab-1" });
  assert.equal((await subscription.next())?.type, "controller_changed");
  assert.equal((await subscription.next())?.type, "resumed");
  assert.equal(requests.at(-1)?.["role"], "controller");
  subscription.close();
});

test("another instance, no daemon left, a gone process or lost bytes end the subscription as before", quick, async () => {
  for (const ending of ["other", "refused", "gone", "lost"] as const) {
    const fakeDaemon: Fake = await fake((_request, peer, index) => {
      if (index === 1) {
        peer.send(attached("observer", 0, 0, "abc"));
        // The daemon is gone or replaced once the subscription is attached.
        if (ending === "other" || ending === "refused") fakeDaemon.mode.ping = ending;
        peer.end();
      } else if (ending === "gone") {
        peer.send({ type: "error", message: "process 3 not found" });
        peer.end();
      } else {
        // The daemon keeps output only from offset 5 on: the bytes from 3 are lost.
        peer.send({ ...attached("observer", 0, 5, "xy"), requested_offset: 3, truncated: true });
      }
    });
    const subscription = await fakeDaemon.daemon.subscribe({ id: 3, attachmentId: "a" });
    const started = Date.now();
    assert.equal(await subscription.next(), null, ending);
    assert.equal(subscription.endReason, "closed", ending);
    assert.ok(Date.now() - started < 2_000, `${ending}: ended at once`);
  }
});

test("another protocol ends the subscription with VersionMismatchError", quick, async () => {
  const { daemon, mode } = await fake((_, peer) => {
    peer.send(attached("observer", 0, 0, ""));
    peer.end();
  });
  mode.ping = "protocol-9";
  const subscription = await daemon.subscribe({ id: 3, attachmentId: "a" });
  await assert.rejects(subscription.next(), (e: unknown) => e instanceof VersionMismatchError && e.protocol === 9);
  assert.equal(subscription.endReason, "closed");
  assert.equal(await subscription.next(), null);
});

test("a daemon that never answers is given up after the window, and close() stops a resumption", quick, async () => {
  const { daemon, mode } = await fake(
    (_, peer) => {
      peer.send(attached("observer", 0, 0, ""));
      peer.end();
    },
    { resumeWindowMs: 300 },
  );
  mode.ping = "never";
  const subscription = await daemon.subscribe({ id: 3, attachmentId: "a" });
  const started = Date.now();
  assert.equal(await subscription.next(), null);
  const waited = Date.now() - started;
  assert.ok(waited >= 290 && waited < 3_000, `${waited} ms`);

  const closing = await daemon.subscribe({ id: 3, attachmentId: "b" });
  const reading = closing.next();
  setTimeout(() => closing.close(), 50);
  assert.equal(await reading, null);
  assert.equal(closing.endReason, "detached");
});

test("a daemon without the upgrade feature, or a zero window, ends at once without a ping", quick, async () => {
  for (const options of [{ features: [] }, { resumeWindowMs: 0 }]) {
    const { daemon, requests } = await fake((_, peer) => {
      peer.send(attached("observer", 0, 0, ""));
      peer.end();
    }, options);
    assert.equal(daemon.resumes, false);
    const subscription = await daemon.subscribe({ id: 3, attachmentId: "a" });
    assert.equal(await subscription.next(), null);
    assert.deepEqual(requests.map((r) => r["op"]), ["subscribe"]);
  }
});

test("wait and waitCommand are asked again; run says its command may have been typed", quick, async () => {
  const finished = { type: "command_finished", command_id: 4, exit_code: 0, output_start: 1, output_end: 2, text: "", truncated: false };
  const { daemon, requests } = await fake((request, peer, index) => {
    if (index % 2 === 1) {
      peer.end(); // Each first ask is cut by the upgrade.
    } else if (request["op"] === "wait") {
      peer.send({ type: "exited", exit_code: 0, final_offset: 0, exited_at: 2, output_lines: 1 });
      peer.end();
    } else {
      peer.send(finished);
      peer.end();
    }
  });
  assert.equal((await daemon.wait(5)).exitCode, 0);
  assert.deepEqual(requests.map((r) => r["op"]), ["wait", "ping", "wait"]);
  requests.length = 0;
  assert.equal((await daemon.waitCommand(3, 4, { timeoutMs: 60_000 })).type, "command_finished");
  const again = requests[2] as { op: string; command_id: number; timeout_ms: number };
  assert.deepEqual([requests[1]?.["op"], again.op, again.command_id], ["ping", "wait_command", 4]);
  assert.ok(again.timeout_ms <= 60_000 && again.timeout_ms > 50_000, JSON.stringify(again));
  requests.length = 0;
  await assert.rejects(
    daemon.run(3, "make"),
    (e: unknown) => e instanceof ConnectionError && e.reason === "interrupted" && /the command may have been typed/.test(e.message),
  );
  assert.deepEqual(requests.map((r) => r["op"]), ["run", "ping"]);
});

test("Owner.upgrade sends upgrade on the owner channel, with its program, and a refusal is a DaemonError", quick, async () => {
  const refusal = "upgrade is not available in this build";
  const { daemon, requests } = await fake((request, peer) => {
    if (request["op"] === "own") peer.send({ type: "owned" });
    else if (request["op"] === "upgrade" && request["program"] === undefined) peer.send({ type: "ok" });
    else if (request["op"] === "upgrade") peer.send({ type: "error", message: refusal });
  });
  const owner = await daemon.claim();
  await owner.upgrade();
  await assert.rejects(
    owner.upgrade({ program: "/opt/opencode/bin/opencode-pty" }),
    (e: unknown) => e instanceof DaemonError && e.message === refusal,
  );
  assert.deepEqual(requests.slice(1), [{ op: "upgrade" }, { op: "upgrade", program: "/opt/opencode/bin/opencode-pty" }]);
  await owner.release();
});

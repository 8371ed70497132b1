//! The error classes' contract: each has a stable `code` and a `_tag` literal that matches its name (so
//! typed-effect libraries can match on it), `TimeoutError.sent` says whether the request reached the socket,
//! and `VersionMismatchError` names the daemon's pid and protocol, from the registration and from `pong`.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import {
  AbortError,
  ConnectionError,
  Daemon,
  DaemonError,
  HandoffError,
  OpencodePtyError,
  ProtocolError,
  TimeoutError,
  VersionMismatchError,
  type ClientError,
} from "../src/index.js";
import { bounded } from "../src/node/connection.js";
import { fakeDaemon, tempDir } from "./support.js";

const limit = { timeout: 60_000 };

/** One of each class, as a caller would meet it. */
const samples: ClientError[] = [
  new DaemonError("process 7 not found"),
  new ConnectionError("no running daemon found", "not-found"),
  new ProtocolError("a malformed frame"),
  new TimeoutError("get request", 5, true),
  new VersionMismatchError(8, 9, { pid: 42 }),
  new AbortError("get request"),
  new HandoffError("the ticket expired", "expired", null, null),
];

/** What a typed-effect library does: switch on `_tag`; the compiler checks every class is handled. */
function describeByTag(error: ClientError): string {
  switch (error._tag) {
    case "DaemonError":
      return `daemon said ${error.message}`;
    case "ConnectionError":
      return `connection ${error.reason}`;
    case "ProtocolError":
      return "protocol";
    case "TimeoutError":
      return `timeout, sent ${error.sent}`;
    case "VersionMismatchError":
      return `protocol ${error.protocol} of pid ${error.pid}`;
    case "AbortError":
      return "aborted";
    case "HandoffError":
      return `handoff ${error.reason}`;
    default: {
      const unhandled: never = error;
      return unhandled;
    }
  }
}

test("every error class has a stable code and a _tag equal to its name", () => {
  const codes = samples.map((error) => error.code);
  assert.deepEqual(codes, ["DAEMON", "CONNECTION", "PROTOCOL", "TIMEOUT", "VERSION_MISMATCH", "ABORTED", "HANDOFF"]);
  for (const error of samples) {
    assert.ok(error instanceof OpencodePtyError && error instanceof Error);
    assert.equal(error._tag, error.name);
    assert.equal(error._tag, error.constructor.name);
  }
  assert.deepEqual(samples.map(describeByTag), [
    "daemon said process 7 not found",
    "connection not-found",
    "protocol",
    "timeout, sent true",
    "protocol 9 of pid 42",
    "aborted",
    "handoff expired",
  ]);
});

test("TimeoutError.sent is false when the time ran out before anything was sent", async () => {
  const never = new Promise<never>(() => undefined);
  let cancelled = 0;
  const error = await bounded("get request", { timeoutMs: 10 }, () => cancelled++, () => never).catch((e: unknown) => e);
  assert.ok(error instanceof TimeoutError && error.sent === false, String(error));
  assert.match(error.message, /nothing was sent/);
  assert.equal(cancelled, 1);
  const late = await bounded("get request", { timeoutMs: 10 }, () => undefined, () => never, () => true).catch((e: unknown) => e);
  assert.ok(late instanceof TimeoutError && late.sent === true && /the request was sent/.test(late.message));
});

test("TimeoutError.sent: a daemon that takes the request and never answers; a start that never registers", limit, async (t) => {
  const runtimeDir = await fakeDaemon(t, pinging(8));
  const daemon = await Daemon.discover({ runtimeDir, name: "fake" });
  await assert.rejects(daemon.get(1, { timeoutMs: 200 }), (e: unknown) => e instanceof TimeoutError && e.sent && e.what === "get request");
  const sleeper = join(tempDir(t), "sleeper");
  writeFileSync(sleeper, "#!/bin/sh\nexec sleep 60\n", { mode: 0o755 });
  await assert.rejects(
    Daemon.spawn({ binary: sleeper, runtimeDir: tempDir(t), name: "slow", timeoutMs: 200 }),
    (e: unknown) => e instanceof TimeoutError && !e.sent,
  );
});

test("VersionMismatchError names the daemon's pid and protocol, from the registration and from pong", limit, async (t) => {
  const registered = await fakeDaemon(t, pinging(8), 7);
  const fromFile = await Daemon.discover({ runtimeDir: registered, name: "fake" }).catch((e: unknown) => e);
  assert.ok(fromFile instanceof VersionMismatchError, String(fromFile));
  assert.deepEqual([fromFile.protocol, fromFile.pid, fromFile.expected, fromFile.found], [7, process.pid, 8, 7]);
  assert.match(fromFile.message, new RegExp(`pid ${process.pid}\\) speaks protocol 7`));
  const answered = await fakeDaemon(t, pinging(9));
  const fromPong = await Daemon.discover({ runtimeDir: answered, name: "fake" }).catch((e: unknown) => e);
  assert.ok(fromPong instanceof VersionMismatchError, String(fromPong));
  assert.deepEqual([fromPong.protocol, fromPong.pid, fromPong.code, fromPong._tag], [9, process.pid, "VERSION_MISMATCH", "VersionMismatchError"]);
});

/** A fake daemon's answers: `ping` with `pong` naming `protocol`; every other request taken and never answered. */
function pinging(protocol: number) {
  return (op: unknown, pong: Record<string, unknown>) => (op === "ping" ? { ...pong, protocol } : undefined);
}

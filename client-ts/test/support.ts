//! Shared helpers of the tests against the real daemon: a temporary runtime directory per test, a daemon
//! spawned through the client and always stopped (SIGKILL if it must) when the test ends, and bounded waits.

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";

import {
  Daemon,
  encodeControl,
  FrameDecoder,
  type Owner,
  type Spawned,
  type Subscription,
  type SubscriptionEvent,
} from "../src/index.js";

/** The daemon binary under test. */
export function binary(): string {
  const path = process.env["OPENCODE_PTY_BIN"];
  assert.ok(path, "set OPENCODE_PTY_BIN to the opencode-pty binary (cargo test runs these tests with it set)");
  return path;
}

/** The longest a test waits for one thing (20 s): generous for a loaded 2-core machine. */
export const WAIT_MS = 20_000;

/** Whether a process id is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `probe` until it returns true, for at most {@link WAIT_MS} (for state outside the protocol). */
export async function eventually(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await probe())) {
    assert.ok(Date.now() < deadline, `${what}: not within ${WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A fresh temporary directory, removed when the test ends. */
export function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), "opencode-pty-ts-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Kills `pid` when the test ends, whatever happened; then waits for it to be gone. */
export function killAtEnd(t: TestContext, pid: number): void {
  t.after(async () => {
    if (alive(pid)) {
      process.kill(pid, "SIGKILL");
    }
    await eventually(`daemon ${pid} gone`, () => !alive(pid));
  });
}

/** The daemon's record of its process groups in its directory (the server's `GROUPS_FILE`): what its guardian
 * ends once the daemon is gone, and then removes. */
const GROUPS_FILE = "service.groups";

/** Whether a record of process groups is gone (the guardian removes it once it ended them) or lists none (a
 * guardian leaves an empty record as it is). */
function noGroupsLeft(path: string): boolean {
  try {
    const record = JSON.parse(readFileSync(path, "utf8")) as { groups?: unknown[] };
    return (record.groups ?? []).length === 0;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** A daemon spawned and claimed through the client in a fresh runtime directory, killed when the test ends.
 *
 * One hook ends the test, in this order (hooks run in the order they were added): a daemon still running is
 * killed and its guardian ends what its record lists (a pipe process leads its own group and would survive the
 * daemon otherwise), then the directory is removed. Removed first, it would leave the guardian no record. A
 * daemon the test stopped is not waited for: an orderly stop removes the record itself. */
export async function spawned(t: TestContext, name = "test"): Promise<Spawned & { runtimeDir: string }> {
  const runtimeDir = mkdtempSync(join(tmpdir(), "opencode-pty-ts-"));
  let pid: number | null = null;
  t.after(async () => {
    const daemon = pid;
    if (daemon !== null && alive(daemon)) {
      process.kill(daemon, "SIGKILL");
      await eventually(`daemon ${daemon} gone`, () => !alive(daemon));
      await eventually(`its guardian's work (${GROUPS_FILE} removed)`, () => noGroupsLeft(join(runtimeDir, name, GROUPS_FILE)));
    }
    rmSync(runtimeDir, { recursive: true, force: true });
  });
  const result = await Daemon.spawn({ binary: binary(), runtimeDir, name, timeoutMs: WAIT_MS });
  pid = result.daemon.pid;
  return { ...result, runtimeDir };
}

/** Reads events until `match` accepts one, collecting the output bytes on the way; bounded by {@link WAIT_MS}. */
export async function until(
  subscription: Subscription,
  match: (event: SubscriptionEvent, output: string) => boolean,
  seen: { output: string; offset: number } = { output: "", offset: subscription.attached.endOffset },
): Promise<SubscriptionEvent> {
  const timer = setTimeout(() => subscription.close(), WAIT_MS);
  try {
    for (;;) {
      const event = await subscription.next();
      assert.ok(event, `the subscription ended before the awaited event; output so far: ${JSON.stringify(seen.output)}`);
      if (event.type === "output") {
        assert.equal(event.start, seen.offset, "output is contiguous");
        seen.offset = event.end;
        seen.output += Buffer.from(event.bytes).toString("utf8");
      }
      if (match(event, seen.output)) {
        return event;
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

/** True once the runtime directory, the socket and the daemon process are all gone. */
export function leftNothing(daemon: Daemon, runtimeDir: string): boolean {
  return !alive(daemon.pid) && !existsSync(join(runtimeDir, daemon.name)) && !existsSync(daemon.registration.socket);
}

/** Releases an owner at the end of a test that did not stop its daemon otherwise. */
export function releaseAtEnd(t: TestContext, owner: Owner): void {
  t.after(() => owner.release());
}

/** The bytes of a string. */
export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** A fake daemon in `runtimeDir/fake` (the returned `runtimeDir`) whose registration names `registered` as its
 * protocol and this process as its pid. Each request is given to `respond` with the `pong` an honest daemon
 * would answer `ping` with: it returns the answer to send (then the connection ends), `"close"` to close the
 * connection without one, or undefined to take the request and never answer. */
export async function fakeDaemon(
  t: TestContext,
  respond: (op: unknown, pong: Record<string, unknown>) => Record<string, unknown> | "close" | undefined,
  registered = 8,
): Promise<string> {
  const runtimeDir = tempDir(t);
  const dir = join(runtimeDir, "fake");
  mkdirSync(dir, { mode: 0o700 });
  const socket = join(dir, "s.sock");
  const id = "a".repeat(32);
  const pong = { type: "pong", instance_id: id, pid: process.pid, protocol: 8, features: [] };
  const connections = new Set<Socket>();
  const server = createServer((connection) => {
    connections.add(connection);
    connection.on("close", () => connections.delete(connection));
    connection.on("error", () => undefined);
    const decoder = new FrameDecoder();
    connection.on("data", (chunk: Buffer) => {
      decoder.push(new Uint8Array(chunk));
      for (let frame = decoder.next(); frame; frame = decoder.next()) {
        const request = frame.kind === "control" ? (frame.value["request"] as { op?: unknown } | undefined) : undefined;
        const answer = respond(request?.op, pong);
        if (answer === "close") connection.destroy();
        else if (answer) connection.end(encodeControl(answer));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.after(() => {
    for (const connection of connections) connection.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const registration = { instance_id: id, pid: process.pid, protocol: registered, features: [], socket, token: "b".repeat(32) };
  writeFileSync(join(dir, "service.json"), JSON.stringify(registration), { mode: 0o600 });
  return runtimeDir;
}

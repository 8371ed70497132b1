//! A subscription's own rules against the real daemon: it lets go of the caller's `AbortSignal` however it
//! ends (many subscriptions may share one long-lived signal), and the signal rejects a pending read.

import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { test } from "node:test";

import { AbortError } from "../src/index.js";
import { releaseAtEnd, spawned, until } from "./support.js";

const limit = { timeout: 60_000 };
const shell = { program: "/bin/sh", cwd: "/", env: { PS1: "$ " }, cols: 80, rows: 24 };

test("subscriptions sharing one long-lived signal remove their listener however they end", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  const warnings: Error[] = [];
  const record = (warning: Error): void => {
    warnings.push(warning);
  };
  process.on("warning", record);
  t.after(() => process.off("warning", record));
  const signal = new AbortController().signal;
  const listeners = (): number => getEventListeners(signal, "abort").length;
  const pty = await daemon.createPty(shell);
  // Closed by the caller, twelve times over: more than the default limit of ten listeners.
  for (let i = 0; i < 12; i++) {
    const subscription = await daemon.subscribe({ id: pty.id, attachmentId: `closed-${i}` }, { signal });
    assert.equal(listeners(), 1);
    subscription.close();
    assert.equal(subscription.endReason, "detached");
  }
  assert.equal(listeners(), 0);
  // Left by breaking out of the loop.
  const left = await daemon.subscribe({ id: pty.id, attachmentId: "left" }, { signal });
  await daemon.write(pty.id, null, new TextEncoder().encode("echo x\r"));
  for await (const event of left) {
    assert.equal(event.type, "output");
    break;
  }
  assert.equal(left.endReason, "detached");
  // Ended by the process's exit.
  const short = await daemon.createPty({ ...shell, args: ["-c", "exit 0"] });
  const exited = await daemon.subscribe({ id: short.id, attachmentId: "exit", offset: 0 }, { signal });
  await until(exited, (event) => event.type === "exited");
  assert.equal(exited.endReason, "exited");
  // Ended by the daemon closing it (the process was terminated).
  const terminated = await daemon.subscribe({ id: pty.id, attachmentId: "terminated" }, { signal });
  await daemon.terminate(pty.id);
  while ((await terminated.next()) !== null) {
    // Output up to the end.
  }
  assert.equal(terminated.endReason, "closed");
  assert.equal(listeners(), 0, "every subscription let go of the signal");
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(warnings.map((w) => w.name), []);
});

test("the subscribe signal rejects a pending read with AbortError and detaches", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  const pty = await daemon.createPty(shell);
  const controller = new AbortController();
  const subscription = await daemon.subscribe({ id: pty.id, attachmentId: "aborted" }, { signal: controller.signal });
  const reading = subscription.next();
  controller.abort();
  await assert.rejects(reading, (e: unknown) => e instanceof AbortError && e.code === "ABORTED");
  assert.equal(subscription.endReason, "detached");
  assert.equal(await subscription.next(), null);
  assert.equal(getEventListeners(controller.signal, "abort").length, 0);
});

test("a second next() while one waits is refused, and the first still gets its event", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  const pty = await daemon.createPty(shell);
  const subscription = await daemon.subscribe({ id: pty.id, attachmentId: "reader" });
  t.after(() => subscription.close());
  const first = subscription.next();
  await assert.rejects(subscription.next(), (e: unknown) => e instanceof TypeError && /one event at a time/.test(e.message));
  await daemon.write(pty.id, null, new TextEncoder().encode("echo one\r"));
  const event = await first;
  assert.equal(event?.type, "output");
  // Once the first read is done, reading goes on: the next read is not refused. Begun before the close, it may
  // still get an event that had already arrived (the echo comes in more than one event under load) or the end;
  // after the close every read is the end.
  const later = subscription.next();
  subscription.close();
  const value = await later;
  assert.ok(value === null || typeof value.type === "string", `not an event or the end: ${JSON.stringify(value)}`);
  assert.equal(await subscription.next(), null);
});

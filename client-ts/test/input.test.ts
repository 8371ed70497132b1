//! What a terminal waits for (SPEC §6.4) through the client against the real daemon: `features: ["input"]` on
//! the one-shot requests, `events: ["input"]` on a subscription, and nothing new for calls that name neither.

import assert from "node:assert/strict";
import { test } from "node:test";

import type { ProcessInfo, SubscriptionEvent } from "../src/index.js";
import { bytes, eventually, releaseAtEnd, spawned, until } from "./support.js";

const limit = { timeout: 60_000 };

/** `pty.input` and `pty.alternate_screen`, or `"absent"` for each member left out. */
function members(info: ProcessInfo): [unknown, unknown] {
  const pty = info.pty ?? {};
  return ["input" in pty ? pty.input : "absent", "alternate_screen" in pty ? pty.alternate_screen : "absent"];
}

test("features and events name input; calls that name nothing get protocol 8", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  assert.ok(daemon.features.includes("input"));
  const script = "printf 'name? '; read name; printf 'pass? '; stty -echo; read pass; stty echo; sleep 30";
  const pty = await daemon.createPty({ program: "/bin/sh", args: ["-c", script], cwd: "/", cols: 80, rows: 24 });
  assert.deepEqual(members(pty), ["absent", "absent"], "created");
  const watcher = await daemon.subscribe({ id: pty.id, attachmentId: "watcher", events: ["input"] });
  const plain = await daemon.subscribe({ id: pty.id, attachmentId: "plain" });
  assert.notEqual(members(watcher.attached.process)[0], "absent", "attached carries input when asked");
  assert.deepEqual(members(plain.attached.process), ["absent", "absent"], "and not otherwise");

  await eventually("the first read", async () => {
    const info = await daemon.get(pty.id, { features: ["input"] });
    return members(info)[0] === "line" && members(info)[1] === false;
  });
  assert.deepEqual(members(await daemon.get(pty.id)), ["absent", "absent"], "get without features");
  const [listed] = await daemon.list("pty", { features: ["input"] });
  assert.ok(listed);
  assert.equal(listed.pty?.input, "line");
  assert.equal((await daemon.readRows(pty.id, 1, { features: ["input"] })).process.pty?.input, "line");

  const changed = (value: string | null) => (event: SubscriptionEvent) =>
    event.type === "input_changed" && event.input === value;
  if (watcher.attached.process.pty?.input !== "line") {
    await until(watcher, changed("line"));
  }
  await daemon.write(pty.id, null, bytes("ada\r"));
  // From where the watcher has read to: the wait for "line" above may already have read the first prompt (when
  // the subscription came before it).
  const seen = { output: "", offset: watcher.offset };
  await until(watcher, changed("password"), seen);
  assert.ok(seen.output.includes("pass? "), `the prompt came before the event: ${JSON.stringify(seen.output)}`);
  assert.equal((await daemon.snapshot(pty.id, { features: ["input"] })).process.pty?.input, "password");
  await daemon.write(pty.id, null, bytes("secret\r"));
  await until(watcher, changed(null));

  // The plain subscriber saw the same output and no input_changed, up to an event after all of the above.
  await daemon.rename(pty.id, "marker");
  const plainSeen = { output: "", offset: plain.attached.endOffset };
  await until(
    plain,
    (event) => {
      assert.notEqual(event.type, "input_changed", "an event the subscriber did not ask for");
      return event.type === "title_changed";
    },
    plainSeen,
  );
  assert.ok(plainSeen.output.includes("pass? "));
  plain.close();
  watcher.close();
  await daemon.terminate(pty.id);
});

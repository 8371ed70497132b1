//! The client against the real daemon binary (`OPENCODE_PTY_BIN`): a PTY's whole life, pipe processes, lazy
//! start, shutdown, and every error class produced by a real case. Each test spawns its own daemon in a
//! temporary directory and kills it at the end, even on failure.

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { test, type TestContext } from "node:test";

import {
  AbortError,
  connectOrSpawn,
  ConnectionError,
  Daemon,
  DaemonError,
  encodeControl,
  FEATURES,
  ProtocolError,
  TimeoutError,
  VersionMismatchError,
  type SubscriptionEvent,
} from "../src/index.js";
import { alive, binary, bytes, eventually, killAtEnd, leftNothing, releaseAtEnd, spawned, tempDir, until, WAIT_MS } from "./support.js";

const limit = { timeout: 60_000 };
const shell = { program: "/bin/sh", cwd: "/", env: { PS1: "$ " }, cols: 80, rows: 24 };

test("a PTY: create, type, resize, read rows, titles, snapshot, terminate", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  assert.deepEqual(daemon.features, [...FEATURES], "the features the schema announces (SPEC V2)");
  const pty = await daemon.createPty({ ...shell, groupId: "session-1", title: "shell" });
  assert.equal(pty.mode, "pty");
  assert.equal(pty.pty?.title, "shell");
  const me = { id: pty.id, attachmentId: "ts-test", cols: 80, rows: 24 };
  const subscription = await daemon.subscribe({ id: pty.id, attachmentId: me.attachmentId, role: "controller" });
  assert.equal(subscription.attached.role, "controller");
  assert.equal(subscription.attached.replay.length, subscription.attached.endOffset - subscription.attached.availableOffset);
  const seen = { output: Buffer.from(subscription.attached.replay).toString(), offset: subscription.attached.endOffset };

  await daemon.input({ ...me, data: bytes("echo hi-$((1+2))\r") });
  await until(subscription, (_, output) => output.includes("hi-3"), seen);

  await daemon.resize(pty.id, me.attachmentId, 100, 30);
  const resized = await until(subscription, (e) => e.type === "resized", seen);
  assert.ok(resized.type === "resized" && resized.cols === 100 && resized.rows === 30);
  assert.ok(resized.checkpoint.length > 0, "the checkpoint comes as bytes");

  const rows = await daemon.readRows(pty.id);
  assert.equal(rows.lines.length, 30, "the default is the terminal's height");
  assert.equal((await daemon.readRows(pty.id, 2)).lines.length, 2);
  assert.ok(rows.lines.some((line) => line === "hi-3"), JSON.stringify(rows.lines));
  assert.equal(rows.process.pty?.cols, 100);

  await daemon.write(pty.id, me.attachmentId, bytes("printf '\\033]2;from-osc\\007'\r"));
  const osc = await until(subscription, (e) => e.type === "title_changed", seen);
  assert.deepEqual(osc, { type: "title_changed", title: "from-osc" });
  await daemon.rename(pty.id, "renamed");
  assert.deepEqual(await until(subscription, (e) => e.type === "title_changed", seen), {
    type: "title_changed",
    title: "renamed",
  });

  const snapshot = await daemon.snapshot(pty.id);
  assert.match(snapshot.text, /hi-3/);
  assert.ok(snapshot.checkpoint.length > 0);
  assert.equal(snapshot.process.pty?.user_title, "renamed");
  const replay = await daemon.replay(pty.id, 0);
  assert.equal(replay.endOffset - replay.availableOffset, replay.bytes.length);
  assert.match(Buffer.from(replay.bytes).toString(), /hi-3/);
  assert.deepEqual((await daemon.list("pty")).map((p) => p.id), [pty.id]);

  await daemon.terminate(pty.id);
  for (let event = await subscription.next(); event !== null; event = await subscription.next()) {
    assert.notEqual(event.type, "exited", "a terminated process sends no exited (SPEC N4)");
  }
  assert.equal(subscription.endReason, "closed");
  await assert.rejects(daemon.get(pty.id), (e: unknown) => e instanceof DaemonError && e.message === `process ${pty.id} not found`);
});

test("a shell with integration: one persistent bash driven by run, exit codes, text, a timeout, events", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  const home = tempDir(t);
  const env = { HOME: home, PATH: process.env["PATH"] ?? "/usr/bin:/bin" };
  const pty = await daemon.createPty({ program: "bash", cwd: home, env, cols: 80, rows: 24, shellIntegration: true });
  // Starting, unless the shell was quick enough to reach its prompt before the answer.
  assert.ok(pty.pty?.shell?.state === "starting" || pty.pty?.shell?.state === "prompt", JSON.stringify(pty.pty));
  const watcher = await daemon.subscribe({ id: pty.id, attachmentId: "watcher", events: ["commands"] });
  t.after(() => watcher.close());
  await eventually("the first prompt", async () => (await daemon.get(pty.id, { features: ["commands"] })).pty?.shell?.state === "prompt");
  // One shell keeps its state from one command to the next.
  const cd = await daemon.run(pty.id, "cd /tmp && export GREETING=hi");
  assert.ok(cd.type === "command_finished" && cd.exitCode === 0 && cd.text === "", JSON.stringify(cd));
  const second = await daemon.run(pty.id, "echo $GREETING-$PWD; false");
  assert.ok(second.type === "command_finished", JSON.stringify(second));
  assert.equal(second.exitCode, 1);
  assert.equal(second.text, "hi-/tmp");
  assert.equal(second.truncated, false);
  const replay = await daemon.replay(pty.id, second.outputStart);
  const output = Buffer.from(replay.bytes.subarray(0, second.outputEnd - second.outputStart)).toString();
  assert.equal(output, "hi-/tmp\r\n", "the offsets span the exact output");
  const listed = await daemon.commands(pty.id);
  assert.deepEqual(listed.commands.map((c) => [c.command, c.cwd, c.exit_code]), [
    ["cd /tmp && export GREETING=hi", home, 0],
    ["echo $GREETING-$PWD; false", "/tmp", 1],
  ]);
  assert.equal(listed.process.pty?.shell?.cwd, "/tmp");
  assert.equal((await daemon.commands(pty.id, 1)).commands.length, 1);
  // A command that outlasts its timeout goes on; run is refused meanwhile; waitCommand gets its end.
  const slow = await daemon.run(pty.id, "sleep 1; echo slept", { timeoutMs: 0 });
  assert.equal(slow.type, "command_running");
  await assert.rejects(
    daemon.run(pty.id, "true"),
    (e: unknown) => e instanceof DaemonError && e.message.includes(`command ${slow.commandId}`),
  );
  const slept = await daemon.waitCommand(pty.id, slow.commandId);
  assert.ok(slept.type === "command_finished", JSON.stringify(slept));
  assert.deepEqual([slept.commandId, slept.exitCode, slept.text], [slow.commandId, 0, "slept"]);
  // The subscriber that named `commands` saw each command start and end, in order with the output.
  const seen = { output: "", offset: watcher.attached.endOffset };
  const ended = await until(watcher, (e) => e.type === "command_finished" && e.commandId === slow.commandId, seen);
  assert.ok(ended.type === "command_finished" && ended.outputEnd === seen.offset, "after the command's last byte");
  assert.equal("text" in ended, false, "events carry no text");
  await daemon.terminate(pty.id);
});

test("a subscription replays from offset 0 and ends after exited", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  const pty = await daemon.createPty({ ...shell, args: ["-c", "echo bye; exit 3"] });
  const subscription = await daemon.subscribe({ id: pty.id, attachmentId: "late", offset: 0 });
  const events: SubscriptionEvent[] = [];
  let output = Buffer.from(subscription.attached.replay).toString();
  for await (const event of subscription) {
    events.push(event);
    if (event.type === "output") output += Buffer.from(event.bytes).toString();
  }
  const exited = events.at(-1);
  assert.ok(exited?.type === "exited", JSON.stringify(events.map((e) => e.type)));
  assert.equal(exited.exitCode, 3);
  assert.equal(exited.finalOffset, subscription.offset);
  assert.match(output, /bye/);
  assert.equal(subscription.endReason, "exited");
});

test("a pipe process: create, subscribe, signal, wait, metadata", limit, async (t) => {
  const { daemon, owner, runtimeDir } = await spawned(t);
  releaseAtEnd(t, owner);
  const outputPath = join(runtimeDir, "out.txt");
  const env = { PATH: "/usr/bin:/bin" };
  const quick = await daemon.createPipe({ program: "sh", args: ["-c", "echo one; echo two"], cwd: "/", env, outputPath, metadata: { tool: "x" } });
  assert.equal(quick.mode, "pipe");
  assert.deepEqual(quick.pipe?.metadata, { tool: "x" });
  const exited = await daemon.wait(quick.id);
  assert.equal(exited.exitCode, 0);
  assert.equal(exited.outputLines, 2);
  assert.equal(readFileSync(outputPath, "utf8"), "one\ntwo\n");
  await daemon.setMetadata(quick.id, { tool: "y" });
  assert.deepEqual((await daemon.get(quick.id)).pipe?.metadata, { tool: "y" });

  const slow = await daemon.createPipe({ program: "sleep", args: ["30"], cwd: "/", env, outputPath: join(runtimeDir, "slow.txt") });
  const subscription = await daemon.subscribe({ id: slow.id, attachmentId: "pipe-watch" });
  const waited = daemon.wait(slow.id);
  await daemon.signal(slow.id, "SIGTERM");
  const signalled = await waited;
  assert.equal(signalled.signal, "SIGTERM");
  assert.equal(signalled.exitCode, null);
  const event = await until(subscription, (e) => e.type === "exited");
  assert.ok(event.type === "exited" && event.signal === "SIGTERM");
  assert.equal(await subscription.next(), null);
  assert.deepEqual((await daemon.list("pipe")).map((p) => p.id), [quick.id, slow.id]);
});

test("connectOrSpawn starts a daemon when none runs and finds it when one does", limit, async (t) => {
  const runtimeDir = tempDir(t);
  const first = await connectOrSpawn({ binary: binary(), runtimeDir, name: "lazy", timeoutMs: WAIT_MS });
  killAtEnd(t, first.daemon.pid);
  assert.equal(first.spawned, true);
  assert.ok(first.owner);
  releaseAtEnd(t, first.owner);
  const second = await connectOrSpawn({ binary: binary(), runtimeDir, name: "lazy", timeoutMs: WAIT_MS });
  assert.equal(second.spawned, false);
  assert.equal(second.owner, null);
  assert.equal(second.daemon.instanceId, first.daemon.instanceId);
  assert.equal(second.daemon.pid, first.daemon.pid);
});

test("shutdown leaves no process and no files", limit, async (t) => {
  const { daemon, owner, runtimeDir } = await spawned(t);
  const pty = await daemon.createPty({ ...shell });
  const child = pty.pid ?? assert.fail("a running PTY has a pid");
  killAtEnd(t, child);
  assert.ok(alive(child));
  await owner.shutdown();
  await owner.closed;
  await eventually("daemon, runtime directory and socket gone", () => leftNothing(daemon, runtimeDir));
  await eventually("the PTY's child gone", () => !alive(child));
  await assert.rejects(daemon.ping(), (e: unknown) => e instanceof ConnectionError && e.reason === "unreachable");
  await assert.rejects(Daemon.discover({ runtimeDir, name: daemon.name }), (e: unknown) => e instanceof ConnectionError && e.reason === "not-found");
});

test("DaemonError: the daemon's own messages, and feature probing", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  await assert.rejects(daemon.get(9999), (e: unknown) => e instanceof DaemonError && e.code === "DAEMON" && e.message === "process 9999 not found");
  await assert.rejects(daemon.claim(), (e: unknown) => e instanceof DaemonError && e.message === "daemon already has a live owner");
  await assert.rejects(daemon.callRaw({ op: "teleport" }), (e: unknown) => e instanceof DaemonError && e.unsupportedOp === "teleport");
  assert.equal(await daemon.supports("teleport"), false);
  assert.equal(await daemon.supports("beam", { timeoutMs: WAIT_MS }), false);
  assert.equal(await daemon.supports("read_rows"), true);
});

test("AbortError: an aborted wait and an aborted call", limit, async (t) => {
  const { daemon, owner, runtimeDir } = await spawned(t);
  releaseAtEnd(t, owner);
  const sleeper = await daemon.createPipe({ program: "/bin/sleep", args: ["30"], cwd: "/", outputPath: join(runtimeDir, "s.txt") });
  const controller = new AbortController();
  const waiting = daemon.wait(sleeper.id, { signal: controller.signal });
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(waiting, (e: unknown) => e instanceof AbortError && e.code === "ABORTED");
  await assert.rejects(daemon.ping({ signal: AbortSignal.abort() }), AbortError);
  await daemon.terminate(sleeper.id);
});

/** A fake daemon: a registration in `runtimeDir/name` naming a socket whose connections get `answer`. */
async function impostor(t: TestContext, answer: (socket: Socket) => void, protocol = 8): Promise<string> {
  const runtimeDir = tempDir(t);
  const dir = join(runtimeDir, "fake");
  mkdirSync(dir, { mode: 0o700 });
  const socket = join(dir, "s.sock");
  const server: Server = createServer((connection) => {
    connection.on("error", () => undefined);
    connection.once("data", () => answer(connection));
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.after(() => server.unref());
  const id = "a".repeat(32);
  const registration = { instance_id: id, pid: process.pid, protocol, features: [], socket, token: "b".repeat(32) };
  writeFileSync(join(dir, "service.json"), JSON.stringify(registration), { mode: 0o600 });
  return runtimeDir;
}

const pong = { type: "pong", instance_id: "a".repeat(32), pid: process.pid, protocol: 8, features: [] };

test("ProtocolError: a malformed frame, an answer outside the schema, a wrong answer type", limit, async (t) => {
  const cases: [string, (socket: Socket) => void][] = [
    ["oversized", (s) => s.end(Buffer.from([0xff, 0xff, 0xff, 0xff]))],
    ["not json", (s) => s.end(Buffer.from([0, 0, 0, 2, 0x7b, 0x7b]))],
    ["missing members", (s) => s.end(encodeControl({ type: "pong", pid: 1 }))],
    ["wrong type", (s) => s.end(encodeControl({ type: "ok" }))],
    ["cut short", (s) => s.end(encodeControl(pong).subarray(0, 10))],
  ];
  for (const [name, answer] of cases) {
    const runtimeDir = await impostor(t, answer);
    await assert.rejects(Daemon.discover({ runtimeDir, name: "fake" }), (e: unknown) => e instanceof ProtocolError && e.code === "PROTOCOL", name);
  }
  const honest = await impostor(t, (s) => s.end(encodeControl(pong)));
  assert.equal((await Daemon.discover({ runtimeDir: honest, name: "fake" })).instanceId, "a".repeat(32));
});

test("TimeoutError: a daemon that never answers", limit, async (t) => {
  const runtimeDir = await impostor(t, () => undefined);
  await assert.rejects(Daemon.discover({ runtimeDir, name: "fake", timeoutMs: 200 }), (e: unknown) => e instanceof TimeoutError && e.code === "TIMEOUT");
});

test("VersionMismatchError: from the registration and from pong", limit, async (t) => {
  const registered = await impostor(t, (s) => s.end(encodeControl(pong)), 9);
  await assert.rejects(Daemon.discover({ runtimeDir: registered, name: "fake" }), (e: unknown) => e instanceof VersionMismatchError && e.found === 9);
  const answered = await impostor(t, (s) => s.end(encodeControl({ ...pong, protocol: 9 })));
  await assert.rejects(Daemon.discover({ runtimeDir: answered, name: "fake" }), VersionMismatchError);
});

test("ConnectionError: no daemon, an unsafe registration, an impostor's identity", limit, async (t) => {
  const empty = tempDir(t);
  await assert.rejects(Daemon.discover({ runtimeDir: empty, name: "none" }), (e: unknown) => e instanceof ConnectionError && e.reason === "not-found");
  const open = await impostor(t, (s) => s.end(encodeControl(pong)));
  chmodSync(join(open, "fake", "service.json"), 0o644);
  await assert.rejects(Daemon.discover({ runtimeDir: open, name: "fake" }), (e: unknown) => e instanceof ConnectionError && e.reason === "registration");
  const linked = await impostor(t, (s) => s.end(encodeControl(pong)));
  const real = join(linked, "fake", "service.json");
  const moved = join(linked, "elsewhere.json");
  writeFileSync(moved, readFileSync(real), { mode: 0o600 });
  rmSync(real);
  symlinkSync(moved, real);
  await assert.rejects(Daemon.discover({ runtimeDir: linked, name: "fake" }), (e: unknown) => e instanceof ConnectionError && e.reason === "registration");
  const other = await impostor(t, (s) => s.end(encodeControl({ ...pong, pid: process.pid + 1 })));
  await assert.rejects(Daemon.discover({ runtimeDir: other, name: "fake" }), (e: unknown) => e instanceof ConnectionError && e.reason === "identity");
  await assert.rejects(Daemon.discover({ runtimeDir: empty, name: "../x" }), ConnectionError);
});


test("a PTY's own history and replay bounds (feature bounds)", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  assert.ok(daemon.features.includes("bounds"), JSON.stringify(daemon.features));
  // `seq 1 20000` prints each number and CRLF.
  let printed = 0;
  for (let n = 1; n <= 20000; n++) printed += String(n).length + 2;
  const script = { ...shell, args: ["-c", "seq 1 20000; exec sleep 600"] };
  const small = await daemon.createPty({ ...script, scrollbackLines: 0, replayBytes: 4096 });
  const plain = await daemon.createPty(script);
  await eventually("both printed everything", async () =>
    (await daemon.get(small.id)).output_tail >= printed && (await daemon.get(plain.id)).output_tail >= printed);
  const kept = async (id: number) => {
    const info = await daemon.get(id);
    return info.output_tail - info.output_head;
  };
  assert.equal(await kept(small.id), 4096, "its own ring");
  assert.equal(await kept(plain.id), printed, "the daemon's 2 MiB keeps all of it");
  assert.ok((await daemon.readRows(small.id, 30000)).lines.length < 1000, "no history asked for");
  assert.ok((await daemon.readRows(plain.id, 30000)).lines.length >= 9000, "the default history");
  await assert.rejects(daemon.createPty({ ...script, replayBytes: 100 }), (error: unknown) =>
    error instanceof DaemonError && error.message.includes("replay_bytes must be from 4096 to 67108864 (got 100)"));
  await daemon.terminate(small.id);
  await daemon.terminate(plain.id);
});

test("list in pages (feature pages): every process once, in creation order, the other mode apart", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  assert.ok(daemon.features.includes("pages"), JSON.stringify(daemon.features));
  const quiet = { ...shell, args: ["-c", "read x"] };
  const ptys = [];
  for (let n = 0; n < 5; n++) {
    ptys.push((await daemon.createPty({ ...quiet, title: `t${n}` })).id);
    if (n === 2) {
      // A pipe process between them: another mode, never in a page of terminals.
      const dir = tempDir(t);
      await daemon.createPipe({ program: "/bin/sleep", args: ["600"], cwd: "/", outputPath: join(dir, "out.log") });
    }
  }
  const first = await daemon.listPage("pty", { limit: 2 });
  assert.deepEqual(first.processes.map((p) => p.id), ptys.slice(0, 2));
  assert.equal(first.next, ptys[1]);
  const last = await daemon.listPage("pty", { after: ptys[3], limit: 2 });
  assert.deepEqual(last.processes.map((p) => p.id), [ptys[4]]);
  assert.equal(last.next, undefined, "nothing follows the last page");
  for (const pageSize of [1, 2, 3, 5, 100]) {
    const all = await daemon.listAll("pty", { pageSize });
    assert.deepEqual(all.map((p) => p.id), ptys, `pages of ${pageSize}`);
  }
  assert.deepEqual((await daemon.listAll("pty")).map((p) => p.pty?.title), ["t0", "t1", "t2", "t3", "t4"]);
  assert.equal((await daemon.listAll("pipe", { pageSize: 1 })).length, 1);
  assert.deepEqual((await daemon.list("pty")).map((p) => p.id), ptys, "list without a page is unchanged");
  await assert.rejects(daemon.listPage("pty", { limit: 0 }), DaemonError, "a page holds at least one process");
  for (const id of ptys) await daemon.terminate(id);
});

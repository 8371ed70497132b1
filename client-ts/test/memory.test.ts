//! The client without a daemon binary: a `Daemon` over the in-memory transport, whose daemon is a function of
//! the test. What goes on the wire (envelopes, the `takeover` flag), what comes back (typed answers, decoded
//! bytes, events) and each way an answer can be wrong (an `error`, another type, bytes that do not span their
//! offsets, no answer at all) are checked here in milliseconds.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  ANSWERS,
  Daemon,
  DaemonError,
  memoryTransport,
  ProtocolError,
  REQUEST_OPS,
  TimeoutError,
  type MemoryPeer,
  type Registration,
} from "../src/index.js";

const quick = { timeout: 10_000 };
const examples = new URL("../../../schema/examples/valid/", import.meta.url);

/** A schema example, as the daemon would send it. */
function example(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, examples), "utf8")) as Record<string, unknown>;
}

const registration: Registration = {
  instance_id: "0123456789abcdef0123456789abcdef",
  pid: 4242,
  protocol: 8,
  features: [],
  socket: "/memory/daemon.sock",
  token: "f".repeat(32),
};
const pong = { type: "pong", instance_id: registration.instance_id, pid: registration.pid, protocol: 8, features: ["x"] };

/** What the fake daemon got: each request, in order. */
type Seen = Record<string, unknown>[];

/** A `Daemon` whose daemon answers `ping` honestly and every other request with `answer(request, peer)`:
 * an object is sent and the connection ended, `undefined` leaves the request to `answer` itself. */
async function daemonWith(
  answer: (request: Record<string, unknown>, peer: MemoryPeer) => Record<string, unknown> | undefined,
  timeoutMs = 2_000,
): Promise<{ daemon: Daemon; seen: Seen }> {
  const seen: Seen = [];
  const transport = memoryTransport((envelope, peer) => {
    assert.equal(envelope["token"], registration.token, "every envelope carries the registration's token");
    const request = envelope["request"] as Record<string, unknown>;
    if (request["op"] === "ping") {
      peer.send(pong);
      peer.end();
      return;
    }
    seen.push(request);
    const reply = answer(request, peer);
    if (reply) {
      peer.send(reply);
      peer.end();
    }
  });
  const daemon = await Daemon.fromRegistration(registration, { runtimeDir: "/memory", name: "test", transport, timeoutMs });
  return { daemon, seen };
}

test("a daemon from a registration is confirmed by ping and keeps what pong announced", quick, async () => {
  const { daemon } = await daemonWith(() => undefined);
  assert.deepEqual(daemon.features, ["x"]);
  assert.equal(daemon.instanceId, registration.instance_id);
  const impostor = memoryTransport((_, peer) => {
    peer.send({ ...pong, pid: 1 });
    peer.end();
  });
  await assert.rejects(
    Daemon.fromRegistration(registration, { runtimeDir: "/memory", name: "test", transport: impostor }),
    /answered ping with pid 1, but its registration says 4242/,
  );
});

test("typed requests send the schema's members and return the answer's useful part", quick, async () => {
  const created = example("Response.created.json");
  const { daemon, seen } = await daemonWith((request) => (request["op"] === "create_pty" ? created : { type: "ok" }));
  const info = await daemon.createPty({ program: "/bin/sh", cwd: "/", cols: 80, rows: 24 });
  assert.deepEqual(info, created["process"]);
  await daemon.write(1, null, new TextEncoder().encode("hi"));
  await daemon.resize(1, "me", 100, 30);
  assert.deepEqual(seen, [
    { op: "create_pty", program: "/bin/sh", args: [], cwd: "/", env: {}, group_id: "", title: "/bin/sh", cols: 80, rows: 24 },
    { op: "write", id: 1, attachment_id: null, data_base64: "aGk=" },
    { op: "resize", id: 1, attachment_id: "me", cols: 100, rows: 30 },
  ]);
});

test("shell integration is asked only when given, and commands come back checked", quick, async () => {
  const created = example("Response.created.json");
  const commands = example("Response.commands.json");
  const { daemon, seen } = await daemonWith((request) => (request["op"] === "commands" ? commands : created));
  await daemon.createPty({ program: "bash", cwd: "/", cols: 80, rows: 24, shellIntegration: true });
  const listed = await daemon.commands(1, 2);
  assert.deepEqual(listed.commands, commands["commands"]);
  assert.equal(listed.process.pty?.shell?.state, "running");
  await daemon.commands(1);
  assert.deepEqual(seen, [
    { op: "create_pty", program: "bash", args: [], cwd: "/", env: {}, group_id: "", title: "bash", cols: 80, rows: 24,
      shell_integration: true },
    { op: "commands", id: 1, limit: 2 },
    { op: "commands", id: 1 },
  ]);
});

test("answers with bytes come decoded and camelCase; a replay must span its offsets", quick, async () => {
  const snapshot = example("Response.snapshot.json");
  const replay = { type: "replay", requested_offset: 0, available_offset: 2, end_offset: 4, truncated: true, data_base64: "aGk=" };
  let answer: Record<string, unknown> = snapshot;
  const { daemon } = await daemonWith(() => answer);
  const screen = await daemon.snapshot(1);
  assert.equal(screen.cursorX, snapshot["cursor_x"]);
  assert.equal(new TextDecoder().decode(screen.checkpoint).startsWith("\u001b["), true);
  answer = replay;
  assert.deepEqual(await daemon.replay(1, 0), {
    requestedOffset: 0,
    availableOffset: 2,
    endOffset: 4,
    truncated: true,
    bytes: new TextEncoder().encode("hi"),
  });
  answer = { ...replay, end_offset: 5 };
  await assert.rejects(daemon.replay(1, 0), (e: unknown) => e instanceof ProtocolError && /spans 2..5 but holds 2 bytes/.test(e.message));
  answer = { ...replay, data_base64: "aGk" };
  await assert.rejects(daemon.replay(1, 0), (e: unknown) => e instanceof ProtocolError && /replay.data_base64 is not standard base64/.test(e.message));
});

test("an error answer is a DaemonError, another type a ProtocolError, no answer a TimeoutError", quick, async () => {
  let answer: Record<string, unknown> | undefined = { type: "error", message: "process 9 not found" };
  const { daemon } = await daemonWith(() => answer, 200);
  await assert.rejects(daemon.get(9), (e: unknown) => e instanceof DaemonError && e.message === "process 9 not found");
  answer = { type: "ok" };
  await assert.rejects(daemon.get(9), (e: unknown) => e instanceof ProtocolError && /answered with `ok`, expected `process`/.test(e.message));
  answer = undefined;
  await assert.rejects(daemon.get(9), (e: unknown) => e instanceof TimeoutError && e.sent);
});

test("exchange types any op's answer by the op table, and an unsupported op is remembered", quick, async () => {
  assert.deepEqual(Object.keys(ANSWERS), [...REQUEST_OPS], "every op has its answer");
  const { daemon } = await daemonWith((request) =>
    request["op"] === "list" ? { type: "processes", processes: [] } : { type: "error", message: "unsupported request: teleport" },
  );
  const listed = await daemon.exchange({ op: "list", mode: "pipe" });
  assert.equal(listed.type, "processes");
  assert.deepEqual(listed.processes, []);
  assert.equal(await daemon.supports("teleport"), false);
  assert.equal(await daemon.supports("teleport"), false, "remembered");
});

test("takeover: the enum and the deprecated boolean set the wire flag alike", quick, async () => {
  const attached = example("Response.attached.json");
  const { daemon, seen } = await daemonWith((_, peer) => {
    peer.send(attached);
    return undefined;
  });
  const ways = [undefined, "refuse", "take", false, true] as const;
  for (const takeover of ways) {
    const subscription = await daemon.subscribe({ id: 1, attachmentId: "me", role: "controller", takeover });
    subscription.close();
  }
  assert.deepEqual(
    seen.map((request) => request["takeover"]),
    [false, false, true, false, true],
  );
});

test("a subscription yields output, decoded events and the end after exited", quick, async () => {
  const attached = { ...example("Response.attached.json"), available_offset: 0, end_offset: 2, requested_offset: 0, replay_base64: "aGk=", truncated: false };
  const { daemon } = await daemonWith((_, peer) => {
    peer.send(attached);
    peer.output(2, new TextEncoder().encode("!"));
    peer.send({ type: "resized", cols: 90, rows: 20, generation: 3, checkpoint_base64: "aGk=" });
    peer.send({ type: "controller_changed", attachment_id: null, generation: 4 });
    peer.send({ type: "exited", exit_code: 0, final_offset: 3, exited_at: 5 });
    peer.end();
    return undefined;
  });
  const subscription = await daemon.subscribe({ id: 1, attachmentId: "me" });
  assert.equal(new TextDecoder().decode(subscription.attached.replay), "hi");
  const events = [];
  for await (const event of subscription) events.push(event);
  assert.deepEqual(events, [
    { type: "output", start: 2, end: 3, bytes: new TextEncoder().encode("!") },
    { type: "resized", cols: 90, rows: 20, generation: 3, checkpoint: new TextEncoder().encode("hi") },
    { type: "controller_changed", attachmentId: null, generation: 4 },
    { type: "exited", exitCode: 0, finalOffset: 3, exitedAt: 5 },
  ]);
  assert.equal(subscription.endReason, "exited");
});

test("claim, a handoff on the owner channel, and wait", quick, async () => {
  const { daemon, seen } = await daemonWith((request, peer) => {
    if (request["op"] === "own") {
      peer.send({ type: "owned" });
    } else if (request["op"] === "prepare_handoff") {
      peer.send({ type: "handoff", ticket: "t".repeat(32), expires_at: 99 });
    } else if (request["op"] === "wait") {
      return { type: "exited", exit_code: null, signal: "SIGTERM", final_offset: 0, exited_at: 7, output_lines: 2 };
    }
    return undefined;
  });
  const owner = await daemon.claim();
  assert.deepEqual(await owner.prepareHandoff(), {
    runtimeDir: "/memory",
    name: "test",
    instanceId: registration.instance_id,
    ticket: "t".repeat(32),
    expiresAt: 99,
  });
  await owner.release();
  assert.deepEqual(await daemon.wait(3), { type: "exited", exitCode: null, signal: "SIGTERM", finalOffset: 0, exitedAt: 7, outputLines: 2 });
  assert.deepEqual(seen.map((request) => request["op"]), ["own", "prepare_handoff", "wait"]);
});

test("run and waitCommand send their requests and type both answers, narrowed by type", quick, async () => {
  const finished = { type: "command_finished", command_id: 4, exit_code: 0, output_start: 100, output_end: 103, text: "ok", truncated: false };
  let answer: Record<string, unknown> = finished;
  const { daemon, seen } = await daemonWith(() => answer);
  const outcome = await daemon.run(1, "echo ok");
  assert.deepEqual(outcome, {
    type: "command_finished",
    commandId: 4,
    exitCode: 0,
    outputStart: 100,
    outputEnd: 103,
    text: "ok",
    truncated: false,
  });
  answer = { type: "command_running", command_id: 5, output_start: null };
  assert.deepEqual(await daemon.run(1, "sleep 9", { timeoutMs: 0 }), { type: "command_running", commandId: 5, outputStart: null });
  answer = { type: "command_running", command_id: 5, output_start: 200 };
  const running = await daemon.waitCommand(1, 5, { timeoutMs: 1_000 });
  assert.ok(running.type === "command_running" && running.outputStart === 200, JSON.stringify(running));
  // `exchange` takes either answer too (`OTHER_ANSWERS`).
  assert.equal((await daemon.exchange({ op: "wait_command", id: 1, command_id: 5 })).type, "command_running");
  assert.deepEqual(seen, [
    { op: "run", id: 1, command: "echo ok" },
    { op: "run", id: 1, command: "sleep 9", timeout_ms: 0 },
    { op: "wait_command", id: 1, command_id: 5, timeout_ms: 1_000 },
    { op: "wait_command", id: 1, command_id: 5 },
  ]);
});

test("a refused run is a DaemonError; an answer of another type, or without text, a ProtocolError", quick, async () => {
  const refusal = "process 1: its shell is running command 4; run needs the prompt (wait_command waits for it)";
  let answer: Record<string, unknown> = { type: "error", message: refusal };
  const { daemon } = await daemonWith(() => answer);
  await assert.rejects(daemon.run(1, "true"), (e: unknown) => e instanceof DaemonError && e.message === refusal);
  answer = { type: "ok" };
  await assert.rejects(daemon.run(1, "true"), (e: unknown) => e instanceof ProtocolError && /expected `command_finished`/.test(e.message));
  // The event's shape (no text) is not an answer.
  answer = { type: "command_finished", command_id: 4, exit_code: 0, output_start: 1, output_end: 1 };
  await assert.rejects(daemon.waitCommand(1, 4), (e: unknown) => e instanceof ProtocolError && /no `text`/.test(e.message));
});

test("run's answer is awaited past the call timeout, but not past its own timeoutMs plus it", quick, async () => {
  let late = true;
  const { daemon } = await daemonWith((_, peer) => {
    if (late) {
      setTimeout(() => {
        peer.send({ type: "command_finished", command_id: 1, exit_code: 0, output_start: 1, output_end: 1, text: "", truncated: false });
        peer.end();
      }, 300);
    }
    return undefined;
  }, 100);
  const outcome = await daemon.run(1, "sleep 0.3", { timeoutMs: 1_000 });
  assert.equal(outcome.type, "command_finished");
  late = false;
  await assert.rejects(daemon.waitCommand(1, 1, { timeoutMs: 0 }), (e: unknown) => e instanceof TimeoutError && e.sent);
});

test("a subscription whose events name commands yields command_started and command_finished", quick, async () => {
  const attached = { ...example("Response.attached.json"), available_offset: 0, end_offset: 0, requested_offset: 0, replay_base64: "", truncated: false };
  const { daemon, seen } = await daemonWith((_, peer) => {
    peer.send(attached);
    peer.send({ type: "command_started", command_id: 2, command: "ls", cwd: "/tmp", output_start: 0 });
    peer.output(0, new TextEncoder().encode("a\r\n"));
    peer.send({ type: "command_finished", command_id: 2, exit_code: 0, output_start: 0, output_end: 3 });
    peer.end();
    return undefined;
  });
  const subscription = await daemon.subscribe({ id: 1, attachmentId: "agent", events: ["commands", "input"] });
  const events = [];
  for await (const event of subscription) events.push(event);
  assert.deepEqual(events, [
    { type: "command_started", commandId: 2, command: "ls", cwd: "/tmp", outputStart: 0 },
    { type: "output", start: 0, end: 3, bytes: new TextEncoder().encode("a\r\n") },
    { type: "command_finished", commandId: 2, exitCode: 0, outputStart: 0, outputEnd: 3 },
  ]);
  assert.deepEqual(seen[0]?.["events"], ["commands", "input"]);
});

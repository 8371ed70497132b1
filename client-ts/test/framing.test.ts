//! The platform-neutral core without a daemon: framing (SPEC §2) under every way of splitting the stream, each
//! malformed case refused with `ProtocolError`, and the schema checks against every example in `schema/examples`.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { base64Decode, base64Encode, utf8Encode } from "../src/core/bytes.js";
import { KNOWN_KEYWORDS, problemWith } from "../src/core/check.js";
import { ProtocolError } from "../src/core/errors.js";
import { encodeControl, encodeOutput, FrameDecoder, MAX_FRAME_BYTES, type Frame, type JsonObject } from "../src/core/frame.js";
import { SCHEMA_DEFINITIONS } from "../src/generated/schema.js";

const examples = new URL("../../../schema/examples/", import.meta.url);
const quick = { timeout: 10_000 };

/** A deterministic generator, so a failure is reproducible. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function frameBytes(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + payload.length);
  new DataView(out.buffer).setUint32(0, payload.length);
  out.set(payload, 4);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Feeds `stream` to a fresh decoder in chunks of the sizes `next` gives, then ends it. */
function decodeAll(stream: Uint8Array, next: () => number): Frame[] {
  const decoder = new FrameDecoder();
  const frames: Frame[] = [];
  for (let at = 0; at < stream.length; ) {
    const size = Math.max(1, Math.floor(next()));
    decoder.push(stream.slice(at, at + size));
    at += size;
    for (let frame = decoder.next(); frame; frame = decoder.next()) frames.push(frame);
  }
  decoder.finish();
  return frames;
}

function comparable(frames: Frame[]): unknown[] {
  return frames.map((f) => (f.kind === "output" ? { ...f, bytes: [...f.bytes] } : f));
}

test("the same frames decode identically whatever the chunk sizes", quick, () => {
  const bytes = new Uint8Array(3000).map((_, i) => (i * 7) % 256);
  const stream = concat([
    encodeControl({ type: "ok" }),
    encodeOutput(0, bytes),
    encodeOutput(3000, new Uint8Array(0)),
    encodeControl({ type: "title_changed", title: "é 🎉 \u0000" }),
    encodeOutput(3000, bytes.subarray(0, 5)),
  ]);
  const whole = comparable(decodeAll(stream, () => stream.length));
  assert.equal(whole.length, 5);
  assert.deepEqual(comparable(decodeAll(stream, () => 1)), whole);
  for (let seed = 1; seed <= 200; seed++) {
    const next = random(seed);
    const max = 1 + Math.floor(next() * 64);
    assert.deepEqual(comparable(decodeAll(stream, () => 1 + next() * max)), whole, `seed ${seed}`);
  }
});

test("a header declaring more than 8 MiB fails as soon as the header is in", quick, () => {
  const decoder = new FrameDecoder();
  const header = new Uint8Array(4);
  new DataView(header.buffer).setUint32(0, MAX_FRAME_BYTES + 1);
  decoder.push(header.subarray(0, 3));
  assert.equal(decoder.next(), null);
  decoder.push(header.subarray(3));
  assert.throws(() => decoder.next(), ProtocolError);
  assert.throws(() => decoder.next(), ProtocolError, "the decoder keeps failing (SPEC F11)");
  // Exactly the limit is allowed: the decoder waits for the payload.
  const limit = new FrameDecoder();
  new DataView(header.buffer).setUint32(0, MAX_FRAME_BYTES);
  limit.push(header);
  assert.equal(limit.next(), null);
});

test("a stream cut inside a header or a payload fails; one cut between frames ends cleanly", quick, () => {
  const frame = encodeControl({ type: "ok" });
  for (let cut = 1; cut < frame.length; cut++) {
    const decoder = new FrameDecoder();
    decoder.push(frame.slice(0, cut));
    assert.equal(decoder.next(), null);
    assert.throws(() => decoder.finish(), ProtocolError, `cut at ${cut}`);
  }
  const decoder = new FrameDecoder();
  decoder.push(frame);
  assert.ok(decoder.next());
  decoder.finish();
});

test("malformed payloads fail with ProtocolError", quick, () => {
  const output = (start: bigint, end: bigint, count: number): Uint8Array => {
    const payload = new Uint8Array(17 + count);
    const view = new DataView(payload.buffer);
    view.setBigUint64(1, start);
    view.setBigUint64(9, end);
    return payload;
  };
  const cases: [string, Uint8Array][] = [
    ["an empty payload", new Uint8Array(0)],
    ["invalid UTF-8", new Uint8Array([0x7b, 0xff, 0x7d])],
    ["not JSON", utf8Encode("{nope")],
    ["a JSON array", utf8Encode("[1]")],
    ["JSON null", utf8Encode("null")],
    ["a JSON string", utf8Encode('"x"')],
    ["an output frame under 17 bytes", new Uint8Array(16)],
    ["an output frame ending before it starts", output(10n, 9n, 0)],
    ["an output frame whose span is not its length", output(0n, 3n, 2)],
    ["an output frame beyond 2^53 - 1", output(2n ** 60n, 2n ** 60n, 0)],
  ];
  for (const [name, payload] of cases) {
    const decoder = new FrameDecoder();
    decoder.push(frameBytes(payload));
    assert.throws(() => decoder.next(), ProtocolError, name);
  }
  // JSON whitespace around the object is tolerated (SPEC F5).
  const decoder = new FrameDecoder();
  decoder.push(frameBytes(utf8Encode(' \n{"type":"ok"} ')));
  assert.deepEqual(decoder.next(), { kind: "control", value: { type: "ok" } });
});

test("an oversized request is refused before anything is sent", quick, () => {
  assert.throws(() => encodeControl({ data: "x".repeat(MAX_FRAME_BYTES) }), ProtocolError);
});

test("base64 round-trips and refuses what is not standard base64 with padding", quick, () => {
  for (let n = 0; n < 40; n++) {
    const bytes = new Uint8Array(n).map((_, i) => (i * 37 + n) % 256);
    const text = base64Encode(bytes);
    assert.equal(text, Buffer.from(bytes).toString("base64"));
    assert.deepEqual(base64Decode(text), bytes);
  }
  for (const bad of ["a", "abc", "ab=c", "a===", "ab-_", "QR==", "é123", "====", "=AAA", "AB=A", "QUJ=", "AAAA====", "AA==AAAA", "AAA\u0100"]) {
    assert.equal(base64Decode(bad), null, bad);
  }
});

test("base64 round-trips 8 MiB of random bytes exactly as Node's Buffer codes them", quick, () => {
  const next = random(8);
  const bytes = new Uint8Array(8 * 1024 * 1024 + 1).map(() => Math.floor(next() * 256));
  const text = base64Encode(bytes);
  assert.equal(text, Buffer.from(bytes).toString("base64"));
  const back = base64Decode(text);
  assert.ok(back);
  assert.equal(Buffer.compare(back, bytes), 0);
});

/** Each example of a kind: its file name, its root definition, its value and its text as written. */
function exampleFiles(kind: string): [string, string, unknown, string][] {
  const dir = new URL(`${kind}/`, examples);
  return readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .map((file) => {
      const text = readFileSync(new URL(file, dir), "utf8");
      return [file, file.split(".")[0] ?? "", JSON.parse(text) as unknown, text];
    });
}

test("every valid schema example fits, decodes from a frame and re-encodes to identical JSON", quick, () => {
  const valid = [...exampleFiles("valid"), ...exampleFiles("decode-only")];
  assert.ok(valid.length > 50);
  for (const [file, root, value, text] of valid) {
    assert.equal(problemWith(root, value), null, file);
    const frame = encodeControl(value as JsonObject);
    const decoder = new FrameDecoder();
    decoder.push(frame);
    const decoded = decoder.next();
    assert.ok(decoded && decoded.kind === "control", file);
    // The example files are canonical JSON (two-space indent, a final newline): the
    // decoded value written the same way must be the file's own text, byte for byte.
    assert.equal(`${JSON.stringify(decoded.value, null, 2)}\n`, text, file);
    assert.deepEqual(encodeControl(decoded.value), frame, file);
    if (root === "OutputFrame") {
      const { start, data_base64 } = value as { start: number; data_base64: string };
      const bytes = base64Decode(data_base64) ?? assert.fail(file);
      const out = new FrameDecoder();
      out.push(encodeOutput(start, bytes));
      const back = out.next();
      assert.ok(back?.kind === "output");
      assert.deepEqual({ type: "output", start: back.start, end: back.end, data_base64: base64Encode(back.bytes) }, value);
    }
  }
});

test("every invalid schema example is refused by the runtime checks", quick, () => {
  const invalid = exampleFiles("invalid");
  assert.ok(invalid.length > 10);
  for (const [file, root, value] of invalid) {
    assert.notEqual(problemWith(root, value), null, file);
  }
  assert.match(problemWith("Response", { type: "handoff", ticket: "t" }) ?? "", /expires_at is missing/);
  assert.match(problemWith("Response", { type: "teleported" }) ?? "", /none of the known type values/);
  assert.equal(problemWith("Response", { type: "ok", added_later: 1 }), null, "unknown members are ignored (V6)");
});

test("lengths are counted in characters (code points), as the schema counts them", quick, () => {
  // 256 characters that take 512 UTF-16 units fit the 256-character title; one more does not.
  const emoji = "\u{1F600}";
  assert.equal(problemWith("Response", { type: "title_changed", title: emoji.repeat(256) }), null);
  assert.match(problemWith("Response", { type: "title_changed", title: emoji.repeat(257) }) ?? "", /257 characters long, over 256/);
});

test("the checker knows every keyword the generated schema uses", quick, () => {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== "object" || node === null) return;
    for (const [key, child] of Object.entries(node)) {
      assert.ok(KNOWN_KEYWORDS.has(key), `unknown keyword ${key}`);
      if (key === "properties") Object.values(child as object).forEach(walk);
      else if (key !== "const" && key !== "enum" && key !== "required") walk(child);
    }
  };
  Object.values(SCHEMA_DEFINITIONS).forEach(walk);
});

test("a subscription refuses a gap or overlap in its output, and anything after exited", quick, async () => {
  const { SubscriptionState } = await import("../src/core/subscription-state.js");
  const output = (start: number, count: number): Frame => ({ kind: "output", start, end: start + count, bytes: new Uint8Array(count) });
  const state = new SubscriptionState(10);
  assert.deepEqual(state.accept(output(10, 5)), { type: "output", start: 10, end: 15, bytes: new Uint8Array(5) });
  assert.throws(() => state.accept(output(16, 1)), ProtocolError, "a gap");
  assert.throws(() => new SubscriptionState(10).accept(output(9, 2)), ProtocolError, "an overlap");
  const exited = { kind: "control", value: { type: "exited", exit_code: 0, final_offset: 15, exited_at: 1 } } as const;
  assert.deepEqual(state.accept(exited), { type: "exited", exitCode: 0, finalOffset: 15, exitedAt: 1 }, "camelCase like every event");
  assert.throws(() => state.accept(output(15, 1)), ProtocolError, "after exited");
  assert.throws(() => new SubscriptionState(0).accept({ kind: "control", value: { type: "pong" } }), ProtocolError);
  const pipe = { type: "exited", exit_code: null, signal: "SIGTERM", final_offset: 0, exited_at: 2, output_lines: 3, output_error: "disk full" };
  assert.deepEqual(new SubscriptionState(0).accept({ kind: "control", value: pipe }), {
    type: "exited",
    exitCode: null,
    signal: "SIGTERM",
    finalOffset: 0,
    exitedAt: 2,
    outputLines: 3,
    outputError: "disk full",
  });
});

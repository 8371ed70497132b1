/**
 * A fuzz loop for the client's frame decoder (SPEC §2): valid frame streams built from the schema's examples,
 * mutated (bytes flipped, inserted, removed, lengths rewritten, streams cut), fed in random pieces. Whatever
 * the input, the decoder must only yield frames or throw `ProtocolError`, never anything else; it must decide
 * the same (frames, then the same error or none) however the stream is split; and every frame it yields must
 * encode back to itself. `node build-test/test/fuzz-framer.js SECONDS [SEED]` runs it (`just fuzz ts-framer`);
 * `framing-fuzz.test.ts` runs a short fixed-seed round in the test command.
 */

import { readdirSync, readFileSync } from "node:fs";

import { ProtocolError } from "../src/core/errors.js";
import { encodeControl, encodeOutput, FrameDecoder, type Frame, type JsonObject } from "../src/core/frame.js";

/** What one fuzz run did. */
export interface FuzzReport {
  executions: number;
  frames: number;
  errors: number;
}

/** A deterministic generator (so a failing seed is reproducible). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Frames encoded from every JSON example in `schema/examples`, and a few output frames. */
function seedFrames(): Uint8Array[] {
  const root = new URL("../../../schema/examples/", import.meta.url);
  const frames: Uint8Array[] = [];
  for (const kind of ["valid", "invalid", "decode-only"]) {
    for (const name of readdirSync(new URL(`${kind}/`, root))) {
      const value: unknown = JSON.parse(readFileSync(new URL(`${kind}/${name}`, root), "utf8"));
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        frames.push(encodeControl(value as JsonObject));
      }
    }
  }
  frames.push(encodeOutput(0, new Uint8Array(0)), encodeOutput(5120, new TextEncoder().encode("\u001b[32mok\r\n")));
  return frames;
}

/** The outcome of decoding `stream` in pieces of the sizes `piece` gives: the frames, then the error if any. */
function decode(stream: Uint8Array, piece: () => number): { frames: Frame[]; error: string | null } {
  const decoder = new FrameDecoder();
  const frames: Frame[] = [];
  try {
    for (let at = 0; at < stream.length; ) {
      const size = Math.max(1, Math.floor(piece()));
      decoder.push(stream.slice(at, at + size));
      at += size;
      for (let frame = decoder.next(); frame; frame = decoder.next()) frames.push(frame);
    }
    decoder.finish();
    return { frames, error: null };
  } catch (error) {
    if (!(error instanceof ProtocolError)) {
      throw new Error(`the decoder threw something other than a ProtocolError: ${String(error)}`);
    }
    return { frames, error: error.message };
  }
}

/** A frame as plain data, to compare. */
function plain(frame: Frame): unknown {
  return frame.kind === "output" ? { ...frame, bytes: [...frame.bytes] } : frame;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** One mutated stream from the seeds. */
function mutate(seeds: Uint8Array[], next: () => number): Uint8Array {
  const parts: number[] = [];
  const count = 1 + Math.floor(next() * 4);
  for (let i = 0; i < count; i++) parts.push(...seeds[Math.floor(next() * seeds.length)]!);
  const edits = Math.floor(next() * 6);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(next() * (parts.length + 1));
    switch (Math.floor(next() * 5)) {
      case 0:
        parts[at] = Math.floor(next() * 256);
        break;
      case 1:
        parts.splice(at, 0, Math.floor(next() * 256));
        break;
      case 2:
        parts.splice(at, 1 + Math.floor(next() * 8));
        break;
      case 3: {
        // A length header rewritten: small, huge, or just over the limit.
        const length = [0, 1, 16, 17, 8 * 1024 * 1024, 8 * 1024 * 1024 + 1, 0xffffffff][Math.floor(next() * 7)]!;
        parts.splice(at, 4, length >>> 24, (length >>> 16) & 255, (length >>> 8) & 255, length & 255);
        break;
      }
      default:
        parts.length = at;
    }
  }
  return Uint8Array.from(parts.filter((b) => b !== undefined));
}

/** Runs the loop for `milliseconds` from `seed`; throws on the first finding, naming the seed and input. */
export function fuzzFramer(milliseconds: number, seed: number): FuzzReport {
  const seeds = seedFrames();
  const next = random(seed);
  const report: FuzzReport = { executions: 0, frames: 0, errors: 0 };
  const until = Date.now() + milliseconds;
  while (Date.now() < until) {
    const stream = mutate(seeds, next);
    const whole = decode(stream, () => stream.length);
    const max = 1 + Math.floor(next() * 32);
    const split = decode(stream, () => 1 + next() * max);
    if (!same(whole.frames.map(plain), split.frames.map(plain)) || whole.error !== split.error) {
      throw new Error(`seed ${seed}, run ${report.executions}: splitting changed the outcome of ${Buffer.from(stream).toString("hex")}`);
    }
    for (const frame of whole.frames) {
      const encoded = frame.kind === "output" ? encodeOutput(frame.start, frame.bytes) : encodeControl(frame.value);
      const again = decode(encoded, () => encoded.length);
      if (again.error !== null || again.frames.length !== 1 || !same(plain(again.frames[0]!), plain(frame))) {
        throw new Error(`seed ${seed}: a decoded frame does not survive encoding: ${JSON.stringify(plain(frame))}`);
      }
    }
    report.executions += 1;
    report.frames += whole.frames.length;
    report.errors += whole.error === null ? 0 : 1;
  }
  return report;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seconds = Number(process.argv[2] ?? "60");
  const seed = Number(process.argv[3] ?? Date.now() % 2 ** 31);
  const report = fuzzFramer(seconds * 1000, seed);
  console.log(`ts-framer: seed ${seed}, ${seconds} s: ${report.executions} executions, ${report.frames} frames, ${report.errors} streams refused, no finding`);
}

//! Framing (SPEC §2): encoding request frames and a streaming decoder that turns bytes, split any way, into
//! control frames (JSON objects) and output frames, refusing every malformed case with a `ProtocolError`.

import { utf8Decode, utf8Encode } from "./bytes.js";
import { ProtocolError } from "./errors.js";

/** Bytes of the length header in front of every payload (SPEC F1). */
export const FRAME_HEADER_BYTES = 4;
/** The largest payload a frame may declare, 8 MiB (SPEC F2). */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;
/** The first payload byte of an output frame (SPEC F4). */
export const OUTPUT_TAG = 0x00;
/** Tag byte plus the two u64 offsets of an output frame (SPEC F6). */
export const OUTPUT_PREFIX_BYTES = 17;
/** The largest offset this client represents exactly, 2^53 − 1 (SPEC M4). */
export const MAX_SAFE_OFFSET = Number.MAX_SAFE_INTEGER;

/** A JSON object as decoded from a control frame, not yet checked against the schema. */
export type JsonObject = { [member: string]: unknown };

/** One decoded frame. */
export type Frame =
  | { readonly kind: "control"; readonly value: JsonObject }
  | { readonly kind: "output"; readonly start: number; readonly end: number; readonly bytes: Uint8Array };

/** Encodes a JSON object as a control frame; refuses one whose payload would exceed {@link MAX_FRAME_BYTES}. */
export function encodeControl(value: JsonObject): Uint8Array {
  const payload = utf8Encode(JSON.stringify(value));
  if (payload.length > MAX_FRAME_BYTES) {
    throw new ProtocolError(`a ${payload.length}-byte request exceeds the ${MAX_FRAME_BYTES}-byte frame limit`);
  }
  const frame = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  new DataView(frame.buffer).setUint32(0, payload.length);
  frame.set(payload, FRAME_HEADER_BYTES);
  return frame;
}

/** Encodes an output frame (only daemons send them; the client's tests and fakes use this). */
export function encodeOutput(start: number, bytes: Uint8Array): Uint8Array {
  const length = OUTPUT_PREFIX_BYTES + bytes.length;
  if (length > MAX_FRAME_BYTES) {
    throw new ProtocolError(`a ${bytes.length}-byte output frame exceeds the ${MAX_FRAME_BYTES}-byte frame limit`);
  }
  const frame = new Uint8Array(FRAME_HEADER_BYTES + length);
  const view = new DataView(frame.buffer);
  view.setUint32(0, length);
  frame[FRAME_HEADER_BYTES] = OUTPUT_TAG;
  view.setBigUint64(FRAME_HEADER_BYTES + 1, BigInt(start));
  view.setBigUint64(FRAME_HEADER_BYTES + 9, BigInt(start + bytes.length));
  frame.set(bytes, FRAME_HEADER_BYTES + OUTPUT_PREFIX_BYTES);
  return frame;
}

/**
 * A streaming decoder (SPEC F9): {@link push} bytes as they arrive, take frames with {@link next} (null means
 * "need more bytes"), and call {@link finish} at the end of the stream. A declared length over the limit fails
 * as soon as the header is in, before any room is made for the payload (F2). After an error the decoder keeps
 * failing: the peer is broken (F11).
 */
export class FrameDecoder {
  /** Received chunks not yet consumed; the first may be partly consumed up to {@link offset}. */
  private chunks: Uint8Array[] = [];
  /** Bytes of the first chunk already consumed. */
  private offset = 0;
  /** Total unconsumed bytes. */
  private buffered = 0;
  /** The error that broke the stream, repeated by every later call. */
  private failure: ProtocolError | null = null;

  /** Unconsumed bytes held (at most one frame's payload plus one read's worth beyond it). */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Adds received bytes. The decoder keeps a reference to `bytes`; the caller must not reuse the buffer. */
  push(bytes: Uint8Array): void {
    if (bytes.length > 0) {
      this.chunks.push(bytes);
      this.buffered += bytes.length;
    }
  }

  /** The next complete frame, or null when more bytes are needed. Throws `ProtocolError` on a malformed frame. */
  next(): Frame | null {
    if (this.failure) {
      throw this.failure;
    }
    if (this.buffered < FRAME_HEADER_BYTES) {
      return null;
    }
    const header = this.peek(FRAME_HEADER_BYTES);
    const length = new DataView(header.buffer, header.byteOffset, FRAME_HEADER_BYTES).getUint32(0);
    if (length > MAX_FRAME_BYTES) {
      return this.fail(`the daemon declared a ${length}-byte frame, over the ${MAX_FRAME_BYTES}-byte limit`);
    }
    if (length === 0) {
      return this.fail("the daemon sent an empty frame");
    }
    if (this.buffered < FRAME_HEADER_BYTES + length) {
      return null;
    }
    this.take(FRAME_HEADER_BYTES);
    const payload = this.take(length);
    return payload[0] === OUTPUT_TAG ? this.output(payload) : this.control(payload);
  }

  /** Checks the end of the stream (SPEC F10): throws `ProtocolError` when it cut a frame. */
  finish(): void {
    if (this.failure) {
      throw this.failure;
    }
    if (this.buffered === 0) {
      return;
    }
    if (this.buffered < FRAME_HEADER_BYTES) {
      this.fail(`the stream ended inside a frame header (${this.buffered} of ${FRAME_HEADER_BYTES} bytes)`);
    }
    const header = this.peek(FRAME_HEADER_BYTES);
    const length = new DataView(header.buffer, header.byteOffset, FRAME_HEADER_BYTES).getUint32(0);
    this.fail(`the stream ended inside a frame (${this.buffered - FRAME_HEADER_BYTES} of ${length} payload bytes)`);
  }

  private control(payload: Uint8Array): Frame {
    let text: string;
    try {
      text = utf8Decode(payload);
    } catch {
      return this.fail(`a ${payload.length}-byte control frame is not UTF-8`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return this.fail(`a ${payload.length}-byte control frame is not JSON: ${String(error)}`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      const found = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
      return this.fail(`a control frame holds ${found}, not a JSON object`);
    }
    return { kind: "control", value: value as JsonObject };
  }

  private output(payload: Uint8Array): Frame {
    if (payload.length < OUTPUT_PREFIX_BYTES) {
      return this.fail(`an output frame of ${payload.length} bytes is shorter than its ${OUTPUT_PREFIX_BYTES}-byte prefix`);
    }
    const view = new DataView(payload.buffer, payload.byteOffset, OUTPUT_PREFIX_BYTES);
    const start = view.getBigUint64(1);
    const end = view.getBigUint64(9);
    if (end < start) {
      return this.fail(`an output frame ends (${end}) before it starts (${start})`);
    }
    const count = payload.length - OUTPUT_PREFIX_BYTES;
    if (end - start !== BigInt(count)) {
      return this.fail(`an output frame spans ${start}..${end} but carries ${count} bytes`);
    }
    if (end > BigInt(MAX_SAFE_OFFSET)) {
      return this.fail(`an output frame's end offset ${end} is beyond 2^53 - 1`);
    }
    return { kind: "output", start: Number(start), end: Number(end), bytes: payload.subarray(OUTPUT_PREFIX_BYTES) };
  }

  private fail(message: string): never {
    this.failure = new ProtocolError(message);
    throw this.failure;
  }

  /** The first `count` buffered bytes, without consuming them (count ≤ buffered). */
  private peek(count: number): Uint8Array {
    const first = this.chunks[0];
    if (first && first.length - this.offset >= count) {
      return first.subarray(this.offset, this.offset + count);
    }
    return this.copy(count, false);
  }

  /** Consumes and returns the first `count` buffered bytes (count ≤ buffered). */
  private take(count: number): Uint8Array {
    const first = this.chunks[0];
    if (first && first.length - this.offset >= count) {
      const out = first.subarray(this.offset, this.offset + count);
      this.offset += count;
      this.buffered -= count;
      if (this.offset === first.length) {
        this.chunks.shift();
        this.offset = 0;
      }
      return out;
    }
    return this.copy(count, true);
  }

  private copy(count: number, consume: boolean): Uint8Array {
    const out = new Uint8Array(count);
    let filled = 0;
    let index = 0;
    let offset = this.offset;
    while (filled < count) {
      const chunk = this.chunks[index];
      if (!chunk) {
        throw new Error("FrameDecoder: fewer bytes buffered than asked for");
      }
      const piece = chunk.subarray(offset, Math.min(chunk.length, offset + count - filled));
      out.set(piece, filled);
      filled += piece.length;
      offset += piece.length;
      if (offset === chunk.length) {
        index++;
        offset = 0;
      }
    }
    if (consume) {
      this.chunks.splice(0, index);
      this.offset = offset;
      this.buffered -= count;
    }
    return out;
  }
}

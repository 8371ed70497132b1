//! UTF-8 and base64 over `Uint8Array`, without any platform's types: the core runs on Node, Bun and Deno alike.

import { ProtocolError } from "./errors.js";

/** The subset of the WHATWG `TextEncoder` the core uses; every supported runtime has it as a global. */
interface Utf8Encoder {
  encode(input: string): Uint8Array;
}

/** The subset of the WHATWG `TextDecoder` the core uses. */
interface Utf8Decoder {
  decode(input: Uint8Array): string;
}

declare const TextEncoder: { new (): Utf8Encoder };
declare const TextDecoder: { new (label: string, options: { fatal: boolean }): Utf8Decoder };

const encoder = new TextEncoder();
/** Strict: invalid UTF-8 throws instead of turning into U+FFFD (SPEC F5). */
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Encodes a string as UTF-8. */
export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Decodes UTF-8; throws a `TypeError` on invalid input. */
export function utf8Decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/** The ASCII code of each 6-bit value. */
const ENCODE = new Uint8Array(64);
/** The 6-bit value of each byte of encoded text, or {@link INVALID}. */
const DECODE = new Uint8Array(256).fill(255);
const INVALID = 255;
const PAD = 61; // "="
for (let i = 0; i < ALPHABET.length; i++) {
  ENCODE[i] = ALPHABET.charCodeAt(i);
  DECODE[ALPHABET.charCodeAt(i)] = i;
}
/** Encoded text is ASCII: decoding it as UTF-8 is exact, and never fails. */
const ascii = new TextDecoder("utf-8", { fatal: true });

/** Standard base64 with padding (SPEC M5). The text is built as bytes in one preallocated array and turned into
 * a string once, so a multi-megabyte replay or checkpoint costs milliseconds, not seconds. */
export function base64Encode(bytes: Uint8Array): string {
  const out = new Uint8Array(Math.ceil(bytes.length / 3) * 4);
  const whole = bytes.length - (bytes.length % 3);
  let o = 0;
  for (let i = 0; i < whole; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o] = ENCODE[n >>> 18]!;
    out[o + 1] = ENCODE[(n >>> 12) & 63]!;
    out[o + 2] = ENCODE[(n >>> 6) & 63]!;
    out[o + 3] = ENCODE[n & 63]!;
    o += 4;
  }
  const rest = bytes.length - whole;
  if (rest > 0) {
    const n = (bytes[whole]! << 16) | (rest === 2 ? bytes[whole + 1]! << 8 : 0);
    out[o] = ENCODE[n >>> 18]!;
    out[o + 1] = ENCODE[(n >>> 12) & 63]!;
    out[o + 2] = rest === 2 ? ENCODE[(n >>> 6) & 63]! : PAD;
    out[o + 3] = PAD;
  }
  return ascii.decode(out);
}

/** Decodes standard base64 with padding into one preallocated array; returns null for anything else: a length
 * that is not a multiple of 4, a character outside the standard alphabet, padding anywhere but at the end (at
 * most two), or stray bits under the padding (a non-canonical encoding), so decoding is exact. */
export function base64Decode(text: string): Uint8Array | null {
  if (text.length % 4 !== 0) {
    return null;
  }
  // A character beyond ASCII becomes two or more bytes, so the lengths differ; one in ASCII maps through DECODE.
  const codes = encoder.encode(text);
  if (codes.length !== text.length) {
    return null;
  }
  const padding = codes.length === 0 ? 0 : codes[codes.length - 1] !== PAD ? 0 : codes[codes.length - 2] === PAD ? 2 : 1;
  const out = new Uint8Array((codes.length / 4) * 3 - padding);
  const whole = padding === 0 ? codes.length : codes.length - 4;
  let o = 0;
  for (let i = 0; i < whole; i += 4) {
    const a = DECODE[codes[i]!]!;
    const b = DECODE[codes[i + 1]!]!;
    const c = DECODE[codes[i + 2]!]!;
    const d = DECODE[codes[i + 3]!]!;
    // Every value is at most 63, so the union reaches INVALID (255) exactly when one of them is INVALID.
    if ((a | b | c | d) === INVALID) {
      return null;
    }
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[o] = n >>> 16;
    out[o + 1] = (n >>> 8) & 255;
    out[o + 2] = n & 255;
    o += 3;
  }
  if (padding > 0) {
    const a = DECODE[codes[whole]!]!;
    const b = DECODE[codes[whole + 1]!]!;
    const c = padding === 1 ? DECODE[codes[whole + 2]!]! : 0;
    if (a === INVALID || b === INVALID || c === INVALID) {
      return null;
    }
    // The bits under the padding must be zero: otherwise two texts would decode to the same bytes.
    if (padding === 2 ? (b & 15) !== 0 : (c & 3) !== 0) {
      return null;
    }
    const n = (a << 18) | (b << 12) | (c << 6);
    out[o] = n >>> 16;
    if (padding === 1) {
      out[o + 1] = (n >>> 8) & 255;
    }
  }
  return out;
}

/** Decodes a base64 member of a response (which the schema only types as a string); `member` names it
 * (`snapshot.checkpoint_base64`) in the `ProtocolError` for anything but standard base64 with padding. */
export function bytesOf(text: string, member: string): Uint8Array {
  const bytes = base64Decode(text);
  if (bytes === null) {
    throw new ProtocolError(`${member} is not standard base64 with padding`);
  }
  return bytes;
}

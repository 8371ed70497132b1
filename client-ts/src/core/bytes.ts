//! UTF-8 and base64 over `Uint8Array`, without any platform's types: the core runs on Node, Bun and Deno alike.

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
const VALUES = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) {
  VALUES[ALPHABET.charCodeAt(i)] = i;
}

/** Standard base64 with padding (SPEC M5). */
export function base64Encode(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] ?? 0) << 16;
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63]! + "==";
  } else if (rest === 2) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + "=";
  }
  return out;
}

/** Decodes standard base64 with padding; returns null for anything else (wrong length, alphabet or padding). */
export function base64Decode(text: string): Uint8Array | null {
  if (text.length % 4 !== 0) {
    return null;
  }
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - padding);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const last = i + 4 === text.length;
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const code = text.charCodeAt(i + j);
      const padded = last && j >= 4 - padding;
      const value = padded ? 0 : code < 128 ? (VALUES[code] ?? -1) : -1;
      if (value < 0 || (padded && code !== 61)) {
        return null;
      }
      n = (n << 6) | value;
    }
    const chunk = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
    for (const byte of chunk) {
      if (o < out.length) {
        out[o++] = byte;
      }
    }
  }
  // Non-canonical encodings (stray bits under the padding) are refused so that decoding is exact.
  return base64Encode(out) === text ? out : null;
}

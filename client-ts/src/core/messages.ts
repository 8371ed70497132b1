//! Envelopes, response checking and the caller-facing shapes of answers: base64 members become `Uint8Array`
//! (base64 is the client's business, SPEC M5), everything else is the generated type as checked.

import type {
  AttachedResponse,
  ExitedResponse,
  ProcessInfo,
  Request,
  Response,
  Role,
} from "../generated/protocol.js";
import { base64Decode } from "./bytes.js";
import { checked } from "./check.js";
import { DaemonError, ProtocolError } from "./errors.js";
import type { JsonObject } from "./frame.js";

/** `T` read-only all the way down (arrays, records, nested objects): what a caller may pass where the client
 * only reads, so `readonly` arrays and frozen objects are accepted. */
export type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** A request of this protocol as a caller may build it for `Daemon.call`: one of the generated `Request`
 * variants (so an op the protocol does not have, or a missing member, does not compile), read-only all the way
 * down. */
export type RequestInput = DeepReadonly<Request>;

/** Builds the envelope `{"token", "request"}` (SPEC E1). */
export function envelope(token: string, request: Request | JsonObject): JsonObject {
  return { token, request };
}

/** Names a request for messages: `get request`. */
export function describe(request: Request | JsonObject): string {
  const op = (request as JsonObject)["op"];
  return typeof op === "string" ? `${op} request` : "request";
}

/** Checks a control frame against the schema's `Response` union; throws `ProtocolError` when it does not fit. */
export function checkResponse(value: JsonObject, what: string): Response {
  return checked<Response>("Response", value, `the answer to the ${what}`);
}

/** A response of one `type`. */
export type ResponseOf<T extends Response["type"]> = Extract<Response, { type: T }>;

/** Narrows a checked response to the type a request calls for: `error` becomes `DaemonError`, anything else
 * unexpected a `ProtocolError`. */
export function expectType<T extends Response["type"]>(response: Response, type: T, what: string): ResponseOf<T> {
  if (response.type === type) {
    return response as ResponseOf<T>;
  }
  if (response.type === "error") {
    throw new DaemonError(response.message);
  }
  throw new ProtocolError(`the ${what} was answered with \`${response.type}\`, expected \`${type}\``);
}

/** Decodes a base64 member, which the schema only types as a string. */
export function bytesOf(text: string, member: string): Uint8Array {
  const bytes = base64Decode(text);
  if (bytes === null) {
    throw new ProtocolError(`${member} is not standard base64 with padding`);
  }
  return bytes;
}

/** `attached` with the replay as bytes. */
export interface Attached {
  /** The process, captured in the same step as the replay. */
  readonly process: ProcessInfo;
  /** The role this attachment has now. */
  readonly role: Role;
  /** The controller generation after attaching. */
  readonly generation: number;
  /** The offset the request asked for. */
  readonly requestedOffset: number;
  /** Where {@link replay} starts. */
  readonly availableOffset: number;
  /** Just past {@link replay}; live output continues exactly here. */
  readonly endOffset: number;
  /** True when bytes between the requested and the available offset are lost. */
  readonly truncated: boolean;
  /** The kept output from {@link availableOffset} to {@link endOffset}. */
  readonly replay: Uint8Array;
}

/** Converts a checked `attached`, requiring its replay to span exactly its offsets. */
export function attachedOf(response: AttachedResponse): Attached {
  const replay = bytesOf(response.replay_base64, "attached.replay_base64");
  if (response.end_offset - response.available_offset !== replay.length) {
    throw new ProtocolError(
      `attached spans ${response.available_offset}..${response.end_offset} but its replay holds ${replay.length} bytes`,
    );
  }
  return {
    process: response.process,
    role: response.role,
    generation: response.generation,
    requestedOffset: response.requested_offset,
    availableOffset: response.available_offset,
    endOffset: response.end_offset,
    truncated: response.truncated,
    replay,
  };
}

/** The answer to `replay`, with the bytes decoded. */
export interface Replay {
  readonly requestedOffset: number;
  readonly availableOffset: number;
  readonly endOffset: number;
  readonly truncated: boolean;
  readonly bytes: Uint8Array;
}

/** The answer to `snapshot`, with the checkpoint decoded. */
export interface Snapshot {
  readonly process: ProcessInfo;
  /** The visible screen as plain text. */
  readonly text: string;
  /** A VT checkpoint that rebuilds the screen in a fresh terminal of the same size. */
  readonly checkpoint: Uint8Array;
  readonly cursorX: number;
  readonly cursorY: number;
}

/** The answer to `read_rows`. */
export interface Rows {
  readonly process: ProcessInfo;
  /** One string per physical row, oldest first. */
  readonly lines: string[];
  readonly cursorX: number;
  readonly cursorY: number;
}

/** The answer to `prepare_handoff` with what a successor needs to find and claim the daemon; JSON-serialisable,
 * so it can be handed to another process as is. */
export interface Handoff {
  readonly runtimeDir: string;
  readonly name: string;
  readonly instanceId: string;
  readonly ticket: string;
  /** Milliseconds since the Unix epoch. */
  readonly expiresAt: number;
}

/** A subscription event as the caller sees it. */
export type SubscriptionEvent =
  | { readonly type: "output"; readonly start: number; readonly end: number; readonly bytes: Uint8Array }
  | {
      readonly type: "resized";
      readonly cols: number;
      readonly rows: number;
      readonly generation: number;
      /** A VT checkpoint of the screen just after the resize: reset the terminal and write it. */
      readonly checkpoint: Uint8Array;
    }
  | { readonly type: "controller_changed"; readonly attachmentId: string | null; readonly generation: number }
  | { readonly type: "title_changed"; readonly title: string }
  | { readonly type: "foreground_process_changed"; readonly process: string | null }
  | Exited;

/** A process's exit: the last event of a subscription and the answer to `wait`, in camelCase like every other
 * event. The optional members are left out exactly when the daemon leaves them out. */
export interface Exited {
  readonly type: "exited";
  /** The exit status, or null when a signal killed the process. */
  readonly exitCode: number | null;
  /** The name of the signal that killed the process (`SIGTERM`); absent when no signal did. */
  readonly signal?: string;
  /** The offset just past the last byte the process wrote. */
  readonly finalOffset: number;
  /** When the exit became final, in milliseconds since the Unix epoch. */
  readonly exitedAt: number;
  /** Pipe processes only: how many newline bytes went to the output file. */
  readonly outputLines?: number;
  /** Pipe processes only: why writing the output file stopped, when it did. */
  readonly outputError?: string;
}

/** Converts a checked `exited`. */
export function exitedOf(response: ExitedResponse): Exited {
  return {
    type: "exited",
    exitCode: response.exit_code,
    ...(response.signal === undefined ? {} : { signal: response.signal }),
    finalOffset: response.final_offset,
    exitedAt: response.exited_at,
    ...(response.output_lines === undefined ? {} : { outputLines: response.output_lines }),
    ...(response.output_error === undefined ? {} : { outputError: response.output_error }),
  };
}

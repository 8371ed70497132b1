//! Envelopes, response checking and the caller-facing shapes of answers. The shapes themselves are generated
//! (`generated/views.ts`: camelCase, base64 members as `Uint8Array`, SPEC M5); this module adds what the schema
//! cannot say: that a replay holds exactly the bytes its offsets span, and what a subscription event is.

import {
  ANSWERS,
  OTHER_ANSWERS,
  type AnswerTo,
  type ProcessInfo,
  type Request,
  type Response,
  type Role,
} from "../generated/protocol.js";
import { attachedOf, replayOf, type Attached, type EventView, type Replay } from "../generated/views.js";
import { checked } from "./check.js";
import { DaemonError, ProtocolError } from "./errors.js";
import type { JsonObject } from "./frame.js";

export type {
  Attached,
  CommandFinished,
  CommandRunning,
  Commands,
  CommandStarted,
  ControllerChanged,
  EventView,
  Exited,
  ForegroundProcessChanged,
  InputChanged,
  Replay,
  Resized,
  Rows,
  Snapshot,
  TitleChanged,
} from "../generated/views.js";

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
export function envelope(token: string, request: RequestInput | JsonObject): JsonObject {
  return { token, request };
}

/** Names a request for messages: `get request`. */
export function describe(request: RequestInput | JsonObject): string {
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

/** The types that may answer `op` besides its `ANSWERS` entry (`OTHER_ANSWERS`: `run`'s `command_running`). */
function otherAnswers(op: Request["op"]): readonly Response["type"][] {
  const others: Partial<Record<Request["op"], readonly Response["type"][]>> = OTHER_ANSWERS;
  return others[op] ?? [];
}

/** Narrows a checked response to one the schema says answers `op` (`ANSWERS`, or one of `OTHER_ANSWERS`), as
 * {@link expectType}. */
export function expectAnswer<Op extends Request["op"]>(response: Response, op: Op, what: string): AnswerTo<Op> {
  if (otherAnswers(op).includes(response.type)) {
    return response as AnswerTo<Op>;
  }
  return expectType(response, ANSWERS[op], what) as AnswerTo<Op>;
}

/** Converts a checked `attached`, requiring its replay to span exactly its offsets. */
export function checkedAttached(response: AnswerTo<"subscribe">): Attached {
  const attached = attachedOf(response);
  const { availableOffset, endOffset, replay } = attached;
  if (endOffset - availableOffset !== replay.length) {
    throw new ProtocolError(`attached spans ${availableOffset}..${endOffset} but its replay holds ${replay.length} bytes`);
  }
  return attached;
}

/** Converts a checked `replay`, requiring its bytes to span exactly its offsets. */
export function checkedReplay(response: AnswerTo<"replay">): Replay {
  const replay = replayOf(response);
  const { availableOffset, endOffset, bytes } = replay;
  if (endOffset - availableOffset !== bytes.length) {
    throw new ProtocolError(`replay spans ${availableOffset}..${endOffset} but holds ${bytes.length} bytes`);
  }
  return replay;
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

/** Not a daemon event, and not in the schema: the client's own word that the daemon closed the subscription's
 * connection before `exited` (an in-place upgrade) and that the subscription goes on, on a new connection to the
 * same daemon instance with the same attachment id. Output continues at {@link offset}, where it stopped, so no
 * byte is lost or repeated. Events the daemon published during the break (a title or a size that changed) are
 * not repeated; {@link process} says how the process is now. */
export interface Resumed {
  readonly type: "resumed";
  /** Where output continues: the end of the output seen before the break. */
  readonly offset: number;
  /** The process as the daemon describes it now. */
  readonly process: ProcessInfo;
  /** The role this attachment has now: a controller is the controller again, unless another attachment took
   * control during the break (then it goes on as an observer). */
  readonly role: Role;
  /** The controller generation now (unchanged when the controller came back). */
  readonly generation: number;
  /** How many times the daemon was asked before it answered (1 when it answered at once). */
  readonly attempts: number;
}

/** A subscription event as the caller sees it: a chunk of output, one of the schema's events (`x-event`) as its
 * generated view, or the client's own `resumed`. */
export type SubscriptionEvent =
  | { readonly type: "output"; readonly start: number; readonly end: number; readonly bytes: Uint8Array }
  | EventView
  | Resumed;

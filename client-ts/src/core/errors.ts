//! The error classes every call of the client rejects with, each with a stable `code` to branch on and a
//! `_tag` (the class name as a string literal) that typed-effect libraries match on without wrapping.

import { ALREADY_OWNED, AUTHENTICATION_FAILED, UNSUPPORTED_REQUEST_PREFIX } from "../generated/protocol.js";

/** The stable codes of the error classes. */
export type ErrorCode = "DAEMON" | "CONNECTION" | "PROTOCOL" | "TIMEOUT" | "VERSION_MISMATCH" | "ABORTED" | "HANDOFF";

/** The base class of every error this package produces. */
export abstract class OpencodePtyError extends Error {
  /** A stable code naming the class, for callers that cannot use `instanceof` (another copy of the package). */
  abstract readonly code: ErrorCode;
  /** The class name as a string literal: the discriminant of {@link ClientError}, as Effect's `catchTag` and
   * similar libraries expect it. */
  abstract readonly _tag: string;
}

/** The daemon answered with `{"type": "error", "message"}`; `message` is the daemon's text as sent. */
export class DaemonError extends OpencodePtyError {
  readonly code = "DAEMON" as const;
  readonly _tag = "DaemonError" as const;
  override readonly name = "DaemonError";

  /** Whether this is the answer to a wrong token (SPEC E3): the daemon may have been replaced. */
  get isAuthenticationFailure(): boolean {
    return this.message === AUTHENTICATION_FAILED;
  }

  /** The op named by an `unsupported request: <op>` answer (SPEC E5), or null for any other message. */
  get unsupportedOp(): string | null {
    const prefix = UNSUPPORTED_REQUEST_PREFIX;
    return this.message.startsWith(prefix) ? this.message.slice(prefix.length) : null;
  }
}

/** Why a {@link ConnectionError} happened. */
export type ConnectionFailure =
  /** No registration file: no daemon runs in that runtime directory. */
  | "not-found"
  /** The registration names a socket nobody listens on (a daemon that died). */
  | "unreachable"
  /** The registration is unsafe (not 0600, not ours, a symlink) or does not fit the schema. */
  | "registration"
  /** The daemon answering `ping` is not the one the registration describes. */
  | "identity"
  /** A daemon started by this client exited before registering (another daemon holds the runtime directory,
   * a bad binary, ...). */
  | "exited"
  /** The daemon closed the connection before answering. */
  | "closed"
  /** A daemon upgraded in place closed the connection of a `run` before answering it, and the same daemon
   * answers again: the command may have been typed and may still run (find it with `commands`, wait for it with
   * `waitCommand`, rather than running it again). */
  | "interrupted"
  /** Reading, writing or starting something failed. */
  | "io";

/** The daemon could not be found, reached or started, or the connection broke. */
export class ConnectionError extends OpencodePtyError {
  readonly code = "CONNECTION" as const;
  readonly _tag = "ConnectionError" as const;
  override readonly name = "ConnectionError";

  constructor(
    message: string,
    /** What kind of failure it was. */
    readonly reason: ConnectionFailure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The daemon sent something this client must not trust: a malformed frame (SPEC §2), a response that does not
 * fit the schema, an answer of the wrong type, or output that is not contiguous. */
export class ProtocolError extends OpencodePtyError {
  readonly code = "PROTOCOL" as const;
  readonly _tag = "ProtocolError" as const;
  override readonly name = "ProtocolError";
}

/** A call did not complete within its timeout. */
export class TimeoutError extends OpencodePtyError {
  readonly code = "TIMEOUT" as const;
  readonly _tag = "TimeoutError" as const;
  override readonly name = "TimeoutError";

  constructor(
    /** What was waiting, such as `get request`. */
    readonly what: string,
    /** How long it waited, in milliseconds. */
    readonly timeoutMs: number,
    /**
     * Whether the request had been handed to the socket when the time ran out. `false`: the daemon never saw
     * it, so sending it again is safe. `true`: the daemon may have received it and acted on it (created the
     * process, written the bytes), so retry only a request that is safe to repeat (`get`, `list`, `ping`, ...)
     * or check first (`list` after a `createPty`). Calls that send nothing (starting a daemon) say `false`.
     */
    readonly sent: boolean = false,
  ) {
    super(`${what} got no answer within ${timeoutMs} ms (${sent ? "the request was sent" : "nothing was sent"})`);
  }
}

/** What a {@link VersionMismatchError} knows about the daemon it refused. */
export interface MismatchedDaemon {
  /** The daemon's process id, or null when what announced the version did not name a usable one. */
  readonly pid: number | null;
}

/** The daemon speaks another protocol version than this client (SPEC V3). */
export class VersionMismatchError extends OpencodePtyError {
  readonly code = "VERSION_MISMATCH" as const;
  readonly _tag = "VersionMismatchError" as const;
  override readonly name = "VersionMismatchError";
  /** The protocol the daemon announced, or null when it announced no number. */
  readonly protocol: number | null;
  /** The daemon's process id (from its registration or its `pong`), or null when unknown. */
  readonly pid: number | null;

  constructor(
    /** This client's version. */
    readonly expected: number,
    /** The version the daemon announced, as found. */
    readonly found: unknown,
    daemon?: MismatchedDaemon,
  ) {
    const pid = daemon?.pid ?? null;
    const who = pid === null ? "the daemon" : `the daemon (pid ${pid})`;
    super(`${who} speaks protocol ${String(found)}, but this client speaks protocol ${expected}`);
    this.protocol = typeof found === "number" ? found : null;
    this.pid = pid;
  }
}

/** The caller's `AbortSignal` fired before the call completed. */
export class AbortError extends OpencodePtyError {
  readonly code = "ABORTED" as const;
  readonly _tag = "AbortError" as const;
  override readonly name = "AbortError";

  constructor(what: string, options?: { cause?: unknown }) {
    super(`${what} was aborted`, options);
  }
}

/** Why `claimHandoff` could not take the daemon over. */
export type HandoffRefusal =
  /** The ticket's `expiresAt` had passed before anything was tried (no connection was made). */
  | "expired"
  /** No daemon answers at the handoff's place any more (it stopped, or its ticket ran out and it stopped). */
  | "gone"
  /** A daemon runs there, but another instance than the handoff names (the old one stopped, a new one started). */
  | "replaced"
  /** The daemon refused the ticket (`invalid handoff ticket`: already used, cancelled or expired by its clock;
   * `daemon is stopping`); {@link HandoffError.daemonMessage} holds its words. */
  | "refused";

/** What a {@link HandoffError} found at the handoff's place (in this package, a `Daemon` handle). */
export interface HandoffFound {
  /** The instance id of the daemon that answered there. */
  readonly instanceId: string;
  /** Its process id. */
  readonly pid: number;
}

/** `claimHandoff` could not take the daemon over; says what it found and why. */
export class HandoffError extends OpencodePtyError {
  readonly code = "HANDOFF" as const;
  readonly _tag = "HandoffError" as const;
  override readonly name = "HandoffError";

  constructor(
    message: string,
    /** Why the handoff failed. */
    readonly reason: HandoffRefusal,
    /** The daemon found at the handoff's place, or null when none answered. `claimHandoff` puts the `Daemon`
     * handle itself here (its instance id and pid, confirmed by `ping`), usable without ownership. */
    readonly found: HandoffFound | null,
    /** The daemon's refusal as sent (`invalid handoff ticket`, ...) when `reason` is `refused`, else null. */
    readonly daemonMessage: string | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Every error this package rejects with, discriminated by `_tag` (and by `code`). */
export type ClientError =
  | DaemonError
  | ConnectionError
  | ProtocolError
  | TimeoutError
  | VersionMismatchError
  | AbortError
  | HandoffError;

/** Whether `error` is the daemon refusing a claim because another client owns it already ({@link ALREADY_OWNED},
 * SPEC O2). */
export function alreadyOwned(error: unknown): boolean {
  return error instanceof DaemonError && error.message === ALREADY_OWNED;
}

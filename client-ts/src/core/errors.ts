//! The error classes every call of the client rejects with, each with a stable `code` to branch on.

/** The exact message a daemon answers a missing or wrong token with (SPEC E3): re-read the registration. */
export const AUTHENTICATION_FAILED = "authentication failed";

/** The prefix of a daemon's answer to an op it does not know (SPEC E5). */
export const UNSUPPORTED_PREFIX = "unsupported request: ";

/** The stable codes of the error classes. */
export type ErrorCode = "DAEMON" | "CONNECTION" | "PROTOCOL" | "TIMEOUT" | "VERSION_MISMATCH" | "ABORTED";

/** The base class of every error this package produces. */
export abstract class OpencodePtyError extends Error {
  /** A stable code naming the class, for callers that cannot use `instanceof` (another copy of the package). */
  abstract readonly code: ErrorCode;
}

/** The daemon answered with `{"type": "error", "message"}`; `message` is the daemon's text as sent. */
export class DaemonError extends OpencodePtyError {
  readonly code = "DAEMON" as const;
  override readonly name = "DaemonError";

  /** Whether this is the answer to a wrong token (SPEC E3): the daemon may have been replaced. */
  get isAuthenticationFailure(): boolean {
    return this.message === AUTHENTICATION_FAILED;
  }

  /** The op named by an `unsupported request: <op>` answer (SPEC E5), or null for any other message. */
  get unsupportedOp(): string | null {
    return this.message.startsWith(UNSUPPORTED_PREFIX) ? this.message.slice(UNSUPPORTED_PREFIX.length) : null;
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
  /** Reading, writing or starting something failed. */
  | "io";

/** The daemon could not be found, reached or started, or the connection broke. */
export class ConnectionError extends OpencodePtyError {
  readonly code = "CONNECTION" as const;
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
  override readonly name = "ProtocolError";
}

/** A call did not complete within its timeout. */
export class TimeoutError extends OpencodePtyError {
  readonly code = "TIMEOUT" as const;
  override readonly name = "TimeoutError";

  constructor(
    /** What was waiting, such as `get request`. */
    readonly what: string,
    /** How long it waited, in milliseconds. */
    readonly timeoutMs: number,
  ) {
    super(`${what} got no answer within ${timeoutMs} ms`);
  }
}

/** The daemon speaks another protocol version than this client (SPEC V3). */
export class VersionMismatchError extends OpencodePtyError {
  readonly code = "VERSION_MISMATCH" as const;
  override readonly name = "VersionMismatchError";

  constructor(
    /** This client's version. */
    readonly expected: number,
    /** The version the daemon announced. */
    readonly found: unknown,
  ) {
    super(`the daemon speaks protocol ${String(found)}, but this client speaks protocol ${expected}`);
  }
}

/** The caller's `AbortSignal` fired before the call completed. */
export class AbortError extends OpencodePtyError {
  readonly code = "ABORTED" as const;
  override readonly name = "AbortError";

  constructor(what: string, options?: { cause?: unknown }) {
    super(`${what} was aborted`, options);
  }
}

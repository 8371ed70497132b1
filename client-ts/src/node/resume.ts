//! Going on across an in-place upgrade (issue 30). A daemon that announces the `upgrade` feature keeps its pid,
//! socket, token and instance id when its owner upgrades it, and closes every other connection once its
//! requests in flight are answered. So when such a daemon closes a long-lived connection before its end (a
//! subscription before `exited`, a `wait`, `run` or `waitCommand` before its answer), the client waits, for at
//! most a window ({@link RESUME_WINDOW_MS} unless told otherwise), for the same instance to answer `ping` again
//! on the same socket, then asks again.
//!
//! The socket: an upgrade keeps the listening socket open across the exec, so a connection made meanwhile waits
//! in its backlog until the new image accepts it, and is never refused. A refused connection, or a socket that
//! is gone, therefore means that no daemon is left (it crashed, or stopped), and the request ends at once as it
//! did before resuming existed; so does an answer from another instance (a daemon started after a crash). An
//! answer in another protocol ends it with `VersionMismatchError`. Anything else (no answer yet, a connection
//! closed again) is tried again after a pause from {@link RESUME_FIRST_BACKOFF_MS} doubling to
//! {@link RESUME_MAX_BACKOFF_MS}, until the window has passed.

import { AbortError, ConnectionError, DaemonError, OpencodePtyError, VersionMismatchError } from "../core/errors.js";
import type { PongResponse } from "../generated/protocol.js";

/** The feature a daemon announces (in its registration and `pong`) when it can be upgraded in place; only its
 * connections are resumed. */
export const UPGRADE_FEATURE = "upgrade";

/** How long a lost connection is tried again by default (10 s): far more than an upgrade pauses a daemon (its
 * goal is under 100 ms with 16 busy terminals), little enough that a daemon that hangs is given up soon. */
export const RESUME_WINDOW_MS = 10_000;

/** The first pause between two tries (20 ms). */
export const RESUME_FIRST_BACKOFF_MS = 20;

/** The longest pause between two tries (500 ms). */
export const RESUME_MAX_BACKOFF_MS = 500;

/** What a resumption needs of its daemon handle. */
export interface ResumeTarget {
  /** The instance that must answer. */
  readonly instanceId: string;
  /** How long one exchange may take, in milliseconds. */
  readonly timeoutMs: number;
  /** `ping`, refusing another protocol with `VersionMismatchError`. */
  ping(options: { signal?: AbortSignal | undefined; timeoutMs: number }): Promise<PongResponse>;
}

/** The tries of one resumption: the window's deadline and the next pause. */
export class Backoff {
  private readonly deadline: number;
  private next = RESUME_FIRST_BACKOFF_MS;
  /** How many times the daemon was asked. */
  attempts = 0;

  constructor(windowMs: number) {
    this.deadline = Date.now() + windowMs;
  }

  /** Milliseconds left of the window. */
  get remainingMs(): number {
    return Math.max(0, this.deadline - Date.now());
  }

  /** Pauses before the next try; false, without pausing, once the window has passed (or the signal fired). */
  async pause(signal?: AbortSignal): Promise<boolean> {
    const remaining = this.remainingMs;
    if (remaining === 0 || signal?.aborted) {
      return false;
    }
    await sleep(Math.min(this.next, remaining), signal);
    this.next = Math.min(this.next * 2, RESUME_MAX_BACKOFF_MS);
    return this.remainingMs > 0 && !signal?.aborted;
  }
}

/** Whether an error means that the connection ended under a request (the daemon closed it, or it broke), as
 * an upgrade ends it. */
export function connectionLost(error: unknown): boolean {
  return error instanceof ConnectionError && (error.reason === "closed" || error.reason === "io");
}

/** Whether an error of connecting means that nobody listens at the socket: it is gone (a daemon that stopped
 * removes it) or refuses (a daemon that crashed left it). */
function nobodyListens(error: unknown): boolean {
  if (!(error instanceof ConnectionError) || error.reason !== "unreachable") {
    return false;
  }
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  return code === "ECONNREFUSED" || code === "ENOENT";
}

/** Waits, with `backoff`, until `target`'s instance answers `ping` again: true then, false when it cannot
 * (nobody listens, another instance answers, the window passed). Throws `VersionMismatchError` when the daemon
 * speaks another protocol now, and `AbortError` when the signal fired. */
export async function reachSameInstance(target: ResumeTarget, backoff: Backoff, signal?: AbortSignal): Promise<boolean> {
  for (;;) {
    if (signal?.aborted) {
      throw new AbortError("resuming", { cause: signal.reason });
    }
    backoff.attempts += 1;
    try {
      const timeoutMs = Math.max(1, Math.min(backoff.remainingMs, target.timeoutMs));
      const pong = await target.ping({ signal, timeoutMs });
      return pong.instance_id === target.instanceId;
    } catch (error) {
      if (error instanceof VersionMismatchError || error instanceof AbortError) {
        throw error;
      }
      // Nobody listens, or a daemon that refuses a ping (another token: another daemon), or not the client's.
      if (nobodyListens(error) || error instanceof DaemonError || !(error instanceof OpencodePtyError)) {
        return false;
      }
    }
    if (!(await backoff.pause(signal))) {
      if (signal?.aborted) {
        throw new AbortError("resuming", { cause: signal.reason });
      }
      return false;
    }
  }
}

/** Resolves after `ms`, or as soon as the signal fires. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

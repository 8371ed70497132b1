//! Helpers for a daemon that may or may not run, as OpenCode's transport needs them: find it only if it runs
//! (never starting one), and stop it and wait until it is really gone.

import { ConnectionError } from "../core/errors.js";
import { bounded } from "./connection.js";
import { Daemon, type DiscoverOptions } from "./daemon.js";
import type { CallOptions } from "./options.js";
import { daemonDir, readRegistration } from "./registration.js";

/** How long {@link shutdownAndWait} waits by default for the daemon to be gone (10 s: the daemon bounds its own
 * stop to 5 s, SPEC X3, and the process must then be reaped). */
export const SHUTDOWN_WAIT_MS = 10_000;

/** How often {@link shutdownAndWait} looks whether the daemon is gone (20 ms). */
export const GONE_POLL_MS = 20;

/** The daemon of `runtimeDir/name` if one runs there, or null when there is no registration or nothing
 * answers at its socket (a daemon that died). Never starts one: for requests that only make sense while a
 * daemon runs (OpenCode's `requestIfRunning`). Anything else (an unsafe registration, another protocol, an
 * impostor) is thrown as `discover` throws it. */
export async function discoverIfRunning(options: DiscoverOptions): Promise<Daemon | null> {
  try {
    return await Daemon.discover(options);
  } catch (error) {
    if (error instanceof ConnectionError && (error.reason === "not-found" || error.reason === "unreachable")) {
      return null;
    }
    throw error;
  }
}

/** Sends `shutdown` and waits until the daemon is gone: its process no longer exists and its registration no
 * longer names it (so a new daemon can start in its place at once). A daemon that already stopped answering
 * counts as stopping. The whole call is bounded by `timeoutMs` (default {@link SHUTDOWN_WAIT_MS}) and the
 * signal; past it, `TimeoutError`. */
export async function shutdownAndWait(daemon: Daemon, options?: CallOptions): Promise<void> {
  const limits = { signal: options?.signal, timeoutMs: options?.timeoutMs ?? SHUTDOWN_WAIT_MS };
  let cancelled = false;
  await bounded(
    `shutting down daemon ${daemon.instanceId}`,
    limits,
    () => {
      cancelled = true;
    },
    async () => {
      try {
        await daemon.shutdown(options);
      } catch (error) {
        if (!(error instanceof ConnectionError)) {
          throw error;
        }
      }
      while (!cancelled && !(await gone(daemon))) {
        await new Promise((resolve) => setTimeout(resolve, GONE_POLL_MS));
      }
    },
  );
}

/** Whether the daemon's process has exited and its registration is gone or names another instance. */
async function gone(daemon: Daemon): Promise<boolean> {
  try {
    process.kill(daemon.pid, 0);
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") {
      return false;
    }
  }
  try {
    const registration = await readRegistration(daemonDir({ runtimeDir: daemon.runtimeDir, name: daemon.name }));
    return registration.instance_id !== daemon.instanceId;
  } catch (error) {
    if (error instanceof ConnectionError && error.reason === "not-found") {
      return true;
    }
    throw error;
  }
}

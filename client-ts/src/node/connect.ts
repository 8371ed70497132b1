//! Getting a `Daemon` the way OpenCode does: `connectOrSpawn` discovers the daemon of a runtime directory or
//! starts one, and gives way to a rival that won the directory or claimed the daemon first; `discover` is
//! `Daemon.discover` as a function.

import { AbortError, alreadyOwned, ConnectionError } from "../core/errors.js";
import { Daemon, type DiscoverOptions, type SpawnOptions } from "./daemon.js";
import { DEFAULT_TIMEOUT_MS } from "./options.js";
import type { Owner } from "./owner.js";
import { REGISTRATION_POLL_MS } from "./spawn.js";

/** What `connectOrSpawn` found: a running daemon (no owner: it has one already), or one it started and owns. */
export type Connected = { readonly daemon: Daemon; readonly owner: Owner | null; readonly spawned: boolean };

/** The lazy path OpenCode takes: discover the daemon of `runtimeDir/name`; if there is none or nothing
 * answers at its registration (a daemon that died), spawn and claim a new one. When the new daemon exits
 * before registering because a rival caller's daemon took the runtime directory at the same moment (SPEC L2),
 * that daemon is discovered and returned instead (no owner: the rival owns it), within the call's timeout; so
 * is the daemon it started when another client claimed that one first.
 * Any other failure (an unsafe registration, another protocol, an impostor) is thrown, never papered over by
 * a new daemon. */
export async function connectOrSpawn(options: SpawnOptions): Promise<Connected> {
  try {
    return { daemon: await Daemon.discover(options), owner: null, spawned: false };
  } catch (error) {
    if (!absent(error)) {
      throw error;
    }
  }
  try {
    const { daemon, owner } = await Daemon.spawn(options);
    return { daemon, owner, spawned: true };
  } catch (error) {
    if (alreadyOwned(error)) {
      // Started by this call, claimed first by another client: theirs, used here without owning it.
      return { daemon: await Daemon.discover(options), owner: null, spawned: false };
    }
    if (!(error instanceof ConnectionError && error.reason === "exited")) {
      throw error;
    }
    return { daemon: await discoverRival(options, error), owner: null, spawned: false };
  }
}

/** Whether discovery failed because no daemon runs there (no registration, or nobody at its socket). */
function absent(error: unknown): boolean {
  return error instanceof ConnectionError && (error.reason === "not-found" || error.reason === "unreachable");
}

/** Discovers the daemon that won the runtime directory from the one this call started (which exited with
 * `lost`), polling every `REGISTRATION_POLL_MS` until it answers; after the call's timeout, `lost` is thrown. */
async function discoverRival(options: SpawnOptions, lost: ConnectionError): Promise<Daemon> {
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  for (;;) {
    if (options.signal?.aborted) {
      throw new AbortError("connectOrSpawn", { cause: options.signal.reason });
    }
    try {
      return await Daemon.discover(options);
    } catch (error) {
      if (!absent(error)) {
        throw error;
      }
    }
    if (Date.now() >= deadline) {
      throw lost;
    }
    await new Promise((resolve) => setTimeout(resolve, REGISTRATION_POLL_MS));
  }
}

/** Finds the daemon of `runtimeDir/name` (see {@link Daemon.discover}). */
export function discover(options: DiscoverOptions): Promise<Daemon> {
  return Daemon.discover(options);
}

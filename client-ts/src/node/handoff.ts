//! Taking over a daemon from a previous owner, typically in a new process: the handoff description
//! (`Owner.prepareHandoff()`, passed along as JSON) is enough to find the daemon, check it is the same instance
//! and claim it with the ticket (SPEC O2). A handoff that cannot be used fails with `HandoffError`, which says
//! what was found there and why the ticket was refused.

import { ConnectionError, DaemonError, HandoffError } from "../core/errors.js";
import type { Handoff } from "../core/messages.js";
import { Daemon, type Spawned } from "./daemon.js";
import type { CallOptions } from "./options.js";
import { daemonDir } from "./registration.js";

/** Finds the daemon a handoff names and claims it with the ticket.
 *
 * - A handoff whose `expiresAt` has passed is refused before anything is tried (`HandoffError` `expired`: no
 *   connection is made, so a stale handoff costs nothing).
 * - No daemon answering there any more: `HandoffError` `gone` (`found` null).
 * - Another instance there (the old one stopped and a new one started): `HandoffError` `replaced`.
 * - The daemon refusing the ticket (already used, cancelled, expired by its clock, or it is stopping):
 *   `HandoffError` `refused`, with the daemon's words in `daemonMessage`.
 *
 * In the last two cases `found` is the `Daemon` handle that answered there (`instanceof Daemon`), usable
 * without ownership. Anything else (an unsafe registration, another protocol, a timeout) rejects as discovery
 * does. */
export async function claimHandoff(handoff: Handoff, options?: CallOptions): Promise<Spawned> {
  const { runtimeDir, name, instanceId, ticket, expiresAt } = handoff;
  const place = daemonDir({ runtimeDir, name });
  const late = Date.now() - expiresAt;
  if (late >= 0) {
    throw new HandoffError(
      `the handoff of daemon ${instanceId} in ${place} expired ${late} ms ago (at ${new Date(expiresAt).toISOString()}); ` +
        "nothing was tried: the daemon stops once its ticket expires unclaimed, so start or discover one instead",
      "expired",
      null,
      null,
    );
  }
  let daemon: Daemon;
  try {
    daemon = await Daemon.discover({ ...options, runtimeDir, name });
  } catch (error) {
    if (error instanceof ConnectionError && (error.reason === "not-found" || error.reason === "unreachable")) {
      throw new HandoffError(
        `the handoff names daemon ${instanceId} in ${place}, but no daemon answers there any more: ${error.message}`,
        "gone",
        null,
        null,
        { cause: error },
      );
    }
    throw error;
  }
  if (daemon.instanceId !== instanceId) {
    throw new HandoffError(
      `the handoff names daemon ${instanceId}, but daemon ${daemon.instanceId} (pid ${daemon.pid}) runs in ${place} now`,
      "replaced",
      daemon,
      null,
    );
  }
  try {
    const owner = await daemon.claim({ ...options, ticket });
    return { daemon, owner };
  } catch (error) {
    if (error instanceof DaemonError) {
      throw new HandoffError(
        `daemon ${instanceId} (pid ${daemon.pid}) in ${place} refused the handoff ticket: ${error.message}`,
        "refused",
        daemon,
        error.message,
        { cause: error },
      );
    }
    if (error instanceof ConnectionError && (error.reason === "unreachable" || error.reason === "closed")) {
      throw new HandoffError(
        `daemon ${instanceId} (pid ${daemon.pid}) in ${place} went away while the handoff was claimed: ${error.message}`,
        "gone",
        daemon,
        null,
        { cause: error },
      );
    }
    throw error;
  }
}

//! Taking over a daemon from a previous owner, typically in a new process: the handoff description
//! (`Owner.prepareHandoff()`, passed along as JSON) is enough to find the daemon, check it is the same instance
//! and claim it with the ticket (SPEC O2).

import { ConnectionError } from "../core/errors.js";
import type { Handoff } from "../core/messages.js";
import { Daemon, type Spawned } from "./daemon.js";
import type { CallOptions } from "./options.js";

/** Finds the daemon a handoff names and claims it with the ticket. A daemon at that place that is another
 * instance (the old one stopped and a new one started) is refused with `ConnectionError` (`identity`). */
export async function claimHandoff(handoff: Handoff, options?: CallOptions): Promise<Spawned> {
  const daemon = await Daemon.discover({ ...options, runtimeDir: handoff.runtimeDir, name: handoff.name });
  if (daemon.instanceId !== handoff.instanceId) {
    throw new ConnectionError(
      `the handoff names daemon ${handoff.instanceId}, but ${daemon.instanceId} runs there now`,
      "identity",
    );
  }
  const owner = await daemon.claim({ ...options, ticket: handoff.ticket });
  return { daemon, owner };
}

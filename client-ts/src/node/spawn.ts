//! Starting a daemon: `opencode-pty daemon --name NAME --runtime-dir DIR` in its own session, detached from
//! this process, then waiting for the registration that names it. Claiming it is `Daemon.spawn`'s job.

import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";

import { ConnectionError } from "../core/errors.js";
import type { Registration } from "../generated/protocol.js";
import { bounded, type Limits } from "./connection.js";
import { readRegistration } from "./registration.js";

/** How often the registration is looked for while a new daemon starts (10 ms); the wait as a whole is bounded
 * by the call's timeout. */
export const REGISTRATION_POLL_MS = 10;

/** Where the daemon's stderr (its log, SPEC N9) goes: nowhere, to this process's stderr, or to an open file
 * descriptor. */
export type DaemonStderr = "ignore" | "inherit" | number;

/** What `launchDaemon` needs. */
export interface LaunchOptions {
  /** The `opencode-pty` binary. */
  readonly binary: string;
  /** `runtimeDir/name`, already checked. */
  readonly dir: string;
  readonly runtimeDir: string;
  readonly name: string;
  /** The daemon's environment, which its PTYs inherit (SPEC D2). */
  readonly env: NodeJS.ProcessEnv;
  readonly stderr: DaemonStderr;
}

/** Starts a daemon and resolves with its registration once it is written; rejects when the daemon exits first
 * (another daemon holds the runtime directory, a bad binary, ...) or the time is up. */
export function launchDaemon(options: LaunchOptions, limits: Limits): Promise<Registration> {
  let child: ReturnType<typeof spawn> | null = null;
  let stop = false;
  const what = `starting ${options.binary} daemon --name ${options.name}`;
  return bounded(
    what,
    limits,
    () => {
      stop = true;
      child?.kill("SIGTERM");
    },
    async () => {
      await mkdir(options.runtimeDir, { recursive: true, mode: 0o700 });
      const started = spawn(options.binary, ["daemon", "--name", options.name, "--runtime-dir", options.runtimeDir], {
        detached: true,
        env: options.env,
        stdio: ["ignore", "ignore", options.stderr],
      });
      child = started;
      started.unref();
      let exited: string | null = null;
      started.once("exit", (code, signal) => {
        exited = signal ? `was killed by ${signal}` : `exited with status ${String(code)}`;
      });
      const failed = new Promise<never>((_, reject) => {
        started.once("error", (error) =>
          reject(new ConnectionError(`cannot start ${options.binary}: ${error.message}`, "io", { cause: error })),
        );
      });
      failed.catch(() => undefined);
      for (;;) {
        const pending = await Promise.race([poll(options.dir, started.pid), failed]);
        if (pending) {
          return pending;
        }
        if (exited !== null) {
          throw new ConnectionError(
            `${what}: the daemon ${String(exited)} before registering (see its stderr)`,
            "io",
          );
        }
        if (stop) {
          throw new ConnectionError(`${what}: cancelled`, "io");
        }
        await new Promise((resolve) => setTimeout(resolve, REGISTRATION_POLL_MS));
      }
    },
  );
}

/** The registration of `dir` if it names `pid`, else null (not written yet, or a previous daemon's). */
async function poll(dir: string, pid: number | undefined): Promise<Registration | null> {
  try {
    const registration = await readRegistration(dir);
    return registration.pid === pid ? registration : null;
  } catch (error) {
    if (error instanceof ConnectionError && error.reason === "not-found") {
      return null;
    }
    throw error;
  }
}

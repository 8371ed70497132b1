//! Starting a daemon: `opencode-pty daemon --name NAME --runtime-dir DIR` in its own session, detached from
//! this process, then waiting for the registration that names it. Claiming it is `Daemon.spawn`'s job.

import { spawn, type ChildProcess } from "node:child_process";
import { mkdir } from "node:fs/promises";

import { ConnectionError } from "../core/errors.js";
import type { Registration } from "../generated/protocol.js";
import { bounded, type Limits } from "./connection.js";
import { readRegistration } from "./registration.js";

/** How often the registration is looked for while a new daemon starts (10 ms); the wait as a whole is bounded
 * by the call's timeout. */
export const REGISTRATION_POLL_MS = 10;

/** How long a daemon started here and then given up on (its claim failed, say) may take to stop after SIGTERM
 * before it gets SIGKILL (6 s: the daemon bounds its own stop to 5 s, SPEC X3). */
export const STOP_GRACE_MS = 6_000;

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
  /** Variables of `env` kept out of PTY children (`--withhold-env NAME` each). */
  readonly withholdEnv: readonly string[];
  readonly stderr: DaemonStderr;
}

/** A daemon this process started, registered but not yet claimed. */
export interface Launched {
  readonly registration: Registration;
  /** The daemon's process; {@link stopLaunched} stops it when what follows fails. */
  readonly child: ChildProcess;
}

/** Starts a daemon and resolves with its registration once it is written; rejects when the daemon exits first
 * (another daemon holds the runtime directory, a bad binary, ...) or the time is up, after stopping it. */
export function launchDaemon(options: LaunchOptions, limits: Limits): Promise<Launched> {
  let child: ChildProcess | null = null;
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
      const args = ["daemon", "--name", options.name, "--runtime-dir", options.runtimeDir];
      for (const name of options.withholdEnv) args.push("--withhold-env", name);
      const started = spawn(options.binary, args, {
        detached: true,
        env: options.env,
        stdio: ["ignore", "ignore", options.stderr],
      });
      child = started;
      started.unref();
      const failed = new Promise<never>((_, reject) => {
        started.once("error", (error) =>
          reject(new ConnectionError(`cannot start ${options.binary}: ${error.message}`, "io", { cause: error })),
        );
      });
      failed.catch(() => undefined);
      try {
        for (;;) {
          const registration = await Promise.race([poll(options.dir, started.pid), failed]);
          if (registration) {
            return { registration, child: started };
          }
          const status = exitStatus(started);
          if (status !== null) {
            throw new ConnectionError(`${what}: the daemon ${status} before registering (see its stderr)`, "exited");
          }
          if (stop) {
            throw new ConnectionError(`${what}: cancelled`, "io");
          }
          await new Promise((resolve) => setTimeout(resolve, REGISTRATION_POLL_MS));
        }
      } catch (error) {
        await stopLaunched(started);
        throw error;
      }
    },
  );
}

/** How a child ended (`exited with status 1`, `was killed by SIGTERM`), or null while it runs. */
function exitStatus(child: ChildProcess): string | null {
  if (child.signalCode !== null) {
    return `was killed by ${child.signalCode}`;
  }
  return child.exitCode !== null ? `exited with status ${child.exitCode}` : null;
}

/** Stops a daemon this process started: SIGTERM, then SIGKILL after {@link STOP_GRACE_MS}, and waits until it
 * has been reaped, so that nothing started by a failed `spawn` outlives it. */
export async function stopLaunched(child: ChildProcess): Promise<void> {
  const gone = (): boolean => exitStatus(child) !== null || child.pid === undefined;
  if (gone()) {
    return;
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const within = (ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void exited.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  child.kill("SIGTERM");
  if (!(await within(STOP_GRACE_MS)) && !gone()) {
    child.kill("SIGKILL");
    await exited;
  }
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

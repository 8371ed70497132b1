//! `ManagedDaemon`: one handle that keeps a usable daemon behind it, doing what `connectOrSpawn` leaves to its
//! callers. It finds the daemon of `runtimeDir/name` or starts one, claims it when nobody owns it, notices
//! when it dies (its owner channel closes, or a request finds nobody at its socket), and brings one back:
//! rediscovering, re-claiming, respawning, and moving to a fresh runtime directory when the one it has cannot
//! be used. Each transition is a typed event.
//!
//! States: idle (no daemon yet, or the last one was lost) -> recovering (one recovery at a time; every caller
//! waits on the same one) -> ready (a current daemon, owned or owned elsewhere) -> lost -> recovering ...;
//! `close()` ends it from any state.

import { randomBytes } from "node:crypto";

import {
  AbortError,
  alreadyOwned,
  ConnectionError,
  DaemonError,
  HandoffError,
  OpencodePtyError,
  ProtocolError,
  VersionMismatchError,
} from "../core/errors.js";
import type { Handoff } from "../core/messages.js";
import { DAEMON_BINARY_NAME, daemonBinary } from "./binary.js";
import { Daemon, type SpawnOptions } from "./daemon.js";
import { claimHandoff } from "./handoff.js";
import { DEFAULT_TIMEOUT_MS, type CallOptions } from "./options.js";
import type { Owner } from "./owner.js";
import { daemonDir } from "./registration.js";
import { launchDaemon, stopLaunched } from "./spawn.js";

/** How many times one recovery tries a runtime directory before it moves to a fresh one (4), and again at the
 * fresh one before it gives up. A try that finds the daemon gone mid-way (killed between two steps) counts. */
export const RECOVERY_ATTEMPTS = 4;

/** The errors that say no binary can be started: no retry or other place fixes them. */
const noBinary = new WeakSet<object>();

/** A runtime directory, resolved: `runtimeDir/name`. */
export interface ManagedLocation {
  readonly runtimeDir: string;
  readonly name: string;
}

/** What is current while the handle is ready. */
export interface ManagedState {
  readonly daemon: Daemon;
  /** The owner channel when this handle owns the daemon; null when another process does. */
  readonly owner: Owner | null;
  readonly location: ManagedLocation;
}

/** Why the current daemon was given up. */
export type LostReason =
  /** The owner channel closed: the daemon stopped or died (or a successor took it over after a handoff). */
  | "owner-closed"
  /** A request found nobody listening at the daemon's socket. */
  | "unreachable"
  /** The daemon refused the token: another daemon runs there now (SPEC E3). */
  | "authentication"
  /** A request's connection closed before its answer: the daemon stopped or died under it. */
  | "closed";

/** Each transition of a {@link ManagedDaemon}, in the order they happen. */
export type ManagedEvent =
  /** A running daemon answered at the location (discovery and `ping` passed). */
  | { readonly type: "discovered"; readonly location: ManagedLocation; readonly daemon: Daemon }
  /** A daemon was started at the location and registered; it is claimed next. */
  | { readonly type: "spawned"; readonly location: ManagedLocation; readonly pid: number; readonly instanceId: string }
  /** This handle owns the daemon now: one it started, one it found unclaimed, or one handed over to it. */
  | {
      readonly type: "claimed";
      readonly daemon: Daemon;
      readonly owner: Owner;
      readonly via: "spawn" | "discovery" | "handoff";
    }
  /** The daemon found has another live owner; this handle uses it without owning it. */
  | { readonly type: "owned-elsewhere"; readonly daemon: Daemon }
  /** A daemon is current: what `daemon()` and `use()` give from now on. */
  | ({ readonly type: "ready" } & ManagedState)
  /** The current daemon was given up; a recovery follows (at once when this handle owned it, else at the next
   * call). */
  | { readonly type: "lost"; readonly daemon: Daemon; readonly reason: LostReason }
  /** A step of a recovery failed; it starts over at the same location (`attempt` of {@link RECOVERY_ATTEMPTS}). */
  | { readonly type: "retrying"; readonly location: ManagedLocation; readonly attempt: number; readonly error: unknown }
  /** The location cannot be used (an unsafe registration, another protocol, an impostor, or every attempt
   * failed); the handle moves to a fresh runtime directory beside it and stays there. */
  | { readonly type: "fallback"; readonly from: ManagedLocation; readonly to: ManagedLocation; readonly error: unknown }
  /** A recovery gave up; the next call starts a new one. */
  | { readonly type: "failed"; readonly error: unknown }
  /** `close()` was called. */
  | { readonly type: "closed" };

/** `ManagedDaemon` options: those of `Daemon.spawn` (where to look, how to start one; `timeoutMs` bounds each
 * step), and how it recovers. */
export interface ManagedOptions extends Omit<SpawnOptions, "signal"> {
  /** Move to a fresh runtime directory when the named one cannot be used (default true). When false, such a
   * failure fails the recovery instead (`failed`), as `connectOrSpawn` would. */
  readonly fallback?: boolean | undefined;
  /** The name of a fresh runtime directory (beside the current one); default `NAME-<8 random hex digits>`. */
  readonly fallbackName?: ((name: string) => string) | undefined;
  /** Take the daemon over from a previous owner first (as `claimHandoff`); if that fails, the handle goes on
   * as without it, at the handoff's location. */
  readonly handoff?: Handoff | undefined;
  /** Called with every event, in order, synchronously (also see {@link ManagedDaemon.on}). */
  readonly onEvent?: ((event: ManagedEvent) => void) | undefined;
  /** Recover at once when an owned daemon is lost (default true); when false, at the next call. */
  readonly eager?: boolean | undefined;
}

/** A daemon kept usable: see the module documentation. Create it, then call {@link daemon} or {@link use};
 * nothing happens before the first call. */
export class ManagedDaemon {
  private readonly listeners = new Set<(event: ManagedEvent) => void>();
  private state: ManagedState | null = null;
  private recovering: Promise<ManagedState> | null = null;
  private place: ManagedLocation;
  private handoff: Handoff | null;
  private closing = false;
  private unreferenced = false;
  /** Set once `prepareHandoff` was called: losing the owner channel is then expected, not recovered. */
  private handingOff = false;

  constructor(private readonly options: ManagedOptions) {
    this.handoff = options.handoff ?? null;
    const start = this.handoff ?? options;
    const dir = daemonDir(start);
    this.place = { runtimeDir: dir.slice(0, dir.length - start.name.length - 1), name: start.name };
    if (options.onEvent) this.listeners.add(options.onEvent);
  }

  /** Listens to every event from now on; returns the function that stops listening. */
  on(listener: (event: ManagedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The runtime directory the handle uses now (it changes only on `fallback`). */
  get location(): ManagedLocation {
    return this.place;
  }

  /** The current daemon, its owner channel and location; null while there is none (before the first call,
   * after `lost`, while recovering). */
  get current(): ManagedState | null {
    return this.state;
  }

  /** The current daemon; when there is none, the one a recovery finds, claims or starts (callers share one
   * recovery). Rejects when the recovery fails (after `failed`) or the handle is closed. */
  async daemon(): Promise<Daemon> {
    return (await this.ready()).daemon;
  }

  /** The current state; recovers first when there is none. */
  ready(): Promise<ManagedState> {
    if (this.closing) {
      return Promise.reject(new ConnectionError("the managed daemon handle is closed", "closed"));
    }
    if (this.state) {
      return Promise.resolve(this.state);
    }
    if (!this.recovering) {
      const recovery = this.recover().finally(() => {
        if (this.recovering === recovery) this.recovering = null;
      });
      this.recovering = recovery;
    }
    return this.recovering;
  }

  /** Runs `work` with the current daemon. When it fails because the daemon is gone (nobody at its socket,
   * or its token refused) before the request reached it, the daemon is given up (`lost`), a recovery runs and
   * `work` runs once more on the new daemon. When the daemon went away after the request was sent (its
   * connection closed before the answer), the daemon is given up but `work` is not repeated: it may have been
   * done, so the error is the caller's to judge. Anything else is rethrown as is. */
  async use<T>(work: (daemon: Daemon) => Promise<T>): Promise<T> {
    const state = await this.ready();
    try {
      return await work(state.daemon);
    } catch (error) {
      const reason = lostReason(error);
      if (reason === null || !(await this.giveUp(state, reason))) {
        throw error;
      }
      if (reason === "closed") {
        throw error;
      }
      return work(await this.daemon());
    }
  }

  /** Prepares a handoff on the owner channel (see `Owner.prepareHandoff`) for a successor process. From then
   * on, the owner channel closing (superseded, or this process leaving) is expected: no recovery follows. */
  async prepareHandoff(options?: CallOptions): Promise<Handoff> {
    const owner = this.state?.owner;
    if (!owner) {
      throw new ConnectionError("this handle does not own a daemon, so it cannot hand one over", "io");
    }
    this.handingOff = true;
    return owner.prepareHandoff(options);
  }

  /** Lets this process exit while the handle owns a daemon (`Owner.unref`), for this and every later owner. */
  unref(): this {
    this.unreferenced = true;
    this.state?.owner?.unref();
    return this;
  }

  /** Undoes {@link unref}. */
  ref(): this {
    this.unreferenced = false;
    this.state?.owner?.ref();
    return this;
  }

  /** Stops managing: releases the owner channel if this handle owns the daemon (the daemon stops, unless a
   * handoff was prepared) and emits `closed`. A recovery in progress ends with a rejection; a daemon it starts
   * meanwhile is released at once. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const owner = this.state?.owner;
    this.state = null;
    if (owner) await owner.release();
    await this.recovering?.catch(() => undefined);
    this.emit({ type: "closed" });
  }

  /** Gives up `state` for `reason` when it is still current, and says whether the caller may go on (the
   * daemon is gone). An owned daemon is given up only through its owner channel closing (the one sure sign):
   * this waits for it, at most one timeout. */
  private async giveUp(state: ManagedState, reason: LostReason): Promise<boolean> {
    if (this.state !== state) {
      return !this.closing;
    }
    if (state.owner) {
      const limit = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        state.owner.closed.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), limit))),
      ]);
      clearTimeout(timer);
      // The channel's close handler gave the state up and (eagerly) started the recovery.
      return closed && !this.closing;
    }
    this.state = null;
    this.emit({ type: "lost", daemon: state.daemon, reason });
    return !this.closing;
  }

  /** Finds, claims or starts a daemon, retrying and falling back as documented on {@link ManagedEvent}. */
  private async recover(): Promise<ManagedState> {
    let fellBack = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt();
      } catch (error) {
        if (this.closing) {
          throw error instanceof OpencodePtyError ? error : new ConnectionError(String(error), "io", { cause: error });
        }
        const usable = !unusablePlace(error);
        const canFallBack = this.options.fallback !== false && !fellBack && !fatal(error);
        if (!fatal(error) && usable && attempt < RECOVERY_ATTEMPTS) {
          this.emit({ type: "retrying", location: this.place, attempt, error });
          continue;
        }
        if (canFallBack) {
          const from = this.place;
          const name = (this.options.fallbackName ?? freshName)(from.name);
          this.place = { runtimeDir: from.runtimeDir, name };
          daemonDir(this.place);
          fellBack = true;
          attempt = 0;
          this.emit({ type: "fallback", from, to: this.place, error });
          continue;
        }
        this.emit({ type: "failed", error });
        throw error;
      }
    }
  }

  /** One try: the handoff (first time only), else discovery and a claim, else a new daemon and its claim. */
  private async attempt(): Promise<ManagedState> {
    const limits = { timeoutMs: this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS };
    const handoff = this.handoff;
    if (handoff) {
      this.handoff = null;
      try {
        const { daemon, owner } = await claimHandoff(handoff, limits);
        return this.install(daemon, owner, "handoff");
      } catch (error) {
        if (!(error instanceof HandoffError)) throw error;
        this.emit({ type: "retrying", location: this.place, attempt: 0, error });
      }
    }
    let found: Daemon | null = null;
    try {
      found = await Daemon.discover({ ...this.place, ...limits });
    } catch (error) {
      if (!(error instanceof ConnectionError && (error.reason === "not-found" || error.reason === "unreachable"))) {
        throw error;
      }
    }
    if (found) {
      this.emit({ type: "discovered", location: this.place, daemon: found });
      try {
        return this.install(found, await found.claim(limits), "discovery");
      } catch (error) {
        if (alreadyOwned(error)) {
          return this.install(found, null, "discovery");
        }
        throw error;
      }
    }
    return this.spawn(limits);
  }

  /** Starts a daemon at the current location and claims it; stops it when that fails. */
  private async spawn(limits: { readonly timeoutMs: number }): Promise<ManagedState> {
    const binary = daemonBinary(this.options.binary);
    if (!binary) {
      const error = new ConnectionError(
        `no daemon binary: pass \`binary\`, set OPENCODE_PTY_BIN, install the platform package or put ${DAEMON_BINARY_NAME} on PATH`,
        "io",
      );
      noBinary.add(error);
      throw error;
    }
    const dir = daemonDir(this.place);
    const launched = await launchDaemon(
      {
        binary,
        dir,
        runtimeDir: this.place.runtimeDir,
        name: this.place.name,
        env: this.options.env ?? process.env,
        withholdEnv: this.options.withholdEnv ?? [],
        stderr: this.options.stderr ?? "ignore",
      },
      limits,
    );
    const { registration } = launched;
    this.emit({ type: "spawned", location: this.place, pid: registration.pid, instanceId: registration.instance_id });
    let daemon: Daemon | null = null;
    try {
      daemon = await Daemon.discover({ ...this.place, ...limits });
      return this.install(daemon, await daemon.claim(limits), "spawn");
    } catch (error) {
      if (daemon && alreadyOwned(error)) {
        // Another client (a rival handle looking at the same place) claimed it first: it is theirs to keep.
        return this.install(daemon, null, "spawn");
      }
      // A daemon this handle started and cannot use must not outlive the attempt.
      await stopLaunched(launched.child);
      throw error;
    }
  }

  /** Makes `daemon` current (owned through `owner`, or owned elsewhere) and reports it. */
  private async install(daemon: Daemon, owner: Owner | null, via: "spawn" | "discovery" | "handoff"): Promise<ManagedState> {
    if (this.closing) {
      await owner?.release();
      throw new ConnectionError("the managed daemon handle was closed during the recovery", "closed");
    }
    const state: ManagedState = { daemon, owner, location: this.place };
    this.state = state;
    if (owner) {
      if (this.unreferenced) owner.unref();
      void owner.closed.then(() => this.ownerClosed(state));
      this.emit({ type: "claimed", daemon, owner, via });
    } else {
      this.emit({ type: "owned-elsewhere", daemon });
    }
    this.emit({ type: "ready", ...state });
    return state;
  }

  /** The owner channel of `state` closed: the daemon is lost; recover at once unless told otherwise. */
  private ownerClosed(state: ManagedState): void {
    if (this.state !== state || this.closing) {
      return;
    }
    this.state = null;
    this.emit({ type: "lost", daemon: state.daemon, reason: "owner-closed" });
    if (this.options.eager !== false && !this.handingOff) {
      // Failures are reported as `failed`; the next call recovers again. When the channel closed before the
      // recovery that installed it finished, a new one starts after that one.
      const again = (): void => {
        if (!this.state && !this.closing) this.ready().catch(() => undefined);
      };
      if (this.recovering) {
        void this.recovering.then(again, again);
      } else {
        again();
      }
    }
  }

  private emit(event: ManagedEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        // A listener's failure is its own; report it the way Node reports an uncaught error, after this turn.
        setImmediate(() => {
          throw error;
        });
      }
    }
  }
}

/** `NAME-<8 random hex digits>`, cut so that it stays a valid runtime name. */
function freshName(name: string): string {
  return `${name.slice(0, 200)}-${randomBytes(4).toString("hex")}`;
}

/** The errors after which the location itself cannot be used, whatever is tried there: an unsafe or foreign
 * registration, another protocol, an impostor or a broken peer. */
function unusablePlace(error: unknown): boolean {
  if (error instanceof VersionMismatchError || error instanceof ProtocolError) return true;
  return error instanceof ConnectionError && (error.reason === "registration" || error.reason === "identity");
}

/** Errors no retry or other place can fix: no binary to start, or the caller's abort. */
function fatal(error: unknown): boolean {
  return error instanceof AbortError || (typeof error === "object" && error !== null && noBinary.has(error));
}

/** Why a request's failure means the daemon is gone, or null when it does not. */
function lostReason(error: unknown): LostReason | null {
  if (error instanceof ConnectionError) {
    if (error.reason === "unreachable") return "unreachable";
    if (error.reason === "closed") return "closed";
    return null;
  }
  if (error instanceof DaemonError && error.isAuthenticationFailure) return "authentication";
  return null;
}

//! `Daemon`: a handle on one running daemon, found through its registration and confirmed by `ping`. What it
//! is (the registration, where it lives, what it announced), how one is had (`discover`, `fromRegistration`,
//! `spawn`), the generic calls (`call`, `callRaw`, `exchange`, `supports`) and the requests that keep their
//! connection (`claim`, `subscribe`, `wait`, `run`, `waitCommand`). The exchanges themselves are
//! `exchange.ts`'s; the typed one-shot requests are inherited from `requests.ts`. Every request runs on its own
//! connection (SPEC E8) and is bounded by a timeout and the caller's `AbortSignal`; `wait` and subscriptions are
//! bounded only up to sending (or `attached`), then live as long as the process does (SPEC N8); `run` and
//! `waitCommand` as long as the command's wait, plus the timeout.

import { commandOutcomeOf, DEFAULT_COMMAND_WAIT_MS, type CommandOutcome } from "../core/commands.js";
import { alreadyOwned, ConnectionError, DaemonError, VersionMismatchError } from "../core/errors.js";
import type { JsonObject } from "../core/frame.js";
import { checkedAttached, describe, expectAnswer, type Exited, type RequestInput } from "../core/messages.js";
import type { Transport } from "../core/transport.js";
import {
  PROTOCOL_VERSION,
  REQUEST_OPS,
  type AnswerTo,
  type PongResponse,
  type Registration,
  type Request,
  type Response,
  type Role,
  type RunRequest,
  type WaitCommandRequest,
} from "../generated/protocol.js";
import { exitedOf } from "../generated/views.js";
import { DAEMON_BINARY_NAME, daemonBinary, platformPackage } from "./binary.js";
import { socketTransport } from "./connection.js";
import { Exchanges } from "./exchange.js";
import {
  DEFAULT_TIMEOUT_MS,
  takeoverFlag,
  type CallOptions,
  type CommandWaitOptions,
  type SubscribeParams,
} from "./options.js";
import { Owner } from "./owner.js";
import { checkRegistration, daemonDir, readRegistration, type Location } from "./registration.js";
import { DaemonRequests } from "./requests.js";
import { Backoff, connectionLost, reachSameInstance, RESUME_WINDOW_MS, UPGRADE_FEATURE } from "./resume.js";
import { launchDaemon, stopLaunched, type DaemonStderr } from "./spawn.js";
import { Subscription, type SubscriptionResume } from "./subscription.js";

/** What a `Daemon` handle does when a daemon upgraded in place closes its long-lived connections. */
export interface ResumeOptions {
  /** How long a subscription, `wait`, `run` or `waitCommand` whose connection a daemon with the `upgrade`
   * feature closed before its end waits for the same daemon instance to answer again, in milliseconds
   * (default `RESUME_WINDOW_MS`, 10 s). 0 never resumes: such a connection ends at once, as against a daemon
   * without the feature. */
  readonly resumeWindowMs?: number | undefined;
}

/** `discover` options. */
export interface DiscoverOptions extends Location, CallOptions, ResumeOptions {
  /** How connections to the daemon's socket are made; defaults to Unix sockets (`memoryTransport` serves them
   * in this process, for unit tests). */
  readonly transport?: Transport | undefined;
}

/** `Daemon.fromRegistration` options: where the daemon lives (named in handoffs), and how to reach it. */
export interface FromRegistrationOptions extends CallOptions, ResumeOptions {
  /** The parent of the runtime directory (`--runtime-dir`). */
  readonly runtimeDir: string;
  /** The runtime name (`--name`). */
  readonly name: string;
  /** How connections to the registration's socket are made; defaults to Unix sockets. */
  readonly transport?: Transport | undefined;
}

/** `Daemon.spawn` and `connectOrSpawn` options. */
export interface SpawnOptions extends DiscoverOptions {
  /** The `opencode-pty` binary; defaults to `$OPENCODE_PTY_BIN`, then to the installed platform package's
   * (`opencode-pty-linux-x64` or `opencode-pty-linux-arm64`), then to `opencode-pty` on `PATH` (see
   * `daemonBinary`). */
  readonly binary?: string | undefined;
  /** The daemon's environment, which its PTYs inherit; defaults to this process's. */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** Names of variables of that environment to keep out of every PTY child (`--withhold-env`): secrets the
   * daemon may hold but its terminals should not see. A `createPty` `env` may still set them. */
  readonly withholdEnv?: readonly string[] | undefined;
  /** Where the daemon's log goes; defaults to nowhere. */
  readonly stderr?: DaemonStderr | undefined;
}

/** A daemon this process started, and its owner channel. */
export interface Spawned {
  readonly daemon: Daemon;
  readonly owner: Owner;
}

/** A daemon found through its registration and confirmed by `ping`. Holds no connection. */
export class Daemon extends DaemonRequests {
  /** The handle's exchanges with the daemon. */
  private readonly exchanges: Exchanges;

  private constructor(
    /** The registration: read from disk, or given to {@link fromRegistration}. */
    readonly registration: Registration,
    /** The parent of the runtime directory (`--runtime-dir`). */
    readonly runtimeDir: string,
    /** The runtime name (`--name`). */
    readonly name: string,
    /** The additive capabilities the daemon announced in `pong` (empty for plain protocol 8). */
    readonly features: readonly string[],
    /** The default timeout of this handle's calls, in milliseconds. */
    readonly timeoutMs: number,
    /** How connections to the daemon are made. */
    transport: Transport,
    /** How long a lost long-lived connection is tried again, in milliseconds (see `ResumeOptions`). */
    readonly resumeWindowMs: number = RESUME_WINDOW_MS,
  ) {
    super();
    this.exchanges = new Exchanges(registration.socket, registration.token, transport, timeoutMs);
  }

  /** Reads the registration of `runtimeDir/name` (safe file, same protocol), pings the daemon and requires the
   * `pong` to name the registration's protocol, instance id and pid. */
  static async discover(options: DiscoverOptions): Promise<Daemon> {
    const dir = daemonDir(options);
    const runtimeDir = dir.slice(0, dir.length - options.name.length - 1);
    const registration = await readRegistration(dir);
    return Daemon.confirm(registration, { ...options, runtimeDir });
  }

  /** A handle on the daemon a registration describes, without reading any file: the registration is checked
   * (same protocol, fits the schema), then confirmed with `ping` as {@link discover} does. With a
   * `memoryTransport`, the way unit tests get a `Daemon` without a daemon binary. */
  static fromRegistration(registration: Registration, options: FromRegistrationOptions): Promise<Daemon> {
    return Daemon.confirm(checkRegistration(registration, "given"), options);
  }

  /** Starts a new daemon (detached, so it outlives this process), waits for its registration, checks it with
   * `ping` and claims it. Each step is bounded by the timeout. When any step fails, the new daemon is stopped
   * (SIGTERM, then SIGKILL after `STOP_GRACE_MS`) and reaped before the call rejects, except when another
   * client claimed it first (the claim is refused with `ALREADY_OWNED`, see `alreadyOwned`): it is that
   * client's daemon then, and it is left running. */
  static async spawn(options: SpawnOptions): Promise<Spawned> {
    const binary = daemonBinary(options.binary);
    if (!binary) {
      const platform = platformPackage();
      const install = platform ? `, install ${platform}` : "";
      throw new ConnectionError(
        `no daemon binary: pass \`binary\`, set OPENCODE_PTY_BIN${install} or put ${DAEMON_BINARY_NAME} on PATH`,
        "io",
      );
    }
    const dir = daemonDir(options);
    const runtimeDir = dir.slice(0, dir.length - options.name.length - 1);
    const limits = { signal: options.signal, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };
    const launch = {
      binary,
      dir,
      runtimeDir,
      name: options.name,
      env: options.env ?? process.env,
      withholdEnv: options.withholdEnv ?? [],
    };
    const { child } = await launchDaemon({ ...launch, stderr: options.stderr ?? "ignore" }, limits);
    try {
      const daemon = await Daemon.discover({ ...options, runtimeDir });
      const owner = await daemon.claim(options);
      return { daemon, owner };
    } catch (error) {
      // Another client claimed it in the moment before this call did (a rival `ManagedDaemon` or a second
      // process looking at the same place): stopping it would pull the daemon from under its owner.
      if (alreadyOwned(error)) {
        throw error;
      }
      // A daemon this call started and cannot hand over must not outlive the call.
      await stopLaunched(child);
      throw error;
    }
  }

  /** Pings the daemon a registration names and requires the `pong` to match it; the confirmed handle. */
  private static async confirm(registration: Registration, options: FromRegistrationOptions): Promise<Daemon> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const transport = options.transport ?? socketTransport;
    const { runtimeDir, name } = options;
    const probe = new Daemon(registration, runtimeDir, name, [], timeoutMs, transport);
    const pong = await probe.ping(options);
    const checks: [string, unknown, unknown][] = [
      ["instance_id", registration.instance_id, pong.instance_id],
      ["pid", registration.pid, pong.pid],
    ];
    for (const [member, registered, answered] of checks) {
      if (registered !== answered) {
        throw new ConnectionError(
          `the daemon answered ping with ${member} ${String(answered)}, but its registration says ${String(registered)}`,
          "identity",
        );
      }
    }
    const resumeWindowMs = options.resumeWindowMs ?? RESUME_WINDOW_MS;
    return new Daemon(registration, runtimeDir, name, pong.features, timeoutMs, transport, resumeWindowMs);
  }

  /** The daemon's instance id. */
  get instanceId(): string {
    return this.registration.instance_id;
  }

  /** The daemon's process id. */
  get pid(): number {
    return this.registration.pid;
  }

  /** Whether this handle's long-lived requests go on across an in-place upgrade: the daemon announced the
   * `upgrade` feature and the resume window is not 0 (`resume.ts`). */
  get resumes(): boolean {
    return this.resumeWindowMs > 0 && this.features.includes(UPGRADE_FEATURE);
  }

  /** Sends a request of this protocol on its own connection and returns the checked answer; an `error` answer
   * rejects with `DaemonError`. Only the protocol's requests are accepted (`RequestInput`): an op it does not
   * have, or a request missing a member, does not compile. For the answer typed by op, use {@link exchange};
   * for an op newer than this client, {@link callRaw}. */
  call(request: RequestInput, options?: CallOptions): Promise<Response> {
    return this.callRaw(request, options);
  }

  /** {@link call} for any JSON object, unchecked by the compiler: the way to send an op newer than this client
   * (see {@link supports}). The answer is still checked against this protocol's schema. */
  callRaw(request: JsonObject, options?: CallOptions): Promise<Response> {
    return this.exchanges.call(request, options);
  }

  /** Sends a request of this protocol and returns the answer the schema says it gets (`ANSWERS`), typed by its
   * op: the path behind the typed methods, and the way to use any op of this protocol, one without a method
   * included. An `error` answer rejects with `DaemonError`, one of another type with `ProtocolError`. Only the
   * first answer is read, so for `subscribe`, `own` and `wait` this is a probe: the connection is closed after
   * it (use {@link subscribe}, {@link claim} and {@link wait}). */
  async exchange<R extends RequestInput>(request: R, options?: CallOptions): Promise<AnswerTo<R["op"]>> {
    // `R["op"]` is one op of `Request`'s, but the compiler cannot see through `DeepReadonly` that it is.
    return expectAnswer(await this.call(request, options), request.op, describe(request)) as AnswerTo<R["op"]>;
  }

  /** Whether the daemon supports `op`. Every op of protocol 8 is supported by a protocol 8 daemon (SPEC V3);
   * for another op the daemon is asked with the bare `{op}` (so only probe ops whose bare form is harmless),
   * and an `unsupported request: <op>` answer, here or to any earlier call, means no. */
  async supports(op: string, options?: CallOptions): Promise<boolean> {
    if (this.exchanges.knownUnsupported(op)) return false;
    if ((REQUEST_OPS as readonly string[]).includes(op)) return true;
    try {
      await this.callRaw({ op }, options);
      return true;
    } catch (error) {
      if (error instanceof DaemonError) {
        return error.unsupportedOp !== op;
      }
      throw error;
    }
  }

  /** `ping`: who the daemon is. Refuses another protocol with `VersionMismatchError`. */
  async ping(options?: CallOptions): Promise<PongResponse> {
    const pong = await this.exchange({ op: "ping" }, options);
    if (pong.protocol !== PROTOCOL_VERSION) {
      throw new VersionMismatchError(PROTOCOL_VERSION, pong.protocol, { pid: pong.pid });
    }
    return pong;
  }

  /** Claims ownership (SPEC §7.3): without a ticket, a daemon never claimed; with one, a handoff. */
  claim(options?: CallOptions & { readonly ticket?: string | undefined }): Promise<Owner> {
    const request: Request = { op: "own", instance_id: this.instanceId };
    if (options?.ticket !== undefined) {
      request.ticket = options.ticket;
    }
    const handoff = { runtimeDir: this.runtimeDir, name: this.name, instanceId: this.instanceId };
    return this.exchanges.open(request, options, (channel, answer, what) => {
      expectAnswer(answer, "own", what);
      return new Owner(channel, this.registration.token, handoff, this.timeoutMs);
    });
  }

  /** Waits for a pipe process to exit. Only connecting and sending are bounded by the timeout; the answer may
   * take as long as the process runs (the signal still aborts it). When a daemon with the `upgrade` feature
   * closes the connection before answering (an in-place upgrade), `wait` is asked again once the same instance
   * answers, within the resume window. */
  async wait(id: number, options?: CallOptions): Promise<Exited> {
    const request = { op: "wait", id } as const;
    for (;;) {
      try {
        return exitedOf(expectAnswer(await this.exchanges.await(request, options), "wait", describe(request)));
      } catch (error) {
        await this.afterLost(error, options?.signal);
      }
    }
  }

  /** After a long-lived request failed with `error`: resolves once the same daemon instance answers again after
   * its connection was lost (an in-place upgrade), so the request can be asked again; otherwise throws `error`
   * (it was not a lost connection, this handle does not resume, no daemon is left or another instance answers),
   * or `VersionMismatchError` when the daemon speaks another protocol now. */
  private async afterLost(error: unknown, signal: AbortSignal | undefined): Promise<void> {
    if (!connectionLost(error) || !this.resumes) {
      throw error;
    }
    if (!(await reachSameInstance(this, new Backoff(this.resumeWindowMs), signal))) {
      throw error;
    }
  }

  /** Types `command` and Enter at the prompt of a terminal started with `shellIntegration` and waits for the
   * command's end (`command_finished`: exit code, output offsets, text) or for `options.timeoutMs` (default
   * 30 s; `command_running`: the command goes on, and {@link waitCommand} waits again). The shell must be at its
   * prompt with nothing typed: otherwise (a command runs, something was typed, no first prompt yet) it rejects
   * at once with a `DaemonError` saying why, as it does when the shell exits or the terminal is terminated
   * before the command ends. Needs the daemon's `commands` feature. */
  run(id: number, command: string, options?: CommandWaitOptions): Promise<CommandOutcome> {
    const request: RunRequest = { op: "run", id, command, ...timeoutMember(options) };
    return this.awaitCommand(request, options);
  }

  /** Waits for the end of command `commandId` (from `run`'s `command_running`, `commands` or a
   * `command_started` event) of a terminal started with `shellIntegration`, or for `options.timeoutMs`, as
   * {@link run} does; a command that already ended is answered at once. Several callers may wait for one. */
  waitCommand(id: number, commandId: number, options?: CommandWaitOptions): Promise<CommandOutcome> {
    const request: WaitCommandRequest = { op: "wait_command", id, command_id: commandId, ...timeoutMember(options) };
    return this.awaitCommand(request, options);
  }

  /** Sends `run` or `wait_command` and waits for its answer: connecting and sending within the handle's
   * timeout, the answer within the command's wait plus that timeout (the daemon answers by the former). When a
   * daemon with the `upgrade` feature closes the connection before answering and the same instance answers
   * again, `wait_command` is asked again for the rest of its wait, and `run`, whose command may have been
   * typed, rejects with `ConnectionError` `interrupted`. */
  private async awaitCommand(request: RunRequest | WaitCommandRequest, options?: CommandWaitOptions): Promise<CommandOutcome> {
    const waitMs = options?.timeoutMs ?? DEFAULT_COMMAND_WAIT_MS;
    const started = Date.now();
    let asked: RunRequest | WaitCommandRequest = request;
    for (;;) {
      const leftMs = Math.max(0, waitMs - (Date.now() - started));
      try {
        const answer = await this.exchanges.await(asked, { signal: options?.signal }, leftMs + this.timeoutMs);
        return commandOutcomeOf(expectAnswer(answer, asked.op, describe(asked)));
      } catch (error) {
        await this.afterLost(error, options?.signal);
        if (asked.op === "run") {
          throw new ConnectionError(
            `the daemon was upgraded while run waited on terminal ${asked.id}; the command may have been typed: ` +
              "find it with commands and wait for it with waitCommand rather than running it again",
            "interrupted",
            { cause: error },
          );
        }
        asked = { ...asked, timeout_ms: Math.max(0, waitMs - (Date.now() - started)) };
      }
    }
  }

  /** Attaches to a process. Only the exchange up to `attached` is bounded by the timeout; the subscription then
   * lasts until the process exits, the daemon closes it or `close()` (the signal, if given, also closes it).
   * Against a daemon with the `upgrade` feature it goes on by itself when the daemon closes its connection
   * before `exited`, and says so with a `resumed` event (see `Subscription`). */
  subscribe(params: SubscribeParams, options?: CallOptions): Promise<Subscription> {
    const events = params.events !== undefined && params.events.length > 0 ? { events: [...params.events] } : {};
    const request = (offset: number, role: Role, takeover: boolean): Request => ({
      op: "subscribe",
      id: params.id,
      offset,
      attachment_id: params.attachmentId,
      role,
      takeover,
      ...events,
    });
    const open = (asked: Request, callOptions: CallOptions | undefined) =>
      this.exchanges.open(asked, callOptions, (channel, answer, what) => {
        const attached = checkedAttached(expectAnswer(this.exchanges.rejectError(answer, asked), "subscribe", what));
        return { channel, attached };
      });
    const resume: SubscriptionResume | undefined = this.resumes
      ? {
          instanceId: this.instanceId,
          timeoutMs: this.timeoutMs,
          attachmentId: params.attachmentId,
          windowMs: this.resumeWindowMs,
          ping: (pingOptions) => this.ping(pingOptions),
          resubscribe: (offset, role, resumeOptions) => open(request(offset, role, false), resumeOptions),
        }
      : undefined;
    const first = request(params.offset ?? 0, params.role ?? "observer", takeoverFlag(params.takeover));
    return open(first, options).then(({ channel, attached }) => new Subscription(channel, attached, options?.signal, resume));
  }
}

/** `timeout_ms` as a request member: left out when not given, so the daemon's default applies. */
function timeoutMember(options: CommandWaitOptions | undefined): { timeout_ms?: number } {
  return options?.timeoutMs === undefined ? {} : { timeout_ms: options.timeoutMs };
}

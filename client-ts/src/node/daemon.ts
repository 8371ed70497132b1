//! `Daemon`: a handle on one running daemon, found through its registration. Every request runs on its own
//! connection (SPEC E8) and is bounded by a timeout and the caller's `AbortSignal`; `wait` and subscriptions
//! are bounded only up to sending (or `attached`), then live as long as the process does (SPEC N8).

import {
  AbortError,
  ConnectionError,
  DaemonError,
  ProtocolError,
  UNSUPPORTED_PREFIX,
  VersionMismatchError,
} from "../core/errors.js";
import type { JsonObject } from "../core/frame.js";
import { DAEMON_BINARY_NAME, daemonBinary, platformPackage } from "./binary.js";
import { base64Encode } from "../core/bytes.js";
import {
  attachedOf,
  bytesOf,
  describe,
  envelope,
  exitedOf,
  expectType,
  type Exited,
  type Replay,
  type RequestInput,
  type ResponseOf,
  type Rows,
  type Snapshot,
} from "../core/messages.js";
import {
  PROTOCOL_VERSION,
  REQUEST_OPS,
  type Mode,
  type PongResponse,
  type ProcessInfo,
  type Registration,
  type Request,
  type Response,
  type Signal,
} from "../generated/protocol.js";
import { abortable, bounded, Connection, readAnswer, type Limits } from "./connection.js";
import {
  createPipeRequest,
  createPtyRequest,
  DEFAULT_TIMEOUT_MS,
  type AttachmentSize,
  type CallOptions,
  type CreatePipeParams,
  type CreatePtyParams,
  type SubscribeParams,
} from "./options.js";
import { Owner } from "./owner.js";
import { daemonDir, readRegistration, type Location } from "./registration.js";
import { launchDaemon, REGISTRATION_POLL_MS, stopLaunched, type DaemonStderr } from "./spawn.js";
import { Subscription } from "./subscription.js";

/** `discover` options. */
export interface DiscoverOptions extends Location, CallOptions {}

/** `Daemon.spawn` and `connectOrSpawn` options. */
export interface SpawnOptions extends DiscoverOptions {
  /** The `opencode-pty` binary; defaults to `$OPENCODE_PTY_BIN`, then to the installed platform package's
   * (`opencode-pty-linux-x64`), then to `opencode-pty` on `PATH` (see `daemonBinary`). */
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

/** The daemon's answer to a claim on a daemon that already has its owner (SPEC O2). */
export const ALREADY_OWNED = "daemon already has a live owner";

/** Whether `error` is the daemon refusing a claim because another client owns it already. */
export function alreadyOwned(error: unknown): boolean {
  return error instanceof DaemonError && error.message === ALREADY_OWNED;
}

/** What `connectOrSpawn` found: a running daemon (no owner: it has one already), or one it started and owns. */
export type Connected = { readonly daemon: Daemon; readonly owner: Owner | null; readonly spawned: boolean };

/** A daemon found through its registration and confirmed by `ping`. Holds no connection. */
export class Daemon {
  /** Ops answered `unsupported request: <op>` (SPEC E5), learned from any call. */
  private readonly unsupported = new Set<string>();

  private constructor(
    /** The registration read from disk. */
    readonly registration: Registration,
    /** The parent of the runtime directory (`--runtime-dir`). */
    readonly runtimeDir: string,
    /** The runtime name (`--name`). */
    readonly name: string,
    /** The additive capabilities the daemon announced in `pong` (empty for plain protocol 8). */
    readonly features: readonly string[],
    /** The default timeout of this handle's calls, in milliseconds. */
    readonly timeoutMs: number,
  ) {}

  /** Reads the registration of `runtimeDir/name` (safe file, same protocol), pings the daemon and requires the
   * `pong` to name the registration's protocol, instance id and pid. */
  static async discover(options: DiscoverOptions): Promise<Daemon> {
    const dir = daemonDir(options);
    const runtimeDir = dir.slice(0, dir.length - options.name.length - 1);
    const registration = await readRegistration(dir);
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const probe = new Daemon(registration, runtimeDir, options.name, [], timeoutMs);
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
    return new Daemon(registration, runtimeDir, options.name, pong.features, timeoutMs);
  }

  /** Starts a new daemon (detached, so it outlives this process), waits for its registration, checks it with
   * `ping` and claims it. Each step is bounded by the timeout. When any step fails, the new daemon is stopped
   * (SIGTERM, then SIGKILL after `STOP_GRACE_MS`) and reaped before the call rejects, except when another
   * client claimed it first (the claim is refused with {@link ALREADY_OWNED}, see {@link alreadyOwned}): it is
   * that client's daemon then, and it is left running. */
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

  /** The daemon's instance id. */
  get instanceId(): string {
    return this.registration.instance_id;
  }

  /** The daemon's process id. */
  get pid(): number {
    return this.registration.pid;
  }

  /** Sends a request of this protocol on its own connection and returns the checked answer; an `error` answer
   * rejects with `DaemonError`. The generic path behind the typed methods. Only the protocol's requests are
   * accepted (`RequestInput`): an op it does not have, or a request missing a member, does not compile. For an
   * op newer than this client, use {@link callRaw}. */
  call(request: RequestInput, options?: CallOptions): Promise<Response> {
    return this.callRaw(request, options);
  }

  /** {@link call} for any JSON object, unchecked by the compiler: the way to send an op newer than this client
   * (see {@link supports}). The answer is still checked against this protocol's schema. */
  async callRaw(request: JsonObject, options?: CallOptions): Promise<Response> {
    const what = describe(request);
    let connection: Connection | null = null;
    const response = await bounded(what, this.limits(options), () => connection?.destroy(), async () => {
      const started = (connection = this.start());
      try {
        await this.send(started, request);
        return await readAnswer(started, what);
      } finally {
        started.destroy();
      }
    }, () => connection?.sent ?? false);
    return this.rejectError(response, request);
  }

  /** Whether the daemon supports `op`. Every op of protocol 8 is supported by a protocol 8 daemon (SPEC V3);
   * for another op the daemon is asked with the bare `{op}` (so only probe ops whose bare form is harmless),
   * and an `unsupported request: <op>` answer, here or to any earlier call, means no. */
  async supports(op: string, options?: CallOptions): Promise<boolean> {
    if (this.unsupported.has(op)) return false;
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
    const pong = await this.expect({ op: "ping" }, "pong", options);
    if (pong.protocol !== PROTOCOL_VERSION) {
      throw new VersionMismatchError(PROTOCOL_VERSION, pong.protocol, { pid: pong.pid });
    }
    return pong;
  }

  /** Claims ownership (SPEC §7.3): without a ticket, a daemon never claimed; with one, a handoff. */
  async claim(options?: CallOptions & { readonly ticket?: string | undefined }): Promise<Owner> {
    const request: Request = { op: "own", instance_id: this.instanceId };
    if (options?.ticket !== undefined) {
      request.ticket = options.ticket;
    }
    const what = describe(request);
    let connection: Connection | null = null;
    const opened = await bounded(what, this.limits(options), () => connection?.destroy(), async () => {
      const started = (connection = this.start());
      try {
        await this.send(started, request);
        expectType(await readAnswer(started, what), "owned", what);
        return started;
      } catch (error) {
        started.destroy();
        throw error;
      }
    }, () => connection?.sent ?? false);
    return new Owner(opened, this.registration.token, this.handoffBase(), this.timeoutMs);
  }

  createPty(params: CreatePtyParams, options?: CallOptions): Promise<ProcessInfo> {
    return this.expect(createPtyRequest(params), "created", options).then((r) => r.process);
  }

  createPipe(params: CreatePipeParams, options?: CallOptions): Promise<ProcessInfo> {
    return this.expect(createPipeRequest(params), "created", options).then((r) => r.process);
  }

  /** The processes of one mode, in creation order. */
  list(mode: Mode, options?: CallOptions): Promise<ProcessInfo[]> {
    return this.expect({ op: "list", mode }, "processes", options).then((r) => r.processes);
  }

  get(id: number, options?: CallOptions): Promise<ProcessInfo> {
    return this.expect({ op: "get", id }, "process", options).then((r) => r.process);
  }

  /** Waits for a pipe process to exit. Only connecting and sending are bounded by the timeout; the answer may
   * take as long as the process runs (the signal still aborts it). */
  async wait(id: number, options?: CallOptions): Promise<Exited> {
    const request: Request = { op: "wait", id };
    const what = describe(request);
    let connection: Connection | null = null;
    const opened = await bounded(what, this.limits(options), () => connection?.destroy(), async () => {
      const started = (connection = this.start());
      await this.send(started, request);
      return started;
    }, () => connection?.sent ?? false);
    try {
      const response = await abortable(what, options?.signal, () => opened.destroy(), readAnswer(opened, what));
      return exitedOf(expectType(this.rejectError(response, request), "exited", what));
    } finally {
      opened.destroy();
    }
  }

  async signal(id: number, signal: Signal, options?: CallOptions): Promise<void> {
    await this.expect({ op: "signal", id, signal }, "ok", options);
  }

  async setMetadata(id: number, metadata: Readonly<Record<string, unknown>>, options?: CallOptions): Promise<void> {
    await this.expect({ op: "set_metadata", id, metadata: { ...metadata } }, "ok", options);
  }

  /** Sends bytes to a PTY as its controller (`attachmentId` null only while it has none). */
  async write(id: number, attachmentId: string | null, data: Uint8Array, options?: CallOptions): Promise<void> {
    await this.expect({ op: "write", id, attachment_id: attachmentId, data_base64: base64Encode(data) }, "ok", options);
  }

  async resize(id: number, attachmentId: string | null, cols: number, rows: number, options?: CallOptions): Promise<void> {
    await this.expect({ op: "resize", id, attachment_id: attachmentId, cols, rows }, "ok", options);
  }

  /** Makes a subscribed attachment the controller and resizes to its size when that differs. */
  async control(params: AttachmentSize, options?: CallOptions): Promise<void> {
    const { id, attachmentId, cols, rows } = params;
    await this.expect({ op: "control", id, attachment_id: attachmentId, cols, rows }, "ok", options);
  }

  /** `control`, then the bytes, in one ordered step: what a keystroke from a user's terminal sends. */
  async input(params: AttachmentSize & { readonly data: Uint8Array }, options?: CallOptions): Promise<void> {
    const { id, attachmentId, cols, rows, data } = params;
    const request: Request = { op: "input", id, attachment_id: attachmentId, cols, rows, data_base64: base64Encode(data) };
    await this.expect(request, "ok", options);
  }

  async snapshot(id: number, options?: CallOptions): Promise<Snapshot> {
    const r = await this.expect({ op: "snapshot", id }, "snapshot", options);
    const checkpoint = bytesOf(r.checkpoint_base64, "snapshot.checkpoint_base64");
    return { process: r.process, text: r.text, checkpoint, cursorX: r.cursor_x, cursorY: r.cursor_y };
  }

  /** The last `rows` physical rows (default: the terminal's height) as plain text (SPEC §4.3). */
  async readRows(id: number, rows?: number, options?: CallOptions): Promise<Rows> {
    const request: Request = rows === undefined ? { op: "read_rows", id } : { op: "read_rows", id, rows };
    const r = await this.expect(request, "rows", options);
    return { process: r.process, lines: r.lines, cursorX: r.cursor_x, cursorY: r.cursor_y };
  }

  /** Sets the user title, or clears it with null or "". */
  async rename(id: number, title: string | null, options?: CallOptions): Promise<void> {
    await this.expect({ op: "rename", id, title }, "ok", options);
  }

  async replay(id: number, offset: number, options?: CallOptions): Promise<Replay> {
    const r = await this.expect({ op: "replay", id, offset }, "replay", options);
    const bytes = bytesOf(r.data_base64, "replay.data_base64");
    if (r.end_offset - r.available_offset !== bytes.length) {
      throw new ProtocolError(`replay spans ${r.available_offset}..${r.end_offset} but holds ${bytes.length} bytes`);
    }
    return {
      requestedOffset: r.requested_offset,
      availableOffset: r.available_offset,
      endOffset: r.end_offset,
      truncated: r.truncated,
      bytes,
    };
  }

  async terminate(id: number, options?: CallOptions): Promise<void> {
    await this.expect({ op: "terminate", id }, "ok", options);
  }

  /** Stops the daemon and every process it runs (accepted from any connection, SPEC N5). */
  async shutdown(options?: CallOptions): Promise<void> {
    await this.expect({ op: "shutdown" }, "ok", options);
  }

  /** Attaches to a process. Only the exchange up to `attached` is bounded by the timeout; the subscription then
   * lasts until the process exits, the daemon closes it or `close()` (the signal, if given, also closes it). */
  async subscribe(params: SubscribeParams, options?: CallOptions): Promise<Subscription> {
    const request: Request = {
      op: "subscribe",
      id: params.id,
      offset: params.offset ?? 0,
      attachment_id: params.attachmentId,
      role: params.role ?? "observer",
      takeover: params.takeover ?? false,
    };
    const what = describe(request);
    let connection: Connection | null = null;
    return bounded(what, this.limits(options), () => connection?.destroy(), async () => {
      const started = (connection = this.start());
      try {
        await this.send(started, request);
        const attached = attachedOf(expectType(this.rejectError(await readAnswer(started, what), request), "attached", what));
        return new Subscription(started, attached, options?.signal);
      } catch (error) {
        started.destroy();
        throw error;
      }
    }, () => connection?.sent ?? false);
  }

  /** The constant part of a handoff description. */
  private handoffBase(): { runtimeDir: string; name: string; instanceId: string } {
    return { runtimeDir: this.runtimeDir, name: this.name, instanceId: this.instanceId };
  }

  private limits(options: CallOptions | undefined): Limits {
    return { signal: options?.signal, timeoutMs: options?.timeoutMs ?? this.timeoutMs };
  }

  /** Starts a connection to the daemon. It exists from this moment on, before it is connected, so that a call
   * cancelled at any point (even before connecting finished) destroys it instead of leaving it behind. */
  private start(): Connection {
    return Connection.start(this.registration.socket);
  }

  /** Waits for `connection` to connect and sends `request` on it; destroys it on failure. */
  private async send(connection: Connection, request: Request | JsonObject): Promise<void> {
    try {
      await connection.ready;
      await connection.send(envelope(this.registration.token, request));
    } catch (error) {
      connection.destroy();
      throw error;
    }
  }

  private async expect<T extends Response["type"]>(
    request: Request,
    type: T,
    options: CallOptions | undefined,
  ): Promise<ResponseOf<T>> {
    return expectType(await this.call(request, options), type, describe(request));
  }

  /** Throws `DaemonError` for an `error` answer, remembering an unsupported op. */
  private rejectError(response: Response, request: Request | JsonObject): Response {
    if (response.type === "error") {
      const op = (request as JsonObject)["op"];
      if (typeof op === "string" && response.message === `${UNSUPPORTED_PREFIX}${op}`) {
        this.unsupported.add(op);
      }
      throw new DaemonError(response.message);
    }
    return response;
  }
}

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

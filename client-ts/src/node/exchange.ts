//! How a `Daemon` handle talks to its daemon: every request on a channel of its own (SPEC E8) from the handle's
//! transport, carrying the registration's token, and bounded by the call's timeout and signal. Three shapes of
//! exchange cover every op: one answer and close (`call`), one answer and keep the channel (`open`: `own`,
//! `subscribe`), and an answer that may take as long as the process runs (`await`: `wait`, SPEC N8) or the
//! command's wait (`run`, `wait_command`). An `error` answer rejects with `DaemonError` (`rejectError`, which
//! `open` leaves to its caller), and one saying the op is unknown is remembered for `supports`.

import { DaemonError } from "../core/errors.js";
import type { JsonObject } from "../core/frame.js";
import { describe, envelope, type RequestInput } from "../core/messages.js";
import type { Channel, Transport } from "../core/transport.js";
import { UNSUPPORTED_REQUEST_PREFIX, type Response } from "../generated/protocol.js";
import { abortable, bounded, readAnswer, type Limits } from "./connection.js";
import type { CallOptions } from "./options.js";

/** A request as sent: one of this protocol's, or any JSON object (`callRaw`). */
export type Sendable = RequestInput | JsonObject;

/** The exchanges of one daemon handle. */
export class Exchanges {
  /** Ops answered `unsupported request: <op>` (SPEC E5), learned from any exchange. */
  private readonly unsupported = new Set<string>();

  constructor(
    /** The daemon's socket (from its registration). */
    private readonly socket: string,
    /** The registration's token, which every envelope carries. */
    private readonly token: string,
    /** How a channel to the socket is made. */
    private readonly transport: Transport,
    /** The default timeout of a call, in milliseconds. */
    readonly timeoutMs: number,
  ) {}

  /** Sends `request` on its own channel and returns its one answer; the channel is closed after. The whole
   * exchange is bounded. */
  async call(request: Sendable, options: CallOptions | undefined): Promise<Response> {
    const what = describe(request);
    let channel: Channel | null = null;
    const response = await bounded(what, this.limits(options), () => channel?.destroy(), async () => {
      const started = (channel = this.start());
      try {
        await this.send(started, request);
        return await readAnswer(started, what);
      } finally {
        started.destroy();
      }
    }, () => channel?.sent ?? false);
    return this.rejectError(response, request);
  }

  /** Sends `request` on its own channel and hands its first answer, as it came (an `error` too), to `first`,
   * which keeps the channel (for what follows on it) and returns what the caller gets. Bounded up to `first`'s
   * return; when anything fails before, the channel is closed. */
  async open<T>(
    request: Sendable,
    options: CallOptions | undefined,
    first: (channel: Channel, answer: Response, what: string) => T,
  ): Promise<T> {
    const what = describe(request);
    let channel: Channel | null = null;
    return bounded(what, this.limits(options), () => channel?.destroy(), async () => {
      const started = (channel = this.start());
      try {
        await this.send(started, request);
        return first(started, await readAnswer(started, what), what);
      } catch (error) {
        started.destroy();
        throw error;
      }
    }, () => channel?.sent ?? false);
  }

  /** Sends `request` on its own channel within the timeout, then waits for its one answer without one (the
   * signal still aborts), or within `answerMs` when given (for a request the daemon answers by a deadline of
   * its own); the channel is closed after. */
  async await(request: Sendable, options: CallOptions | undefined, answerMs?: number): Promise<Response> {
    const what = describe(request);
    let channel: Channel | null = null;
    const opened = await bounded(what, this.limits(options), () => channel?.destroy(), async () => {
      const started = (channel = this.start());
      await this.send(started, request);
      return started;
    }, () => channel?.sent ?? false);
    const cancel = (): void => opened.destroy();
    const answer = (): Promise<Response> => readAnswer(opened, what);
    try {
      const response =
        answerMs === undefined
          ? await abortable(what, options?.signal, cancel, answer())
          : await bounded(what, { signal: options?.signal, timeoutMs: answerMs }, cancel, answer, () => true);
      return this.rejectError(response, request);
    } finally {
      opened.destroy();
    }
  }

  /** Whether an earlier answer said the daemon does not know `op`. */
  knownUnsupported(op: string): boolean {
    return this.unsupported.has(op);
  }

  /** The limits of one call: its signal, and its timeout or the handle's. */
  limits(options: CallOptions | undefined): Limits {
    return { signal: options?.signal, timeoutMs: options?.timeoutMs ?? this.timeoutMs };
  }

  /** Starts a channel to the daemon. It exists from this moment on, before it is connected, so that a call
   * cancelled at any point (even before connecting finished) destroys it instead of leaving it behind. */
  private start(): Channel {
    return this.transport(this.socket);
  }

  /** Waits for `channel` to connect and sends `request` on it; destroys it on failure. */
  private async send(channel: Channel, request: Sendable): Promise<void> {
    try {
      await channel.ready;
      await channel.send(envelope(this.token, request));
    } catch (error) {
      channel.destroy();
      throw error;
    }
  }

  /** Throws `DaemonError` for an `error` answer, remembering an unsupported op. */
  rejectError(response: Response, request: Sendable): Response {
    if (response.type === "error") {
      const op = (request as JsonObject)["op"];
      if (typeof op === "string" && response.message === `${UNSUPPORTED_REQUEST_PREFIX}${op}`) {
        this.unsupported.add(op);
      }
      throw new DaemonError(response.message);
    }
    return response;
  }
}

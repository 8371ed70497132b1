//! `Owner`: the owner channel of a claimed daemon (SPEC §7.3). It accepts `prepare_handoff` and `shutdown`, one
//! at a time; closing it stops the daemon unless a handoff was prepared or a successor took over. Holding it
//! keeps Node's event loop alive unless `unref()` is called.

import { ConnectionError } from "../core/errors.js";
import { describe, envelope, expectAnswer, type Handoff } from "../core/messages.js";
import type { AnswerTo } from "../generated/protocol.js";
import type { Channel } from "../core/transport.js";
import { bounded, readAnswer } from "./connection.js";
import type { CallOptions } from "./options.js";

/** A claimed daemon's owner channel. */
export class Owner {
  /** The request in flight, so requests go one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Set when a request did not complete: its answer may still arrive, so the channel cannot be trusted. */
  private interrupted = false;
  /** Settles when the owner channel ends, whoever ended it. */
  readonly closed: Promise<void>;

  /** @internal Created by `Daemon.claim`. */
  constructor(
    private readonly connection: Channel,
    private readonly token: string,
    private readonly base: { readonly runtimeDir: string; readonly name: string; readonly instanceId: string },
    private readonly timeoutMs: number,
  ) {
    this.closed = connection.closed;
  }

  /** Prepares a handoff (SPEC O3): what a successor passes to `claimHandoff`. Asking again returns the same
   * ticket and deadline. */
  async prepareHandoff(options?: CallOptions): Promise<Handoff> {
    const answer = await this.request({ op: "prepare_handoff" }, options);
    return { ...this.base, ticket: answer.ticket, expiresAt: answer.expires_at };
  }

  /** Stops the daemon and every process it runs. */
  async shutdown(options?: CallOptions): Promise<void> {
    await this.request({ op: "shutdown" }, options);
  }

  /** Lets this process exit while it holds ownership: the owner channel no longer keeps Node's event loop
   * alive. The channel stays open; when the process ends, it closes and the daemon stops (or waits for the
   * successor of a prepared handoff), as on {@link release}. A request in flight still keeps the loop alive
   * until it settles (its timer does). */
  unref(): this {
    this.connection.unref();
    return this;
  }

  /** Undoes {@link unref}: the open owner channel keeps Node's event loop alive again (the default). */
  ref(): this {
    this.connection.ref();
    return this;
  }

  /** Closes the owner channel: the daemon stops now, or (with a prepared handoff) when its ticket expires
   * unclaimed; a superseded channel's closing changes nothing (SPEC O4, O5). */
  release(): Promise<void> {
    this.connection.close();
    return this.closed;
  }

  /** Sends one of the owner channel's requests and reads the answer the schema says it gets. */
  private request<Op extends "prepare_handoff" | "shutdown">(
    request: { readonly op: Op },
    options: CallOptions | undefined,
  ): Promise<AnswerTo<Op>> {
    const what = describe(request);
    const run = async () => {
      if (this.interrupted) {
        throw new ConnectionError(
          "an earlier request on this owner channel did not complete, so the channel cannot be used",
          "io",
        );
      }
      const limits = { signal: options?.signal, timeoutMs: options?.timeoutMs ?? this.timeoutMs };
      const cut = (): void => {
        this.interrupted = true;
      };
      let sent = false;
      return bounded(
        what,
        limits,
        cut,
        async () => {
          sent = true;
          await this.connection.send(envelope(this.token, request));
          return expectAnswer(await readAnswer(this.connection, what), request.op, what);
        },
        () => sent,
      );
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }
}

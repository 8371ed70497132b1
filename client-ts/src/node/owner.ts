//! `Owner`: the owner channel of a claimed daemon (SPEC §7.3). It accepts `prepare_handoff`, `upgrade` and
//! `shutdown`, one at a time; closing it stops the daemon unless a handoff was prepared or a successor took over. Holding it
//! keeps Node's event loop alive unless `unref()` is called.

import { ConnectionError } from "../core/errors.js";
import { describe, envelope, expectAnswer, type Handoff } from "../core/messages.js";
import type { AnswerTo, PrepareHandoffRequest, ShutdownRequest, UpgradeRequest } from "../generated/protocol.js";
import type { Channel } from "../core/transport.js";
import { bounded, readAnswer } from "./connection.js";
import type { CallOptions } from "./options.js";

/** How long {@link Owner.upgrade} waits for its answer by default (30 s): the daemon answers once the new
 * image serves requests, after a preflight of the new program and the hand-over of every terminal. */
export const UPGRADE_TIMEOUT_MS = 30_000;

/** What {@link Owner.upgrade} accepts. */
export interface UpgradeOptions extends CallOptions {
  /** The absolute path of the new binary; left out, the daemon's own executable as it is on disk now (a package
   * upgrade replaced it). */
  readonly program?: string | undefined;
}

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

  /** Upgrades the daemon in place: it re-executes itself from `options.program` (left out: its own executable
   * as it is on disk now), keeping its pid, socket, token, processes and this owner channel, and resolves once
   * the new image serves requests. A rejection with `DaemonError` (a relative, missing or unsafe path, a program
   * whose preflight failed, a new image that could not take the state) means the old image still serves with
   * nothing changed. Only a daemon whose `features` include `upgrade` (`UPGRADE_FEATURE`) does it; any other
   * refuses. Other connections are closed during the upgrade: this client's subscriptions, `wait`s and
   * `waitCommand`s go on by themselves. Bounded by `options.timeoutMs`, default {@link UPGRADE_TIMEOUT_MS}. */
  async upgrade(options?: UpgradeOptions): Promise<void> {
    const request: UpgradeRequest =
      options?.program === undefined ? { op: "upgrade" } : { op: "upgrade", program: options.program };
    await this.request(request, { signal: options?.signal, timeoutMs: options?.timeoutMs ?? UPGRADE_TIMEOUT_MS });
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
  private request<R extends PrepareHandoffRequest | ShutdownRequest | UpgradeRequest>(
    request: R,
    options: CallOptions | undefined,
  ): Promise<AnswerTo<R["op"]>> {
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
          // `R["op"]` is one of three ops, but the compiler cannot narrow `AnswerTo` through the generic.
          return expectAnswer(await readAnswer(this.connection, what), request.op, what) as AnswerTo<R["op"]>;
        },
        () => sent,
      );
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }
}

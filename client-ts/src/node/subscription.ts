//! `Subscription`: an open `subscribe` connection (SPEC N4, D11). `attached` comes first; then an async iterator
//! of typed events whose output is checked to be contiguous. It ends after `exited` or when the daemon closes
//! the connection, and `close()` detaches. No client-side timeout ever cuts it (SPEC N8).

import { AbortError, ConnectionError } from "../core/errors.js";
import type { Attached, SubscriptionEvent } from "../core/messages.js";
import { SubscriptionState } from "../core/subscription-state.js";
import type { Channel } from "../core/transport.js";

/** Why a subscription ended. */
export type EndReason = "exited" | "closed" | "detached";

/** A live subscription. Iterate it with `for await`; breaking out of the loop detaches. */
export class Subscription implements AsyncIterable<SubscriptionEvent> {
  private readonly state: SubscriptionState;
  private reason: EndReason | null = null;
  /** Set while a `next()` waits. */
  private reading = false;
  /** Set when the signal given to `subscribe` fired. */
  private aborted = false;
  /** Closes the subscription when the signal fires; removed from the signal once the subscription ends. */
  private readonly onAbort = (): void => {
    this.aborted = true;
    this.close();
  };

  /** @internal Created by `Daemon.subscribe`. */
  constructor(
    private readonly connection: Channel,
    /** The `attached` answer, with the replay as bytes. */
    readonly attached: Attached,
    private readonly signal?: AbortSignal | undefined,
  ) {
    this.state = new SubscriptionState(attached.endOffset);
    if (signal?.aborted) {
      this.onAbort();
    } else {
      signal?.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  /** The offset just past the last output byte delivered: where a later subscription resumes. */
  get offset(): number {
    return this.state.offset;
  }

  /** Why the subscription ended, or null while it is open. */
  get endReason(): EndReason | null {
    return this.reason;
  }

  /** The next event, or null once the subscription has ended. Rejects with `ProtocolError` for a frame that
   * breaks the protocol (the connection is closed), `DaemonError` when the daemon ends it with `error`, and
   * `AbortError` when the signal given to `subscribe` fired while it waited. Events are read one at a time: a
   * call made while another is still waiting rejects with `TypeError` (a programming error; the first call
   * still gets its event). */
  async next(): Promise<SubscriptionEvent | null> {
    if (this.reading) {
      throw new TypeError("Subscription.next() was called while an earlier call still waits; read one event at a time");
    }
    this.reading = true;
    try {
      return await this.read();
    } finally {
      this.reading = false;
    }
  }

  private async read(): Promise<SubscriptionEvent | null> {
    if (this.reason !== null) {
      return null;
    }
    let frame;
    try {
      frame = await this.connection.read();
    } catch (error) {
      this.connection.destroy();
      this.end("closed");
      if (this.aborted) {
        throw new AbortError("subscription", { cause: this.signal?.reason });
      }
      if (this.reason === "detached" && error instanceof ConnectionError) {
        return null;
      }
      throw error;
    }
    if (this.aborted) {
      throw new AbortError("subscription", { cause: this.signal?.reason });
    }
    if (frame === null) {
      this.connection.destroy();
      this.end(this.state.exited ? "exited" : "closed");
      return null;
    }
    let event: SubscriptionEvent;
    try {
      event = this.state.accept(frame);
    } catch (error) {
      this.connection.destroy();
      this.end("closed");
      throw error;
    }
    if (event.type === "exited") {
      // The daemon half-closed after `exited` and waits for this side to close (SPEC N4).
      this.end("exited");
      this.connection.close();
    }
    return event;
  }

  /** Detaches: closes this side, so the daemon forgets the attachment at once (a controller's departure
   * promotes the previous one, SPEC D12). */
  close(): void {
    this.end("detached");
    this.connection.close();
    this.connection.destroy();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<SubscriptionEvent, void, undefined> {
    try {
      for (let event = await this.next(); event !== null; event = await this.next()) {
        yield event;
      }
    } finally {
      if (this.reason === null) {
        this.close();
      }
    }
  }

  /** Records why the subscription ended (the first reason counts) and stops listening to the signal, so a
   * long-lived signal shared by many subscriptions does not collect their listeners. */
  private end(reason: EndReason): void {
    this.reason ??= reason;
    this.signal?.removeEventListener("abort", this.onAbort);
  }
}

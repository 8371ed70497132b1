//! `Subscription`: an open `subscribe` connection (SPEC N4, D11). `attached` comes first; then an async iterator
//! of typed events whose output is checked to be contiguous. It ends after `exited` or when the daemon closes
//! the connection, and `close()` detaches. No client-side timeout ever cuts it (SPEC N8).
//!
//! Across an in-place upgrade (`resume.ts`) it goes on by itself: when a daemon with the `upgrade` feature
//! closes the connection before `exited`, it subscribes again, on a new connection to the same instance, from
//! the offset where output stopped, with the same attachment id and events, and yields a `resumed` event (the
//! client's own, not the daemon's) before the output that follows. The role it asks for is the one it last had:
//! a controller (by `attached` or the latest `controller_changed`) asks to be the controller without taking
//! over, so it is the controller again when nobody else took control during the break, and an observer
//! otherwise; anything else asks as an observer. The client cannot tell an upgrade's close from another: an
//! observer the daemon dropped for falling behind (D13) goes on the same way while the daemon still keeps the
//! bytes from its offset, and ends as before once it does not; a process terminated meanwhile ends it as before.

import { AbortError, ConnectionError, DaemonError, TimeoutError } from "../core/errors.js";
import type { Frame } from "../core/frame.js";
import type { Attached, Resumed, SubscriptionEvent } from "../core/messages.js";
import { SubscriptionState } from "../core/subscription-state.js";
import type { Channel } from "../core/transport.js";
import type { Role } from "../generated/protocol.js";
import { Backoff, connectionLost, reachSameInstance, type ResumeTarget } from "./resume.js";

/** Why a subscription ended. */
export type EndReason = "exited" | "closed" | "detached";

/** @internal What a subscription needs to subscribe again after its connection was lost. */
export interface SubscriptionResume extends ResumeTarget {
  /** The attachment id, kept across connections. */
  readonly attachmentId: string;
  /** How long a lost connection is tried again, in milliseconds. */
  readonly windowMs: number;
  /** `subscribe` again from `offset` as `role`, without taking over, with the same attachment id and events;
   * the new channel and its checked `attached`. */
  resubscribe(
    offset: number,
    role: Role,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<{ channel: Channel; attached: Attached }>;
}

/** A live subscription. Iterate it with `for await`; breaking out of the loop detaches. */
export class Subscription implements AsyncIterable<SubscriptionEvent> {
  private readonly state: SubscriptionState;
  private reason: EndReason | null = null;
  /** Set while a `next()` waits. */
  private reading = false;
  /** Set when the signal given to `subscribe` fired. */
  private aborted = false;
  /** The connection events are read from: the first, or the latest resumption's. */
  private connection: Channel;
  /** Whether this attachment is the controller, as `attached` and the latest `controller_changed` said. */
  private controller: boolean;
  /** The replay of a resumption, taken as an output frame after its `resumed` event. */
  private pending: Frame | null = null;
  /** Stops a resumption in progress when the subscription is closed. */
  private readonly stop = new AbortController();
  /** Closes the subscription when the signal fires; removed from the signal once the subscription ends. */
  private readonly onAbort = (): void => {
    this.aborted = true;
    this.close();
  };

  /** @internal Created by `Daemon.subscribe`. */
  constructor(
    connection: Channel,
    /** The `attached` answer, with the replay as bytes. After a resumption it is still the first answer; the
     * `resumed` event carries what the daemon said then. */
    readonly attached: Attached,
    private readonly signal?: AbortSignal | undefined,
    private readonly resume?: SubscriptionResume | undefined,
  ) {
    this.connection = connection;
    this.controller = attached.role === "controller";
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
   * breaks the protocol (the connection is closed), `DaemonError` when the daemon ends it with `error`,
   * `VersionMismatchError` when the daemon came back from an upgrade speaking another protocol, and
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
    let frame: Frame | null;
    try {
      frame = this.pending ?? (await this.connection.read());
      this.pending = null;
    } catch (error) {
      this.connection.destroy();
      if (connectionLost(error)) {
        const resumed = await this.resumed();
        if (resumed) {
          return resumed;
        }
      }
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
      const resumed = this.state.exited ? null : await this.resumed();
      if (resumed) {
        return resumed;
      }
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
    } else if (event.type === "controller_changed") {
      this.controller = event.attachmentId === this.resume?.attachmentId;
    }
    return event;
  }

  /** After the connection was lost: subscribes again within the window and returns the `resumed` event, or
   * null when the subscription cannot go on (it does not resume, no daemon is left, another instance answers,
   * the process is gone, the bytes are no longer kept, or it was closed meanwhile). Throws
   * `VersionMismatchError` when the daemon speaks another protocol now, and `AbortError` when the
   * subscription's signal fired. */
  private async resumed(): Promise<SubscriptionEvent | null> {
    try {
      return await this.resuming();
    } catch (error) {
      this.end("closed");
      throw error;
    }
  }

  /** {@link resumed}, without ending the subscription when it throws. */
  private async resuming(): Promise<SubscriptionEvent | null> {
    const resume = this.resume;
    if (!resume || this.reason !== null) {
      return null;
    }
    const stop = this.stop.signal;
    const backoff = new Backoff(resume.windowMs);
    try {
      for (;;) {
        if (!(await reachSameInstance(resume, backoff, stop))) {
          return null;
        }
        const role: Role = this.controller ? "controller" : "observer";
        try {
          const timeoutMs = Math.max(1, Math.min(backoff.remainingMs, resume.timeoutMs));
          const { channel, attached } = await resume.resubscribe(this.state.offset, role, { signal: stop, timeoutMs });
          return this.goOn(channel, attached, backoff.attempts);
        } catch (error) {
          if (error instanceof DaemonError) {
            if (!this.controller) {
              // The process is gone (terminated during the break), or the daemon refuses for another reason.
              return null;
            }
            // Another attachment took control during the break: go on as an observer, as a controller that
            // was taken over does.
            this.controller = false;
          } else if (connectionLost(error) || error instanceof TimeoutError) {
            if (!(await backoff.pause(stop))) {
              return null;
            }
          } else {
            throw error;
          }
        }
      }
    } catch (error) {
      if (error instanceof AbortError) {
        if (this.aborted) throw new AbortError("subscription", { cause: this.signal?.reason });
        return null;
      }
      throw error;
    }
  }

  /** Goes on on `channel`, whose `attached` must hold every byte from where output stopped (a pipe process
   * keeps none, and sends none). */
  private goOn(channel: Channel, attached: Attached, attempts: number): SubscriptionEvent | null {
    const offset = this.state.offset;
    const pty = attached.process.mode === "pty";
    if (this.reason !== null) {
      // Closed while the new connection was being made.
      channel.destroy();
      return null;
    }
    if (pty && (attached.availableOffset > offset || attached.endOffset < offset)) {
      // Going on would skip bytes the daemon no longer keeps.
      channel.destroy();
      return null;
    }
    this.connection = channel;
    this.controller = attached.role === "controller";
    if (pty) {
      // The bytes kept after `offset` come next, as an output frame, so `offset` moves only when they are read.
      const rest = attached.replay.subarray(offset - attached.availableOffset);
      if (rest.length > 0) {
        this.pending = { kind: "output", start: offset, end: attached.endOffset, bytes: rest };
      }
    } else {
      // A pipe process sends no output: its offsets only say how far it wrote.
      this.state.resumeAt(attached.endOffset);
    }
    const { process, role, generation } = attached;
    const resumed: Resumed = { type: "resumed", offset, process, role, generation, attempts };
    return resumed;
  }

  /** Detaches: closes this side, so the daemon forgets the attachment at once (a controller's departure
   * promotes the previous one, SPEC D12). A resumption in progress stops. */
  close(): void {
    this.end("detached");
    this.stop.abort();
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

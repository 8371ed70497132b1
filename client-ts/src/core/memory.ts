//! An in-memory {@link Transport} for unit tests: the daemon is a function in the same process that receives
//! each envelope the client sends and answers through a {@link MemoryPeer}. Both directions go through the real
//! frame encoder and decoder, so what the client reads is exactly what it would read from a socket, and a test
//! can send malformed or split frames too. With `Daemon.fromRegistration(registration, { transport })` the
//! whole client runs without a daemon binary, a socket or a registration file.

import { ConnectionError, OpencodePtyError, ProtocolError } from "./errors.js";
import { encodeControl, encodeOutput, FrameDecoder, type Frame, type JsonObject } from "./frame.js";
import type { Channel, Transport } from "./transport.js";

/** The daemon's side of one in-memory connection. */
export interface MemoryPeer {
  /** The socket the client connected to (the registration's). */
  readonly socket: string;
  /** Sends a JSON object to the client as one control frame. */
  send(value: JsonObject): void;
  /** Sends an output frame: `bytes` from offset `start` on. */
  output(start: number, bytes: Uint8Array): void;
  /** Sends bytes as they are: a malformed frame, or part of one. */
  raw(bytes: Uint8Array): void;
  /** Ends the stream cleanly: the client reads what was sent, then the end. */
  end(): void;
  /** Breaks the connection: the client reads what was sent, then fails with `ConnectionError` `closed`. */
  destroy(): void;
  /** Resolves when the client closed or destroyed its side. */
  readonly left: Promise<void>;
}

/** The in-memory daemon: called with each envelope (`{token, request}`) a client sends, in order, and the peer
 * to answer on. It may answer at once, later, or never. */
export type MemoryDaemon = (envelope: JsonObject, peer: MemoryPeer) => void;

/** A transport whose every connection is served by `daemon` in this process. */
export function memoryTransport(daemon: MemoryDaemon): Transport {
  return (socket) => new MemoryChannel(socket, daemon);
}

/** One in-memory connection: the client's {@link Channel} and the daemon's {@link MemoryPeer}. */
class MemoryChannel implements Channel {
  readonly ready: Promise<void> = Promise.resolve();
  readonly closed: Promise<void>;
  readonly left: Promise<void>;
  sent = false;
  /** The client's decoder, fed by the daemon's side. */
  private readonly decoder = new FrameDecoder();
  /** The daemon's decoder, fed by the client's side. */
  private readonly incoming = new FrameDecoder();
  private readonly queue: Frame[] = [];
  /** Set when the daemon ended the stream (null: cleanly) or it broke; reads see it after the queued frames. */
  private ended: { error: OpencodePtyError | null } | null = null;
  private waiter: (() => void) | null = null;
  /** Whether the client closed or destroyed its side. */
  private gone = false;
  private markClosed!: () => void;
  private markLeft!: () => void;

  constructor(
    readonly socket: string,
    private readonly daemon: MemoryDaemon,
  ) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.left = new Promise((resolve) => (this.markLeft = resolve));
  }

  send(value: JsonObject): Promise<void> {
    const frame = encodeControl(value);
    this.sent = true;
    if (this.gone) {
      return Promise.reject(new ConnectionError(`cannot send to ${this.socket}: the connection is closed`, "io"));
    }
    this.incoming.push(frame);
    const envelopes: JsonObject[] = [];
    for (let next = this.incoming.next(); next; next = this.incoming.next()) {
      if (next.kind === "control") envelopes.push(next.value);
    }
    // The daemon sees the request after this call returns, as it would across a socket.
    return Promise.resolve().then(() => {
      for (const envelope of envelopes) {
        if (!this.gone) this.daemon(envelope, this.peer());
      }
    });
  }

  async read(): Promise<Frame | null> {
    for (;;) {
      const frame = this.queue.shift();
      if (frame) return frame;
      if (this.ended) {
        if (this.ended.error) throw this.ended.error;
        return null;
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  /** As a socket's `end()` then `destroySoon()`: nothing is left to flush in memory, so it closes at once. */
  close(): void {
    this.destroy();
  }

  destroy(): void {
    this.leave();
    this.finish(new ConnectionError(`the connection to ${this.socket} closed`, "closed"));
  }

  unref(): void {}

  ref(): void {}

  /** The daemon's handle on this connection. */
  private peer(): MemoryPeer {
    return {
      socket: this.socket,
      left: this.left,
      send: (value) => this.deliver(encodeControl(value)),
      output: (start, bytes) => this.deliver(encodeOutput(start, bytes)),
      raw: (bytes) => this.deliver(bytes),
      end: () => {
        try {
          this.decoder.finish();
          this.finish(null);
        } catch (error) {
          this.finish(error instanceof OpencodePtyError ? error : new ProtocolError(String(error)));
        }
      },
      destroy: () => this.finish(new ConnectionError(`the connection to ${this.socket} closed`, "closed")),
    };
  }

  /** Bytes from the daemon: decoded into frames for the client, unless the stream is over. */
  private deliver(bytes: Uint8Array): void {
    if (this.ended) return;
    this.decoder.push(bytes);
    try {
      for (let frame = this.decoder.next(); frame; frame = this.decoder.next()) {
        this.queue.push(frame);
      }
    } catch (error) {
      // A malformed frame means the peer is broken (SPEC F11).
      this.finish(error instanceof ProtocolError ? error : new ProtocolError(String(error)));
    }
    this.wake();
  }

  private leave(): void {
    if (!this.gone) {
      this.gone = true;
      this.markLeft();
    }
  }

  private finish(error: OpencodePtyError | null): void {
    if (!this.ended) {
      this.ended = { error };
      this.markClosed();
    }
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}

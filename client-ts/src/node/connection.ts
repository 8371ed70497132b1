//! The Node transport: one framed connection over `node:net` to the daemon's Unix socket, with a bounded queue
//! of decoded frames (the socket is paused while it is full, which is how a slow reader pushes back), and the
//! deadline and abort handling every call shares. `socketTransport` is the client's default {@link Transport}.

import { connect, type Socket } from "node:net";

import { AbortError, ConnectionError, OpencodePtyError, ProtocolError, TimeoutError } from "../core/errors.js";
import { encodeControl, FrameDecoder, type Frame, type JsonObject } from "../core/frame.js";
import { checkResponse } from "../core/messages.js";
import type { Channel, Transport } from "../core/transport.js";
import type { Response } from "../generated/protocol.js";

/** Decoded frames a connection holds before it stops reading from the socket (64). With frames of at most
 * 8 MiB that bounds what one connection buffers; a live PTY frame is at most 8 KiB (SPEC D6). */
export const MAX_QUEUED_FRAMES = 64;

/** One framed connection over a Unix socket. Reads are taken one at a time with {@link read}. */
export class Connection implements Channel {
  private readonly decoder = new FrameDecoder();
  private readonly queue: Frame[] = [];
  /** Set when the stream ended (null: cleanly) or failed; later reads see it after the queued frames. */
  private ended: { error: OpencodePtyError | null } | null = null;
  private waiter: (() => void) | null = null;
  /** Resolves when the socket has closed, whoever closed it. */
  readonly closed: Promise<void>;
  /** Resolves once connected; rejects with `ConnectionError` when the socket fails or is closed first. */
  readonly ready: Promise<void>;
  /** Whether anything was handed to the socket for the daemon ({@link send} was called): from then on, the
   * daemon may have received a request (what `TimeoutError.sent` reports). */
  sent = false;

  private constructor(
    private readonly socket: Socket,
    private readonly path: string,
  ) {
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    this.ready = new Promise((resolve, reject) => {
      const failed = (error: NodeJS.ErrnoException): void => {
        reject(new ConnectionError(`cannot connect to ${path}: ${error.message}`, "unreachable", { cause: error }));
      };
      const closed = (): void => reject(new ConnectionError(`the connection to ${path} closed before it was made`, "closed"));
      socket.once("error", failed);
      socket.once("close", closed);
      socket.once("connect", () => {
        socket.off("error", failed);
        socket.off("close", closed);
        resolve();
      });
    });
    // Whoever cancels a call before it connected never awaits this; the rejection is expected then.
    this.ready.catch(() => undefined);
    socket.on("data", (chunk: Buffer) => this.received(chunk));
    socket.on("end", () => {
      try {
        this.decoder.finish();
        this.end(null);
      } catch (error) {
        this.end(error as OpencodePtyError);
      }
    });
    socket.on("error", (error) => this.end(new ConnectionError(`the connection to ${path} failed: ${error.message}`, "io", { cause: error })));
    socket.on("close", () => this.end(new ConnectionError(`the connection to ${path} closed`, "closed")));
  }

  /** Starts connecting to `path` and returns at once, so that whoever may cancel the call holds the socket
   * from the first moment (destroying it before {@link ready} settles rejects `ready`). */
  static start(path: string): Connection {
    return new Connection(connect(path), path);
  }

  /** Sends one JSON object as a control frame. */
  send(value: JsonObject): Promise<void> {
    const frame = encodeControl(value);
    this.sent = true;
    return new Promise((resolve, reject) => {
      this.socket.write(frame, (error) => {
        if (error) {
          reject(new ConnectionError(`cannot send to ${this.path}: ${error.message}`, "io", { cause: error }));
        } else {
          resolve();
        }
      });
    });
  }

  /** The next frame, or null when the daemon ended the stream cleanly between frames. */
  async read(): Promise<Frame | null> {
    for (;;) {
      const frame = this.queue.shift();
      if (frame) {
        if (this.queue.length < MAX_QUEUED_FRAMES && this.socket.isPaused()) {
          this.socket.resume();
        }
        return frame;
      }
      if (this.ended) {
        if (this.ended.error) {
          throw this.ended.error;
        }
        return null;
      }
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }

  /** Ends this side (the daemon sees the client leave) and closes the socket once the daemon ends too. */
  close(): void {
    this.socket.end();
    this.socket.destroySoon();
  }

  /** Closes the socket at once. */
  destroy(): void {
    this.socket.destroy();
  }

  /** Lets Node's event loop end while this connection is open (it stays open meanwhile). */
  unref(): void {
    this.socket.unref();
  }

  /** Undoes {@link unref}: the open connection keeps Node's event loop alive again. */
  ref(): void {
    this.socket.ref();
  }

  private received(chunk: Buffer): void {
    this.decoder.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
    try {
      for (let frame = this.decoder.next(); frame; frame = this.decoder.next()) {
        this.queue.push(frame);
      }
    } catch (error) {
      // A malformed frame means the peer is broken: stop reading and close (SPEC F11).
      this.end(error instanceof ProtocolError ? error : new ProtocolError(String(error)));
      this.socket.destroy();
    }
    if (this.queue.length >= MAX_QUEUED_FRAMES) {
      this.socket.pause();
    }
    this.wake();
  }

  private end(error: OpencodePtyError | null): void {
    if (!this.ended) {
      this.ended = { error };
    }
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}

/** The default transport: a Unix socket connection per channel. */
export const socketTransport: Transport = (socket) => Connection.start(socket);

/** How a call may be cut short: by the caller's signal, and by a timeout in milliseconds. */
export interface Limits {
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs: number;
}

/** Runs `work` until it settles, the timeout passes or the signal fires; in the last two cases `cancel` runs
 * (closing whatever connection `work` uses) and the call rejects with `TimeoutError` or `AbortError`. `sent`
 * tells, when the time is up, whether the request had been handed to the socket (`TimeoutError.sent`). */
export function bounded<T>(
  what: string,
  limits: Limits,
  cancel: () => void,
  work: () => Promise<T>,
  sent: () => boolean = () => false,
): Promise<T> {
  const { signal, timeoutMs } = limits;
  if (signal?.aborted) {
    return Promise.reject(new AbortError(what, { cause: signal.reason }));
  }
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void): void => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
        outcome();
      }
    };
    const aborted = (): void =>
      finish(() => {
        cancel();
        reject(new AbortError(what, { cause: signal?.reason }));
      });
    const timer = setTimeout(
      () =>
        finish(() => {
          const wasSent = sent();
          cancel();
          reject(new TimeoutError(what, timeoutMs, wasSent));
        }),
      timeoutMs,
    );
    signal?.addEventListener("abort", aborted, { once: true });
    work().then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

/** Waits on `work` until it settles or the signal fires (no timeout: for `wait` and subscriptions, SPEC N8). */
export function abortable<T>(what: string, signal: AbortSignal | undefined, cancel: () => void, work: Promise<T>): Promise<T> {
  if (!signal) {
    return work;
  }
  if (signal.aborted) {
    cancel();
    // `work` runs on; whatever it ends with is no longer anyone's business (and must not go unhandled).
    work.catch(() => undefined);
    return Promise.reject(new AbortError(what, { cause: signal.reason }));
  }
  return new Promise<T>((resolve, reject) => {
    const aborted = (): void => {
      cancel();
      reject(new AbortError(what, { cause: signal.reason }));
    };
    signal.addEventListener("abort", aborted, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", aborted);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", aborted);
        reject(error);
      },
    );
  });
}

/** Reads one checked answer; an end of stream before it is a `ConnectionError` and an output frame a
 * `ProtocolError` (only subscriptions carry them, SPEC F8). */
export async function readAnswer(connection: Channel, what: string): Promise<Response> {
  const frame = await connection.read();
  if (frame === null) {
    throw new ConnectionError(`the daemon closed the connection before answering the ${what}`, "closed");
  }
  if (frame.kind === "output") {
    throw new ProtocolError(`an output frame answered the ${what}; only subscriptions carry output`);
  }
  return checkResponse(frame.value, what);
}


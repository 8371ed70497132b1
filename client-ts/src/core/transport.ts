//! What the client needs of a connection to a daemon, apart from how it is made: the Node socket
//! (`node/connection.ts`) is one transport, the in-memory one of the unit tests (`memory.ts`) another, and a Bun
//! or Deno socket would be a third. Everything above it (requests, owner channels, subscriptions) sees only a
//! {@link Channel}.

import type { Frame, JsonObject } from "./frame.js";

/** One framed connection to a daemon. It exists from the moment it is started, before it is connected, so a
 * call cancelled at any point can destroy it. */
export interface Channel {
  /** Resolves once connected; rejects with `ConnectionError` when connecting fails or the channel is closed
   * first. */
  readonly ready: Promise<void>;
  /** Resolves when the channel has closed, whoever closed it. */
  readonly closed: Promise<void>;
  /** Whether anything was handed over for the daemon ({@link send} was called): from then on, the daemon may
   * have received a request (what `TimeoutError.sent` reports). */
  readonly sent: boolean;
  /** Sends one JSON object as a control frame. */
  send(value: JsonObject): Promise<void>;
  /** The next frame, or null when the daemon ended the stream cleanly between frames; rejects with
   * `ConnectionError` when the channel broke and `ProtocolError` when the daemon sent a malformed frame. */
  read(): Promise<Frame | null>;
  /** Ends this side (the daemon sees the client leave) and closes once the daemon ends too. */
  close(): void;
  /** Closes at once. */
  destroy(): void;
  /** Lets the runtime's event loop end while the channel is open. */
  unref(): void;
  /** Undoes {@link unref}. */
  ref(): void;
}

/** Starts a channel to the daemon listening at `socket` (the registration's) and returns it at once. */
export type Transport = (socket: string) => Channel;

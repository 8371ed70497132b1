/** One browser tab bridged to one daemon terminal: a subscription in, the tab's keys, size and takeover out. */

import { DaemonError } from "opencode-pty-client";

/** How many bytes the WebSocket may hold unsent before the session stops reading the subscription. Reading
 * stops, so the daemon holds the output (for the controller it pauses the child; an observer that stays this
 * far behind is disconnected by the daemon and the tab attaches again). */
export const MAX_UNSENT_BYTES = 4 * 1024 * 1024;

/** How long the session waits between looks at a full WebSocket's send buffer. */
const DRAIN_POLL_MS = 5;

/** The largest message a tab may send (a pasted text goes through `input` whole). */
export const MAX_TAB_MESSAGE_BYTES = 1024 * 1024;

/** How many times an attach is tried again when the terminal was resized between its snapshot and its
 * subscription (the checkpoint would then not match the replay's size). */
const ATTACH_ATTEMPTS = 3;

/** The WebSocket close code when a tab cannot attach at all (the page then stops trying). */
export const CANNOT_ATTACH = 4000;

/** The daemon's refusal of a second controller (SPEC D12), naming the one it has. */
const HAS_CONTROLLER = "terminal already has controller ";

/** Bridges `socket` (a `ws` WebSocket) to terminal `id` of `daemon` as attachment `tab`.
 *
 * To the tab it sends JSON text messages and binary messages, in this order on one socket:
 * - `{type:"screen", cols, rows, role, offset}`: reset the terminal to this size; the binary messages that
 *   follow are the snapshot's checkpoint, then the output from `offset` on, each byte once, and
 *   `{type:"restored"}` marks where the restored screen is complete (live output follows). A resize of the
 *   terminal sends the same: `screen`, the checkpoint the daemon took after it, `restored`.
 * - binary: output, contiguous with what came before.
 * - `{type:"title", title}` after `screen` when attaching, and when the terminal's title changes.
 * - `{type:"role", role, controller}` when the terminal's controller changes.
 * - `{type:"exited", exitCode}` when the process has exited (after its last output).
 * - `{type:"error", message}` when a request of the tab failed.
 * From the tab it takes `{type:"input", data}`, `{type:"resize", cols, rows}` and `{type:"takeover", cols,
 * rows}`. */
export class Session {
  /** @param {import("opencode-pty-client").Daemon} daemon
   * @param {number} id
   * @param {string} tab the attachment id: the same across reloads of one tab
   * @param {import("ws").WebSocket} socket
   * @param {{ cols: number, rows: number, observe: boolean }} wanted */
  constructor(daemon, id, tab, socket, wanted) {
    this.daemon = daemon;
    this.id = id;
    this.tab = tab;
    this.socket = socket;
    this.cols = wanted.cols;
    this.rows = wanted.rows;
    this.observe = wanted.observe;
    /** @type {import("opencode-pty-client").Subscription | null} */
    this.subscription = null;
    /** @type {"controller" | "observer"} */
    this.currentRole = "observer";
    this.closed = false;
    /** Requests of this tab, one at a time, in the order it sent them (each is its own connection). */
    this.queue = Promise.resolve();
    socket.on("message", (data, isBinary) => this.received(data, isBinary));
    socket.on("close", () => this.close());
    socket.on("error", () => this.close());
  }

  /** Attaches and forwards until the subscription or the socket ends. */
  async run() {
    try {
      await this.attach();
    } catch (error) {
      // Nothing to show (the terminal is gone, the daemon refuses): the page says why and does not retry.
      this.send({ type: "error", message: messageOf(error) });
      this.close(CANNOT_ATTACH);
      return;
    }
    try {
      await this.forward();
    } catch (error) {
      this.send({ type: "error", message: messageOf(error) });
    } finally {
      this.close();
    }
  }

  /** The snapshot, then a subscription from its `output_tail`: the checkpoint and the replay meet exactly. */
  async attach() {
    for (let attempt = 1; ; attempt += 1) {
      const snapshot = await this.daemon.snapshot(this.id);
      const subscription = await this.subscribe(snapshot.process.output_tail);
      if (this.closed) {
        subscription.close();
        return;
      }
      const before = snapshot.process.pty;
      const now = subscription.attached.process.pty;
      if (before && now && (before.cols !== now.cols || before.rows !== now.rows) && attempt < ATTACH_ATTEMPTS) {
        subscription.close();
        continue;
      }
      this.subscription = subscription;
      const size = now ?? before ?? { cols: this.cols, rows: this.rows };
      const role = subscription.attached.role;
      this.currentRole = role;
      this.send({ type: "screen", cols: size.cols, rows: size.rows, role, offset: snapshot.process.output_tail });
      this.send({ type: "title", title: subscription.attached.process.pty?.title ?? "" });
      this.sendBytes(snapshot.checkpoint);
      this.sendBytes(subscription.attached.replay);
      this.send({ type: "restored" });
      return;
    }
  }

  /** Subscribes as the controller unless the tab only observes or another tab has control; a reloaded tab
   * whose previous page is still subscribed takes control back from itself. */
  async subscribe(offset) {
    const params = { id: this.id, attachmentId: this.tab, offset };
    if (this.observe) {
      return this.daemon.subscribe({ ...params, role: "observer" });
    }
    try {
      return await this.daemon.subscribe({ ...params, role: "controller" });
    } catch (error) {
      if (!(error instanceof DaemonError) || !error.message.startsWith(HAS_CONTROLLER)) {
        throw error;
      }
      const holder = error.message.slice(HAS_CONTROLLER.length);
      if (holder === this.tab) {
        return this.daemon.subscribe({ ...params, role: "controller", takeover: true });
      }
      return this.daemon.subscribe({ ...params, role: "observer" });
    }
  }

  /** Sends the subscription's events to the tab, waiting while the socket holds too much. */
  async forward() {
    const subscription = this.subscription;
    if (!subscription) {
      return;
    }
    for await (const event of subscription) {
      if (this.closed) {
        break;
      }
      switch (event.type) {
        case "output":
          this.sendBytes(event.bytes);
          break;
        case "resized":
          this.send({ type: "screen", cols: event.cols, rows: event.rows, role: this.role(), offset: subscription.offset });
          this.sendBytes(event.checkpoint);
          this.send({ type: "restored" });
          break;
        case "controller_changed":
          this.currentRole = event.attachmentId === this.tab ? "controller" : "observer";
          this.send({ type: "role", role: this.currentRole, controller: event.attachmentId });
          break;
        case "title_changed":
          this.send({ type: "title", title: event.title });
          break;
        case "exited":
          this.send({ type: "exited", exitCode: event.exitCode });
          break;
        default:
          break;
      }
      await this.drained();
    }
  }

  /** This tab's role as the daemon last said (`attached`, then `controller_changed`). */
  role() {
    return this.currentRole;
  }

  /** Resolves once the socket holds less than `MAX_UNSENT_BYTES`, or is closed. */
  async drained() {
    while (!this.closed && this.socket.bufferedAmount > MAX_UNSENT_BYTES) {
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
  }

  /** A message from the tab. */
  received(data, isBinary) {
    if (isBinary || this.closed) {
      return;
    }
    let message;
    try {
      message = JSON.parse(data.toString("utf8"));
    } catch {
      this.send({ type: "error", message: "a message from the page is not JSON" });
      return;
    }
    const size = (cols, rows) => Number.isInteger(cols) && Number.isInteger(rows) && cols > 0 && rows > 0;
    const request = () => {
      const attachment = { id: this.id, attachmentId: this.tab, cols: this.cols, rows: this.rows };
      switch (message?.type) {
        case "input":
          if (typeof message.data !== "string") {
            throw new Error("input needs data, a string");
          }
          return this.daemon.input({ ...attachment, data: new TextEncoder().encode(message.data) });
        case "resize":
          if (!size(message.cols, message.rows)) {
            throw new Error("resize needs whole cols and rows above 0");
          }
          this.cols = message.cols;
          this.rows = message.rows;
          return this.role() === "controller" ? this.daemon.resize(this.id, this.tab, this.cols, this.rows) : undefined;
        case "takeover":
          if (size(message.cols, message.rows)) {
            this.cols = message.cols;
            this.rows = message.rows;
          }
          return this.daemon.control({ ...attachment, cols: this.cols, rows: this.rows });
        default:
          throw new Error(`unknown message type ${JSON.stringify(message?.type)}`);
      }
    };
    this.queue = this.queue
      .then(request)
      .catch((error) => this.send({ type: "error", message: messageOf(error) }));
  }

  send(message) {
    if (!this.closed && this.socket.readyState === this.socket.OPEN) {
      this.socket.send(JSON.stringify(message));
    }
  }

  sendBytes(bytes) {
    if (!this.closed && bytes.length > 0 && this.socket.readyState === this.socket.OPEN) {
      this.socket.send(bytes, { binary: true });
    }
  }

  /** Ends the subscription (the daemon keeps the terminal) and the socket, with `code` when given. */
  close(code) {
    if (this.closed) {
      return;
    }
    this.closed = true;
    this.subscription?.close();
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) {
      this.socket.close(code);
    }
  }
}

function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

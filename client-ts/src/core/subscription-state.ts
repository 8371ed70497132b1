//! What a subscription has seen (SPEC D11, N4): turns its frames into events, checks that output continues
//! exactly where the previous frame (or the `attached` replay) ended, and knows when the stream is over.

import type { Response } from "../generated/protocol.js";
import { DaemonError, ProtocolError } from "./errors.js";
import type { Frame } from "./frame.js";
import { bytesOf, checkResponse, exitedOf, type SubscriptionEvent } from "./messages.js";

/** The events a subscription may carry after `attached` (SPEC §5.3). */
const EVENT_TYPES: ReadonlySet<Response["type"]> = new Set([
  "resized",
  "controller_changed",
  "title_changed",
  "foreground_process_changed",
  "exited",
]);

/** The state of one subscription after `attached`. */
export class SubscriptionState {
  /** The offset the next output frame must start at. */
  private expected: number;
  /** Set once `exited` was seen: nothing may follow. */
  private done = false;

  constructor(endOffset: number) {
    this.expected = endOffset;
  }

  /** The offset just past the last byte delivered. */
  get offset(): number {
    return this.expected;
  }

  /** Whether `exited` was seen. */
  get exited(): boolean {
    return this.done;
  }

  /** Turns a frame into an event, or throws `ProtocolError` when it breaks the stream's rules. */
  accept(frame: Frame): SubscriptionEvent {
    if (this.done) {
      throw new ProtocolError("a frame arrived on a subscription after `exited`");
    }
    if (frame.kind === "output") {
      if (frame.start !== this.expected) {
        throw new ProtocolError(`output resumed at offset ${frame.start}, expected ${this.expected}`);
      }
      this.expected = frame.end;
      return { type: "output", start: frame.start, end: frame.end, bytes: frame.bytes };
    }
    const event = checkResponse(frame.value, "subscription");
    switch (event.type) {
      case "resized":
        return {
          type: "resized",
          cols: event.cols,
          rows: event.rows,
          generation: event.generation,
          checkpoint: bytesOf(event.checkpoint_base64, "resized.checkpoint_base64"),
        };
      case "controller_changed":
        return { type: "controller_changed", attachmentId: event.attachment_id, generation: event.generation };
      case "title_changed":
        return { type: "title_changed", title: event.title };
      case "foreground_process_changed":
        return { type: "foreground_process_changed", process: event.process };
      case "exited": {
        this.done = true;
        if (event.final_offset !== this.expected && event.output_lines === undefined) {
          // A PTY's final offset is where its output ended; a pipe process sends no output frames (SPEC Q7).
          throw new ProtocolError(`exited at offset ${event.final_offset}, but output reached ${this.expected}`);
        }
        return exitedOf(event);
      }
      default:
        if (event.type === "error") {
          // A pipe process whose exit can never be known ends its subscriptions this way (SPEC Q11).
          throw new DaemonError(event.message);
        }
        throw new ProtocolError(
          `a \`${event.type}\` arrived on a subscription; only ${[...EVENT_TYPES].join(", ")} may`,
        );
    }
  }
}

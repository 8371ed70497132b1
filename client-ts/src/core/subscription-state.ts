//! What a subscription has seen (SPEC D11, N4): turns its frames into events, checks that output continues
//! exactly where the previous frame (or the `attached` replay) ended, and knows when the stream is over.

import { EVENT_TYPES } from "../generated/protocol.js";
import { eventOf } from "../generated/views.js";
import { DaemonError, ProtocolError } from "./errors.js";
import type { Frame } from "./frame.js";
import { checkResponse, type SubscriptionEvent } from "./messages.js";

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

  /** Goes on at `offset` on a new connection (after an in-place upgrade): the next output frame starts there. */
  resumeAt(offset: number): void {
    this.expected = offset;
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
    const response = checkResponse(frame.value, "subscription");
    if (response.type === "error") {
      // A pipe process whose exit can never be known ends its subscriptions this way (SPEC Q11).
      throw new DaemonError(response.message);
    }
    // The events a subscription may carry after `attached` (SPEC §5.3) are the schema's (`x-event`).
    const event = eventOf(response);
    if (event === null) {
      throw new ProtocolError(`a \`${response.type}\` arrived on a subscription; only ${EVENT_TYPES.join(", ")} may`);
    }
    if (event.type === "exited") {
      this.done = true;
      if (event.finalOffset !== this.expected && event.outputLines === undefined) {
        // A PTY's final offset is where its output ended; a pipe process sends no output frames (SPEC Q7).
        throw new ProtocolError(`exited at offset ${event.finalOffset}, but output reached ${this.expected}`);
      }
    }
    return event;
  }
}

//! The typed one-shot requests of a `Daemon`: one method per op answered by a single response, each building
//! the generated request from camelCase parameters and returning what the caller needs of the answer the schema
//! says it gets (through {@link DaemonRequests.exchange}). `Daemon` extends this class; the requests that keep
//! their connection (`claim`, `subscribe`, `wait`) live there, with the exchanges themselves.

import { base64Encode } from "../core/bytes.js";
import { checkedReplay, type Replay, type RequestInput, type Rows, type Snapshot } from "../core/messages.js";
import type { AnswerTo, Mode, ProcessInfo, Signal } from "../generated/protocol.js";
import { commandsOf, rowsOf, snapshotOf, type Commands } from "../generated/views.js";
import {
  createPipeRequest,
  createPtyRequest,
  featuresMember,
  type AttachmentSize,
  type CallOptions,
  type CreatePipeParams,
  type CreatePtyParams,
  type InfoOptions,
} from "./options.js";

/** The one-shot requests, over whatever {@link exchange} sends them with. */
export abstract class DaemonRequests {
  /** Sends a request of this protocol on its own connection and returns the answer the schema says it gets
   * (`ANSWERS`). */
  abstract exchange<R extends RequestInput>(request: R, options?: CallOptions): Promise<AnswerTo<R["op"]>>;

  createPty(params: CreatePtyParams, options?: CallOptions): Promise<ProcessInfo> {
    return this.exchange(createPtyRequest(params), options).then((r) => r.process);
  }

  createPipe(params: CreatePipeParams, options?: CallOptions): Promise<ProcessInfo> {
    return this.exchange(createPipeRequest(params), options).then((r) => r.process);
  }

  /** The processes of one mode, in creation order (with the members of `options.features`). */
  list(mode: Mode, options?: InfoOptions): Promise<ProcessInfo[]> {
    return this.exchange({ op: "list", mode, ...featuresMember(options?.features) }, options).then((r) => r.processes);
  }

  /** One process (with the members of `options.features`: `["input"]` says what a terminal waits for). */
  get(id: number, options?: InfoOptions): Promise<ProcessInfo> {
    return this.exchange({ op: "get", id, ...featuresMember(options?.features) }, options).then((r) => r.process);
  }

  async signal(id: number, signal: Signal, options?: CallOptions): Promise<void> {
    await this.exchange({ op: "signal", id, signal }, options);
  }

  async setMetadata(id: number, metadata: Readonly<Record<string, unknown>>, options?: CallOptions): Promise<void> {
    await this.exchange({ op: "set_metadata", id, metadata: { ...metadata } }, options);
  }

  /** Sends bytes to a PTY as its controller (`attachmentId` null only while it has none). */
  async write(id: number, attachmentId: string | null, data: Uint8Array, options?: CallOptions): Promise<void> {
    await this.exchange({ op: "write", id, attachment_id: attachmentId, data_base64: base64Encode(data) }, options);
  }

  async resize(id: number, attachmentId: string | null, cols: number, rows: number, options?: CallOptions): Promise<void> {
    await this.exchange({ op: "resize", id, attachment_id: attachmentId, cols, rows }, options);
  }

  /** Makes a subscribed attachment the controller and resizes to its size when that differs. */
  async control(params: AttachmentSize, options?: CallOptions): Promise<void> {
    const { id, attachmentId, cols, rows } = params;
    await this.exchange({ op: "control", id, attachment_id: attachmentId, cols, rows }, options);
  }

  /** `control`, then the bytes, in one ordered step: what a keystroke from a user's terminal sends. */
  async input(params: AttachmentSize & { readonly data: Uint8Array }, options?: CallOptions): Promise<void> {
    const { id, attachmentId, cols, rows, data } = params;
    const request = { op: "input", id, attachment_id: attachmentId, cols, rows, data_base64: base64Encode(data) } as const;
    await this.exchange(request, options);
  }

  async snapshot(id: number, options?: InfoOptions): Promise<Snapshot> {
    return snapshotOf(await this.exchange({ op: "snapshot", id, ...featuresMember(options?.features) }, options));
  }

  /** The last `rows` physical rows (default: the terminal's height) as plain text (SPEC §4.3). */
  async readRows(id: number, rows?: number, options?: InfoOptions): Promise<Rows> {
    const features = featuresMember(options?.features);
    const request =
      rows === undefined ? { op: "read_rows" as const, id, ...features } : { op: "read_rows" as const, id, rows, ...features };
    return rowsOf(await this.exchange(request, options));
  }

  /** The last commands of a terminal started with `shellIntegration` (the newest `limit`, 1 to 256, or all it
   * keeps), oldest first, with the process info (SPEC §10); needs the daemon's `commands` feature. */
  async commands(id: number, limit?: number, options?: CallOptions): Promise<Commands> {
    const request = limit === undefined ? { op: "commands" as const, id } : { op: "commands" as const, id, limit };
    return commandsOf(await this.exchange(request, options));
  }

  /** Sets the user title, or clears it with null or "". */
  async rename(id: number, title: string | null, options?: CallOptions): Promise<void> {
    await this.exchange({ op: "rename", id, title }, options);
  }

  async replay(id: number, offset: number, options?: CallOptions): Promise<Replay> {
    return checkedReplay(await this.exchange({ op: "replay", id, offset }, options));
  }

  async terminate(id: number, options?: CallOptions): Promise<void> {
    await this.exchange({ op: "terminate", id }, options);
  }

  /** Stops the daemon and every process it runs (accepted from any connection, SPEC N5). */
  async shutdown(options?: CallOptions): Promise<void> {
    await this.exchange({ op: "shutdown" }, options);
  }
}

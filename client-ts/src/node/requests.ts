//! The typed one-shot requests of a `Daemon`: one method per op answered by a single response, each building
//! the generated request from camelCase parameters and returning what the caller needs of the answer the schema
//! says it gets (through {@link DaemonRequests.exchange}). `Daemon` extends this class; the requests that keep
//! their connection (`claim`, `subscribe`, `wait`) live there, with the exchanges themselves.

import { base64Encode } from "../core/bytes.js";
import { checkedReplay, type Replay, type RequestInput, type Rows, type Snapshot } from "../core/messages.js";
import type { AnswerTo, Mode, ProcessInfo, Signal } from "../generated/protocol.js";
import { commandsOf, rowsOf, snapshotOf, type Commands } from "../generated/views.js";
import { ProtocolError } from "../core/errors.js";
import {
  createPipeRequest,
  createPtyRequest,
  DEFAULT_LIST_PAGE,
  featuresMember,
  type AttachmentSize,
  type CallOptions,
  type CreatePipeParams,
  type CreatePtyParams,
  type InfoOptions,
  type ListAllOptions,
  type ListPage,
  type ListPageParams,
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

  /** The processes of one mode, in creation order (with the members of `options.features`), in one answer (see
   * `listAll` for them in pages). */
  list(mode: Mode, options?: InfoOptions): Promise<ProcessInfo[]> {
    return this.exchange({ op: "list", mode, ...featuresMember(options?.features) }, options).then((r) => r.processes);
  }

  /** One page of `list` (daemon feature `pages`, SPEC D17): the processes of `mode` whose id is greater than
   * `page.after` (from the first when left out), at most `page.limit`, and `next`, the `after` of the following
   * page, when more followed. A daemon without the feature ignores `after` and `limit` and answers every
   * process, without `next`. */
  async listPage(mode: Mode, page: ListPageParams, options?: InfoOptions): Promise<ListPage> {
    const after = page.after === undefined ? {} : { after: page.after };
    const request = { op: "list" as const, mode, ...after, limit: page.limit, ...featuresMember(options?.features) };
    const answer = await this.exchange(request, options);
    return answer.next === undefined ? { processes: answer.processes } : { processes: answer.processes, next: answer.next };
  }

  /** Every process of `mode` in creation order, fetched `options.pageSize` at a time (default
   * {@link DEFAULT_LIST_PAGE}) by following `next`, so no answer has to carry them all. Each process comes at most
   * once (pages follow ids, which only grow): one created meanwhile is there when its id is past the page being
   * fetched, one terminated meanwhile may be missing. Against a daemon without the feature `pages`, its one
   * answer holds every process. Each page is one call, bounded by the call's timeout. */
  async listAll(mode: Mode, options?: ListAllOptions): Promise<ProcessInfo[]> {
    const limit = options?.pageSize ?? DEFAULT_LIST_PAGE;
    const all: ProcessInfo[] = [];
    let after: number | undefined;
    for (;;) {
      const page = await this.listPage(mode, { after, limit }, options);
      all.push(...page.processes);
      if (page.next === undefined) return all;
      // A cursor that does not move on would ask for the same page for ever.
      if (after !== undefined && page.next <= after) {
        throw new ProtocolError(`list gave the page after ${page.next} again`);
      }
      after = page.next;
    }
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

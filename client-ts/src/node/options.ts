//! The options every call takes and the caller-facing parameter shapes of the requests (camelCase, bytes as
//! `Uint8Array`), with their conversion to the wire requests of the generated types.

import type { CreatePipeRequest, CreatePtyRequest, OptIn, ProcessInfo, Role } from "../generated/protocol.js";

/** How long a call waits by default (5 s): connecting, sending and reading its answer. `wait` and an open
 * subscription or owner channel are not bounded once their request is sent (SPEC N8). */
export const DEFAULT_TIMEOUT_MS = 5_000;

/** What every call accepts. */
export interface CallOptions {
  /** Aborting rejects the call with `AbortError` and closes its connection. */
  readonly signal?: AbortSignal | undefined;
  /** Overrides the daemon handle's timeout for this call, in milliseconds. */
  readonly timeoutMs?: number | undefined;
}

/** What `get`, `list`, `snapshot` and `readRows` accept: the call's options and the features whose members the
 * answer's `ProcessInfo` should carry (SPEC V7). `["input"]` adds `pty.input` (what the terminal waits for:
 * `"password"`, `"line"`, `"key"`, `"prompt"` or null) and `pty.alternate_screen`, looked at afresh;
 * `["commands"]` adds `pty.shell` to a terminal started with `shellIntegration` (`starting`, `prompt` or
 * `running`, the running command, the cwd). Check `daemon.features` first, since an older daemon ignores the
 * member. */
export interface InfoOptions extends CallOptions {
  readonly features?: readonly OptIn[] | undefined;
}

/** The page size of {@link DaemonRequests.listAll} when none is given (100 processes). */
export const DEFAULT_LIST_PAGE = 100;

/** What `listPage` asks for (daemon feature `pages`, SPEC D17). */
export interface ListPageParams {
  /** Only processes whose id is greater: the `next` of the page before. Left out: from the first process. */
  readonly after?: number | undefined;
  /** At most this many processes (at least 1). */
  readonly limit: number;
}

/** One page of `list`. */
export interface ListPage {
  /** The page's processes, in creation order. */
  readonly processes: ProcessInfo[];
  /** When more processes followed the page: the `after` of the next one (its last process's id). */
  readonly next?: number | undefined;
}

/** What `listAll` accepts: `InfoOptions` and the page size (default {@link DEFAULT_LIST_PAGE}). */
export interface ListAllOptions extends InfoOptions {
  readonly pageSize?: number | undefined;
}

/** `features` as a request member: left out when none, so the request is exactly protocol 8's. */
export function featuresMember(features: readonly OptIn[] | undefined): { features?: OptIn[] } {
  return features !== undefined && features.length > 0 ? { features: [...features] } : {};
}

/** What `run` and `waitCommand` accept. */
export interface CommandWaitOptions {
  /** Aborting rejects the call with `AbortError` and closes its connection; the command goes on. */
  readonly signal?: AbortSignal | undefined;
  /** How long the daemon waits for the command's end before it answers `command_running`: 0 to 86 400 000 ms
   * (`MAX_COMMAND_WAIT_MS`); left out, 30 s (`DEFAULT_COMMAND_WAIT_MS`). Not the call's timeout: connecting
   * and sending are bounded by the handle's timeout, and the answer is awaited this long plus that timeout. */
  readonly timeoutMs?: number | undefined;
}

/** `createPty` parameters. */
export interface CreatePtyParams {
  readonly program: string;
  readonly args?: readonly string[] | undefined;
  /** An absolute directory. */
  readonly cwd: string;
  /** Overlaid on the daemon's environment (SPEC D2). */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** An opaque grouping key (OpenCode: the session id); defaults to "". */
  readonly groupId?: string | undefined;
  /** Shown until a program sets a title; defaults to the program. */
  readonly title?: string | undefined;
  readonly cols: number;
  readonly rows: number;
  /** Start the shell (`bash`, `zsh` or `fish`) with the daemon's shell integration, so that `pty.shell` and
   * `commands` report its prompt and commands, and `run` types commands at its prompt (SPEC §10); needs the
   * daemon's `commands` feature. Left out: the
   * request does not carry it, and the program starts as asked. */
  readonly shellIntegration?: boolean | undefined;
  /** History lines the terminal's emulator keeps, 0 to 100000 (`MAX_SCROLLBACK_LINES`); left out, the daemon's
   * 10000. Needs the daemon's `bounds` feature. */
  readonly scrollbackLines?: number | undefined;
  /** Bytes of raw output kept for replay, 4096 to 67108864 (`MIN_REPLAY_BYTES`, `MAX_REPLAY_BYTES`); left out,
   * the daemon's 2 MiB. A subscription further behind than this when its connection breaks cannot resume
   * without a gap. Needs the daemon's `bounds` feature. */
  readonly replayBytes?: number | undefined;
}

/** `createPipe` parameters. */
export interface CreatePipeParams {
  readonly program: string;
  readonly args?: readonly string[] | undefined;
  readonly cwd: string;
  /** The child's whole environment: nothing is inherited (SPEC Q4). */
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly groupId?: string | undefined;
  /** An absolute path; the file is created or truncated. */
  readonly outputPath: string;
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
}

/** What a controller subscription does when the terminal already has a different controller (SPEC D12), as the
 * Rust client's `Takeover`: `"refuse"` leaves it in place and fails the subscription (`terminal already has
 * controller <id>`); `"take"` demotes it to an observer, which stays subscribed. An observer ignores it. */
export type Takeover = "refuse" | "take";

/** `subscribe` parameters. */
export interface SubscribeParams {
  readonly id: number;
  /** Where the replay starts: 0 for everything kept, a saved offset to resume. */
  readonly offset?: number | undefined;
  /** Names this attachment; reusing a subscribed name replaces that subscription. */
  readonly attachmentId: string;
  readonly role?: Role | undefined;
  /** For a controller: what to do about a different existing controller; defaults to `"refuse"`. The boolean of
   * earlier versions is deprecated but still accepted: `true` is `"take"`, `false` is `"refuse"`. */
  readonly takeover?: Takeover | boolean | undefined;
  /** Features whose events this subscription also carries (SPEC V7, I5, SH12): `["commands"]` adds
   * `command_started` and `command_finished` events (the latter without `text`), and `pty.shell` in
   * `attached`'s process; `["input"]` adds `input_changed` events, and `pty.input` / `pty.alternate_screen`.
   * Each event comes in order with the output around it. Left out: none. */
  readonly events?: readonly OptIn[] | undefined;
}

/** Parameters of the requests that act as an attachment with its terminal size (`control`, `input`). */
export interface AttachmentSize {
  readonly id: number;
  readonly attachmentId: string;
  readonly cols: number;
  readonly rows: number;
}

export function createPtyRequest(params: CreatePtyParams): CreatePtyRequest {
  const request: CreatePtyRequest = {
    op: "create_pty",
    program: params.program,
    args: [...(params.args ?? [])],
    cwd: params.cwd,
    env: { ...(params.env ?? {}) },
    group_id: params.groupId ?? "",
    title: params.title ?? params.program,
    cols: params.cols,
    rows: params.rows,
  };
  if (params.shellIntegration !== undefined) {
    request.shell_integration = params.shellIntegration;
  }
  if (params.scrollbackLines !== undefined) {
    request.scrollback_lines = params.scrollbackLines;
  }
  if (params.replayBytes !== undefined) {
    request.replay_bytes = params.replayBytes;
  }
  return request;
}

export function createPipeRequest(params: CreatePipeParams): CreatePipeRequest {
  const request: CreatePipeRequest = {
    op: "create_pipe",
    program: params.program,
    args: [...(params.args ?? [])],
    cwd: params.cwd,
    env: { ...(params.env ?? {}) },
    group_id: params.groupId ?? "",
    output_path: params.outputPath,
  };
  if (params.metadata !== undefined) {
    request.metadata = { ...params.metadata };
  }
  return request;
}

/** The wire's `takeover` flag for a {@link SubscribeParams.takeover}: only `"take"` (or the deprecated `true`)
 * sets it. */
export function takeoverFlag(takeover: Takeover | boolean | undefined): boolean {
  return takeover === "take" || takeover === true;
}

/** Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand. The caller-facing shapes of the responses marked `x-client-view`: camelCase, base64 members as bytes. */

import { bytesOf } from "../core/bytes.js";
import type { AttachedResponse, CommandFinishedResponse, CommandRunningResponse, CommandStartedResponse, CommandsResponse, ControllerChangedResponse, ExitedResponse, ForegroundProcessChangedResponse, InputChangedResponse, InputWait, ProcessInfo, ReplayResponse, ResizedResponse, Response, Role, RowsResponse, ShellCommand, SnapshotResponse, TitleChangedResponse } from "./protocol.js";

/** The answer to `snapshot`: the screen, its checkpoint and the cursor, captured in one step with the process info. */
export interface Snapshot {
  /** Decoded from `checkpoint_base64`: A VT checkpoint, standard base64 with padding: written into a fresh terminal of the same size, it rebuilds the screen, its modes and the cursor position. */
  readonly checkpoint: Uint8Array;
  /** The cursor column, zero-based. */
  readonly cursorX: number;
  /** The cursor row within the visible screen, zero-based. */
  readonly cursorY: number;
  /** The process info, captured in the same step as the screen. */
  readonly process: ProcessInfo;
  /** The plain text of the visible screen, one line per row, soft wraps not joined and trailing whitespace trimmed. */
  readonly text: string;
}

/** The caller's `Snapshot` from a checked `snapshot`. */
export function snapshotOf(response: SnapshotResponse): Snapshot {
  return {
    checkpoint: bytesOf(response.checkpoint_base64, "snapshot.checkpoint_base64"),
    cursorX: response.cursor_x,
    cursorY: response.cursor_y,
    process: response.process,
    text: response.text,
  };
}

/** The answer to `read_rows`: the rows and the cursor, captured in one step with the process info. */
export interface Rows {
  /** The cursor column, zero-based. */
  readonly cursorX: number;
  /** The cursor row within the active area (not the returned rows), zero-based. */
  readonly cursorY: number;
  /** One string per physical row, oldest first: soft wraps not joined, trailing whitespace trimmed, blank rows as empty strings. */
  readonly lines: string[];
  /** The process info, captured in the same step as the rows. */
  readonly process: ProcessInfo;
}

/** The caller's `Rows` from a checked `rows`. */
export function rowsOf(response: RowsResponse): Rows {
  return {
    cursorX: response.cursor_x,
    cursorY: response.cursor_y,
    lines: response.lines,
    process: response.process,
  };
}

/** The answer to `replay`: the kept output from the requested offset (or from the oldest kept byte) to the tail. */
export interface Replay {
  /** Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back. */
  readonly availableOffset: number;
  /** Decoded from `data_base64`: The bytes from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output. */
  readonly bytes: Uint8Array;
  /** The offset just past the returned bytes: the output tail when the replay was read. */
  readonly endOffset: number;
  /** The offset the request asked for. */
  readonly requestedOffset: number;
  /** True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost. */
  readonly truncated: boolean;
}

/** The caller's `Replay` from a checked `replay`. */
export function replayOf(response: ReplayResponse): Replay {
  return {
    availableOffset: response.available_offset,
    bytes: bytesOf(response.data_base64, "replay.data_base64"),
    endOffset: response.end_offset,
    requestedOffset: response.requested_offset,
    truncated: response.truncated,
  };
}

/** The first frame of a subscription: the process, the role obtained and the replay. Live output frames and events follow, starting at `end_offset`. */
export interface Attached {
  /** Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back. */
  readonly availableOffset: number;
  /** The offset just past the returned bytes: the output tail when the replay was read. */
  readonly endOffset: number;
  /** The controller generation after attaching: a counter that grows each time the terminal's controller changes. */
  readonly generation: number;
  /** The process info, captured in the same step as the replay. */
  readonly process: ProcessInfo;
  /** Decoded from `replay_base64`: The kept output from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output. */
  readonly replay: Uint8Array;
  /** The offset the request asked for. */
  readonly requestedOffset: number;
  /** The role this attachment has now. */
  readonly role: Role;
  /** True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost. */
  readonly truncated: boolean;
}

/** The caller's `Attached` from a checked `attached`. */
export function attachedOf(response: AttachedResponse): Attached {
  return {
    availableOffset: response.available_offset,
    endOffset: response.end_offset,
    generation: response.generation,
    process: response.process,
    replay: bytesOf(response.replay_base64, "attached.replay_base64"),
    requestedOffset: response.requested_offset,
    role: response.role,
    truncated: response.truncated,
  };
}

/** Subscription event: the terminal was resized. Later output is laid out for the new size. */
export interface Resized {
  /** Tag: `resized`. */
  readonly type: "resized";
  /** Decoded from `checkpoint_base64`: A VT checkpoint of the screen just after the resize, standard base64 with padding; a client resets its terminal to the new size and writes it before any later output. */
  readonly checkpoint: Uint8Array;
  /** The new width in columns. */
  readonly cols: number;
  /** The controller generation when the resize happened (not a count of resizes). */
  readonly generation: number;
  /** The new height in rows. */
  readonly rows: number;
}

/** The caller's `Resized` from a checked `resized`. */
export function resizedOf(response: ResizedResponse): Resized {
  return {
    type: "resized",
    checkpoint: bytesOf(response.checkpoint_base64, "resized.checkpoint_base64"),
    cols: response.cols,
    generation: response.generation,
    rows: response.rows,
  };
}

/** Subscription event: the terminal's controller changed (through takeover, promotion by `control` or `input`, or a detach). Sent to every subscriber, the new controller included. */
export interface ControllerChanged {
  /** Tag: `controller_changed`. */
  readonly type: "controller_changed";
  /** The attachment that controls the terminal now, or null when none does. */
  readonly attachmentId: string | null;
  /** The controller generation after the change. */
  readonly generation: number;
}

/** The caller's `ControllerChanged` from a checked `controller_changed`. */
export function controllerChangedOf(response: ControllerChangedResponse): ControllerChanged {
  return {
    type: "controller_changed",
    attachmentId: response.attachment_id,
    generation: response.generation,
  };
}

/** Subscription event: the effective title changed, through `rename` or an OSC 0/2 sequence not hidden by a user title. */
export interface TitleChanged {
  /** Tag: `title_changed`. */
  readonly type: "title_changed";
  /** The new effective title, at most 256 characters (`MAX_TITLE_CHARS`). */
  readonly title: string;
}

/** The caller's `TitleChanged` from a checked `title_changed`. */
export function titleChangedOf(response: TitleChangedResponse): TitleChanged {
  return {
    type: "title_changed",
    title: response.title,
  };
}

/** Subscription event: the process in the terminal's foreground changed. */
export interface ForegroundProcessChanged {
  /** Tag: `foreground_process_changed`. */
  readonly type: "foreground_process_changed";
  /** The name of the deepest terminal-attached process in the foreground process group, or null when it is not known. */
  readonly process: string | null;
}

/** The caller's `ForegroundProcessChanged` from a checked `foreground_process_changed`. */
export function foregroundProcessChangedOf(response: ForegroundProcessChangedResponse): ForegroundProcessChanged {
  return {
    type: "foreground_process_changed",
    process: response.process,
  };
}

/** Subscription event, sent only to a subscriber that asked for it (`subscribe` with `events: ["input"]`): what the terminal waits for changed (SPEC I5). */
export interface InputChanged {
  /** Tag: `input_changed`. */
  readonly type: "input_changed";
  /** What the terminal waits for now (as `pty.input`), or null when no process of its foreground group is waiting for input from it. */
  readonly input: InputWait | null;
}

/** The caller's `InputChanged` from a checked `input_changed`. */
export function inputChangedOf(response: InputChangedResponse): InputChanged {
  return {
    type: "input_changed",
    input: response.input,
  };
}

/** The process exited and the end of its output was read. The last event of a subscription, and the one answer to `wait`. */
export interface Exited {
  /** Tag: `exited`. */
  readonly type: "exited";
  /** The exit status, or null when a signal killed the process. */
  readonly exitCode: number | null;
  /** When the exit became final, as milliseconds since the Unix epoch; the same value as `exited_at` in the process info from then on. */
  readonly exitedAt: number;
  /** The output tail at exit: the offset just past the last byte the process wrote. */
  readonly finalOffset: number;
  /** Pipe processes only: why writing the output file stopped; left out when it never did. */
  readonly outputError?: string;
  /** Pipe processes only: how many newline bytes went to the output file; left out for PTYs. */
  readonly outputLines?: number;
  /** The name of the signal that killed the process, such as `SIGTERM`; left out when no signal did. */
  readonly signal?: string;
}

/** The caller's `Exited` from a checked `exited`. */
export function exitedOf(response: ExitedResponse): Exited {
  return {
    type: "exited",
    exitCode: response.exit_code,
    exitedAt: response.exited_at,
    finalOffset: response.final_offset,
    ...(response.output_error === undefined ? {} : { outputError: response.output_error }),
    ...(response.output_lines === undefined ? {} : { outputLines: response.output_lines }),
    ...(response.signal === undefined ? {} : { signal: response.signal }),
  };
}

/** The answer to `commands`: the terminal's last commands (at most 256, `MAX_COMMANDS`), oldest first, captured in one step with the process info. */
export interface Commands {
  /** The commands, oldest first; the running one, if any, last. */
  readonly commands: ShellCommand[];
  /** The process info, captured in the same step as the commands. */
  readonly process: ProcessInfo;
}

/** The caller's `Commands` from a checked `commands`. */
export function commandsOf(response: CommandsResponse): Commands {
  return {
    commands: response.commands,
    process: response.process,
  };
}

/** Subscription event, sent only to a subscriber that asked for it (`subscribe` with `events: ["commands"]`): a command of a terminal with shell integration started, after the output before its first byte (SPEC SH12). */
export interface CommandStarted {
  /** Tag: `command_started`. */
  readonly type: "command_started";
  /** The command line as in `commands` (at most 4096 bytes, `MAX_COMMAND_LINE_BYTES`). */
  readonly command: string;
  /** The command (as in `commands`). */
  readonly commandId: number;
  /** The shell's working directory, as in `commands`. */
  readonly cwd: string | null;
  /** The output offset of its first byte of output. */
  readonly outputStart: number;
}

/** The caller's `CommandStarted` from a checked `command_started`. */
export function commandStartedOf(response: CommandStartedResponse): CommandStarted {
  return {
    type: "command_started",
    command: response.command,
    commandId: response.command_id,
    cwd: response.cwd,
    outputStart: response.output_start,
  };
}

/** A command of a terminal with shell integration ended. The answer to `run` and `wait_command`, with the command's text; also a subscription event (without `text` and `truncated`), sent only to a subscriber that asked for it (`subscribe` with `events: ["commands"]`), after the command's last byte of output and before the next (SPEC SH11, SH12). */
export interface CommandFinished {
  /** Tag: `command_finished`. */
  readonly type: "command_finished";
  /** The command. */
  readonly commandId: number;
  /** Its exit status as the shell reported it, or null when it ended without one (the next prompt came without an end mark). */
  readonly exitCode: number | null;
  /** The output offset just past its last byte of output: `replay` from `output_start` has its exact bytes while they are kept. */
  readonly outputEnd: number;
  /** The output offset of its first byte of output (as in `commands`). */
  readonly outputStart: number;
  /** Answers only: the output as plain text rows joined by newlines (as `read_rows` formats rows, at the terminal's size when the command started; trailing blank rows left out), at most about 1 MiB (`MAX_ROWS_BYTES`): the first and the last rows, with a marker row where rows were left out. */
  readonly text?: string;
  /** Answers only: whether rows were left out of `text` (a marker row says where and how many). */
  readonly truncated?: boolean;
}

/** The caller's `CommandFinished` from a checked `command_finished`. */
export function commandFinishedOf(response: CommandFinishedResponse): CommandFinished {
  return {
    type: "command_finished",
    commandId: response.command_id,
    exitCode: response.exit_code,
    outputEnd: response.output_end,
    outputStart: response.output_start,
    ...(response.text === undefined ? {} : { text: response.text }),
    ...(response.truncated === undefined ? {} : { truncated: response.truncated }),
  };
}

/** The answer to `run` or `wait_command` whose `timeout_ms` passed before the command ended: it goes on running, and `wait_command` with this `command_id` waits again (SPEC SH11). */
export interface CommandRunning {
  /** Tag: `command_running`. */
  readonly type: "command_running";
  /** The command: for a `run` whose command the shell has not started yet, the number it will get. */
  readonly commandId: number;
  /** The output offset of its first byte of output, or null when the shell has not started it yet. */
  readonly outputStart: number | null;
}

/** The caller's `CommandRunning` from a checked `command_running`. */
export function commandRunningOf(response: CommandRunningResponse): CommandRunning {
  return {
    type: "command_running",
    commandId: response.command_id,
    outputStart: response.output_start,
  };
}

/** A subscription event other than output, as the caller sees it (`x-event`). */
export type EventView = Resized | ControllerChanged | TitleChanged | ForegroundProcessChanged | InputChanged | Exited | CommandStarted | CommandFinished;

/** The caller's view of a subscription event, or null when `response` is not one. */
export function eventOf(response: Response): EventView | null {
  switch (response.type) {
    case "resized":
      return resizedOf(response);
    case "controller_changed":
      return controllerChangedOf(response);
    case "title_changed":
      return titleChangedOf(response);
    case "foreground_process_changed":
      return foregroundProcessChangedOf(response);
    case "input_changed":
      return inputChangedOf(response);
    case "exited":
      return exitedOf(response);
    case "command_started":
      return commandStartedOf(response);
    case "command_finished":
      return commandFinishedOf(response);
    default:
      return null;
  }
}

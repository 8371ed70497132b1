/** Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand. Change the schema and regenerate; `codegen/tests/drift.rs` fails while this file is stale. */

/** What a client sends: one request with the daemon's credential. Control frames are UTF-8 JSON objects, each preceded by its length as a four-byte big-endian integer. */
export interface Envelope {
  /** The request itself. */
  request: Request;
  /** The random credential from the daemon's registration; a request with a wrong token is refused. */
  token: string;
}

/** What a terminal waits for (SPEC I2): `prompt` (shell integration says the shell waits for a command), `password` (a process of the foreground group is blocked reading the terminal, which is in canonical mode with echo off), `line` (reading it in canonical mode with echo on), `key` (reading it with canonical mode off: a pager, a menu, an editor, a line editor). */
export type InputWait = "prompt" | "password" | "line" | "key";

/** Where a process is in its life, tagged by `status`. */
export type Lifecycle = LifecycleRunning | LifecycleExited | LifecycleFailed;

/** The process is running (or has exited but the end of its output is not known yet). */
export interface LifecycleRunning {
  /** Tag: running. */
  status: "running";
}

/** The process exited and all of its output was read. */
export interface LifecycleExited {
  /** The exit status, or null when a signal killed the process. */
  exit_code: number | null;
  /** The name of the signal that killed the process, such as `SIGTERM`; left out when none did. */
  signal?: string;
  /** Tag: exited. */
  status: "exited";
}

/** The daemon lost track of the process: reading its output, writing its input or waiting for it failed before its exit was published. */
export interface LifecycleFailed {
  /** What failed, for people. */
  message: string;
  /** Tag: failed. */
  status: "failed";
}

/** What kind of process: `pty` runs in a pseudo-terminal whose screen the daemon keeps; `pipe` runs without a terminal and its output goes to a file. */
export type Mode = "pty" | "pipe";

/** An additive feature a request opts into (SPEC V7): only a request that names it gets the members and events the feature adds. `commands`: `shell` in `pty` of every `ProcessInfo` of the answer (and of `attached`) for a terminal with shell integration, and on a subscription the `command_started` and `command_finished` events. `input`: `input` and `alternate_screen` in `pty`, and on a subscription the `input_changed` events. */
export type OptIn = "commands" | "input";

/** A chunk of live output on a subscription. On the wire this is not JSON but a binary frame: the payload is the tag byte 0x00, then `start` and `end` as unsigned 64-bit big-endian integers, then exactly `end - start` raw bytes (the payload is 17 + n bytes long). Readers tell it from a JSON frame by that first byte. The JSON shape here is only how clients represent the frame in memory. */
export interface OutputFrame {
  /** The raw bytes, standard base64 with padding (on the wire they follow the header unencoded). */
  data_base64: string;
  /** The offset just past the last byte of the chunk; `end - start` is the number of bytes. */
  end: number;
  /** The offset of the first byte of the chunk. */
  start: number;
  /** Tag: `output`. */
  type: "output";
}

/** The pipe part of a pipe process. */
export interface PipeInfo {
  /** The metadata given at creation or by the latest `set_metadata`. */
  metadata: Record<string, unknown>;
  /** Why writing the output file stopped; left out while writing works. */
  output_error?: string;
  /** How many newline bytes were written to the output file, counted in the same step that advances `output_tail`. */
  output_lines: number;
  /** The absolute path of the file that receives the process's stdout and stderr. */
  output_path: string;
}

/** Everything the daemon says about one process. Exactly one of `pty` and `pipe` is present, matching `mode`. */
export type ProcessInfo = ProcessInfoPty | ProcessInfoPipe;

/** `ProcessInfo` when `mode` is `pty`. */
export interface ProcessInfoPty {
  /** The program followed by its arguments. */
  command: string[];
  /** The absolute working directory the child started in. */
  cwd: string;
  /** When the exit became final (when `exited` was sent), as milliseconds since the Unix epoch; null until then, and never before `started_at`. */
  exited_at: number | null;
  /** An opaque grouping key chosen by the client (OpenCode uses the session id). */
  group_id: string;
  /** The process id. */
  id: number;
  /** Running, exited or failed. */
  lifecycle: Lifecycle;
  /** Whether this is a PTY or a pipe process; says which of `pty` and `pipe` is present. */
  mode: "pty";
  /** The oldest output offset still available for replay (equals `output_tail` for pipe processes, which keep no replay). */
  output_head: number;
  /** The offset just past the last output byte read from the process. */
  output_tail: number;
  /** The child's process id, or null when it is not known. */
  pid: number | null;
  /** The output file state; present exactly when `mode` is `pipe`. */
  pipe?: never;
  /** The terminal state; present exactly when `mode` is `pty`. */
  pty: PtyInfo;
  /** When the process was started. */
  started_at: number;
}

/** `ProcessInfo` when `mode` is `pipe`. */
export interface ProcessInfoPipe {
  /** The program followed by its arguments. */
  command: string[];
  /** The absolute working directory the child started in. */
  cwd: string;
  /** When the exit became final (when `exited` was sent), as milliseconds since the Unix epoch; null until then, and never before `started_at`. */
  exited_at: number | null;
  /** An opaque grouping key chosen by the client (OpenCode uses the session id). */
  group_id: string;
  /** The process id. */
  id: number;
  /** Running, exited or failed. */
  lifecycle: Lifecycle;
  /** Whether this is a PTY or a pipe process; says which of `pty` and `pipe` is present. */
  mode: "pipe";
  /** The oldest output offset still available for replay (equals `output_tail` for pipe processes, which keep no replay). */
  output_head: number;
  /** The offset just past the last output byte read from the process. */
  output_tail: number;
  /** The child's process id, or null when it is not known. */
  pid: number | null;
  /** The output file state; present exactly when `mode` is `pipe`. */
  pipe: PipeInfo;
  /** The terminal state; present exactly when `mode` is `pty`. */
  pty?: never;
  /** When the process was started. */
  started_at: number;
}

/** The terminal part of a PTY process. */
export interface PtyInfo {
  /** Whether the alternate screen is active (a full-screen program such as `vi`, `less` or `top` shows it). Present exactly when the request opted into `input` (SPEC I3). */
  alternate_screen?: boolean;
  /** Columns. */
  cols: number;
  /** The name of the deepest process attached to the terminal in its foreground process group, or null when unknown. */
  foreground_process: string | null;
  /** What the terminal waits for, or null when no process of its foreground group is blocked waiting for input from it (running, sleeping, waiting on the network or on a file). Present exactly when the request opted into `input` (SPEC I1, I2). */
  input?: InputWait | null;
  /** Rows. */
  rows: number;
  /** What the shell says about itself: present exactly when the request opted into `commands` and the terminal was started with `shell_integration` (SPEC §10, V7), left out otherwise. */
  shell?: ShellState;
  /** The effective title: the user title, else the latest non-empty OSC 0/2 title, else the title given at creation. At most 256 characters (`MAX_TITLE_CHARS`): longer program titles are cut. */
  title: string;
  /** The title set by `rename`, or null when none is set. At most 256 characters. */
  user_title: string | null;
}

/** The registration file the daemon writes atomically, with private permissions, in its runtime directory: how clients find, check and authenticate to it. */
export interface Registration {
  /** Names of the additive capabilities the daemon has beyond its protocol version; empty for plain protocol 8. */
  features: string[];
  /** A random id for this daemon instance, 32 lowercase hex characters; `own` must name it. */
  instance_id: string;
  /** The daemon's process id. */
  pid: number;
  /** The protocol version the daemon speaks: 8 for this schema. Clients refuse any other value. */
  protocol: number;
  /** Where the daemon listens: the absolute path of its Unix socket (on Windows, the name of its named pipe). */
  socket: string;
  /** The random credential every request envelope must carry, 32 lowercase hex characters. */
  token: string;
}

/** A request, tagged by `op`. */
export type Request = PingRequest | OwnRequest | PrepareHandoffRequest | CreatePtyRequest | CreatePipeRequest | ListRequest | GetRequest | WaitRequest | SignalRequest | SetMetadataRequest | WriteRequest | ResizeRequest | ControlRequest | InputRequest | SnapshotRequest | ReadRowsRequest | RenameRequest | ReplayRequest | SubscribeRequest | TerminateRequest | ShutdownRequest | CommandsRequest | RunRequest | WaitCommandRequest | UpgradeRequest;

/** Checks that the daemon answers and asks who it is. Answered with `pong`. */
export interface PingRequest {
  /** Tag: `ping`. */
  op: "ping";
}

/** Claims ownership of the daemon. Without a ticket it claims a daemon that has had no owner since it started; with a handoff ticket it takes over from the previous owner, even one still connected. Answered with `owned`, after which this connection is the owner channel. */
export interface OwnRequest {
  /** The instance id read from the registration; a claim naming a different instance is refused. */
  instance_id: string;
  /** Tag: `own`. */
  op: "own";
  /** The ticket from an earlier `handoff`, when taking over from a previous owner; omitted or null for the first claim after startup. */
  ticket?: string | null;
}

/** Owner channel only: prepares a handoff so that a replacement server can claim this daemon with `own` before the deadline. Answered with `handoff`; asking again returns the same ticket and deadline. */
export interface PrepareHandoffRequest {
  /** Tag: `prepare_handoff`. */
  op: "prepare_handoff";
}

/** Starts a program in a new pseudo-terminal whose screen the daemon keeps. Answered with `created`. */
export interface CreatePtyRequest {
  /** The arguments after the program name, in order: at most 4096 (`MAX_ARGS`), each at most 131072 characters (`MAX_ARG_CHARS`), and with the program at most 262144 bytes as the JSON array `command` (`MAX_COMMAND_BYTES`, checked by the daemon). */
  args: string[];
  /** The terminal width in columns. */
  cols: number;
  /** The absolute directory the child starts in. At most 4096 characters (`MAX_PATH_CHARS`). */
  cwd: string;
  /** Environment variables for the child. */
  env: Record<string, string>;
  /** An opaque grouping key chosen by the client, reported back as `group_id`. At most 256 characters (`MAX_GROUP_ID_CHARS`). */
  group_id: string;
  /** Tag: `create_pty`. */
  op: "create_pty";
  /** The program to start. At most 4096 characters (`MAX_PATH_CHARS`). */
  program: string;
  /** How many bytes of the terminal's newest raw output the daemon keeps for replay (a `subscribe` or `replay` from an older offset, a subscription resumed after an upgrade): 4096 (`MIN_REPLAY_BYTES`) to 67108864 (64 MiB, `MAX_REPLAY_BYTES`); omitted or null: 2097152 (2 MiB, `DEFAULT_REPLAY_BYTES`). A subscriber further behind than this when its connection breaks cannot resume without a gap. Only a daemon whose `features` include `bounds` knows it. */
  replay_bytes?: number | null;
  /** The terminal height in rows. */
  rows: number;
  /** How many lines of history the terminal's emulator keeps above its screen: 0 to 100000 (`MAX_SCROLLBACK_LINES`); omitted or null: 10000 (`DEFAULT_SCROLLBACK_LINES`). The emulator enforces it a page of rows at a time, so a few more lines may stay. Fewer lines cost less memory: a client that shows little history pays little. Only a daemon whose `features` include `bounds` knows it. */
  scrollback_lines?: number | null;
  /** Starts the program, which must be `bash`, `zsh` or `fish` (by its file name), with the daemon's shell integration, so that the terminal's `pty.shell` and the `commands` request report the shell's prompt, its commands, their output offsets and exit codes (SPEC §10). Left out or false: the program starts exactly as asked. Only a daemon whose `features` include `commands` knows it. */
  shell_integration?: boolean;
  /** The title to show until a program sets one with OSC 0/2 or a user title is set with `rename`. At most 256 characters (`MAX_TITLE_CHARS`). */
  title: string;
}

/** Starts a program without a terminal (Unix only): stdin reads /dev/null, and stdout and stderr share one pipe whose bytes the daemon writes to `output_path`. Answered with `created`. */
export interface CreatePipeRequest {
  /** The arguments after the program name, in order: at most 4096 (`MAX_ARGS`), each at most 131072 characters (`MAX_ARG_CHARS`), and with the program at most 262144 bytes as the JSON array `command` (`MAX_COMMAND_BYTES`, checked by the daemon). */
  args: string[];
  /** The absolute directory the child starts in. At most 4096 characters (`MAX_PATH_CHARS`). */
  cwd: string;
  /** The child's whole environment: nothing is inherited from the daemon and no terminal variables are added. */
  env: Record<string, string>;
  /** An opaque grouping key chosen by the client, reported back as `group_id`. At most 256 characters (`MAX_GROUP_ID_CHARS`). */
  group_id: string;
  /** An opaque JSON object to keep with the process and report as `pipe.metadata`; left out, the process starts with an empty object. */
  metadata?: Record<string, unknown>;
  /** Tag: `create_pipe`. */
  op: "create_pipe";
  /** The absolute path of the file that receives the output. It is truncated, or created, before the child starts; a symlink as its last component is refused. At most 4096 characters (`MAX_PATH_CHARS`). */
  output_path: string;
  /** The program to start. At most 4096 characters (`MAX_PATH_CHARS`). */
  program: string;
}

/** Lists the processes of one mode in creation order, refreshing each PTY's foreground process first, all of them or one page (`after`, `limit`; feature `pages`). Answered with `processes`. */
export interface ListRequest {
  /** Paged listing (feature `pages`, SPEC D17): only processes whose id is greater than this one, the `next` of the page before. Left out: from the first process. With `after` or `limit`, the answer is one page and says whether more follow (`next`). */
  after?: number;
  /** The features whose members each `ProcessInfo` of the answer carries (SPEC V7; `input`: what each terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`). */
  features?: OptIn[];
  /** Paged listing (feature `pages`, SPEC D17): at most this many processes in the answer (at least 1). Left out: every process after `after`. */
  limit?: number;
  /** Which kind of process to list. */
  mode: Mode;
  /** Tag: `list`. */
  op: "list";
}

/** Describes one process of either mode, refreshing a PTY's foreground process first. Answered with `process`, or with `error` when the id is unknown. */
export interface GetRequest {
  /** The features whose members the answer's `ProcessInfo` carries (SPEC V7; `input`: what the terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`). */
  features?: OptIn[];
  /** The process to describe. */
  id: number;
  /** Tag: `get`. */
  op: "get";
}

/** Pipe processes only: keeps the connection open until the process has exited, then answers with one `exited` and closes. A process that already exited is answered at once; one removed by `terminate` first is answered with `error` `terminated`. */
export interface WaitRequest {
  /** The pipe process to wait for. */
  id: number;
  /** Tag: `wait`. */
  op: "wait";
}

/** Pipe processes only: sends a signal to the process group and to the child, which stays listed (unlike `terminate`). Answered with `ok`. */
export interface SignalRequest {
  /** The pipe process to signal. */
  id: number;
  /** Tag: `signal`. */
  op: "signal";
  /** Which signal to send. */
  signal: Signal;
}

/** Pipe processes only: replaces the metadata kept with the process. Answered with `ok`. */
export interface SetMetadataRequest {
  /** The pipe process whose metadata is replaced. */
  id: number;
  /** The new metadata; the previous object is dropped, not merged. */
  metadata: Record<string, unknown>;
  /** Tag: `set_metadata`. */
  op: "set_metadata";
}

/** PTY only: sends bytes to the terminal's input. Answered with `ok`. */
export interface WriteRequest {
  /** The writing attachment, which must be the terminal's controller; null is accepted only while the terminal has no controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`). */
  attachment_id: string | null;
  /** The bytes to send, standard base64 with padding. */
  data_base64: string;
  /** The PTY to write to. */
  id: number;
  /** Tag: `write`. */
  op: "write";
}

/** PTY only: resizes the terminal and its screen in one ordered step and always publishes `resized` with a checkpoint, even when the size does not change. Answered with `ok`. */
export interface ResizeRequest {
  /** The resizing attachment, which must be the terminal's controller; null is accepted only while the terminal has no controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`). */
  attachment_id: string | null;
  /** The new width in columns. */
  cols: number;
  /** The PTY to resize. */
  id: number;
  /** Tag: `resize`. */
  op: "resize";
  /** The new height in rows. */
  rows: number;
}

/** PTY only: in one ordered step, makes a subscribed attachment the controller if it is not already (then demoting the previous one and publishing `controller_changed`) and resizes the terminal to its size when that differs. Answered with `ok`. */
export interface ControlRequest {
  /** The attachment to promote; it must have an open subscription to this terminal, or be its controller already (as a controller is after an in-place upgrade until it subscribes again). At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`). */
  attachment_id: string;
  /** The attachment's width in columns; the terminal is resized only when this or `rows` differs from its size. */
  cols: number;
  /** The PTY to take control of. */
  id: number;
  /** Tag: `control`. */
  op: "control";
  /** The attachment's height in rows. */
  rows: number;
}

/** PTY only: does what `control` does, then sends the bytes, all in one ordered step, so a size report caused by the resize reaches the child before the input. Answered with `ok`. */
export interface InputRequest {
  /** The attachment that is typing; it must have an open subscription to this terminal, or be its controller already (as a controller is after an in-place upgrade until it subscribes again), and becomes the controller. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`). */
  attachment_id: string;
  /** The attachment's width in columns; the terminal is resized only when this or `rows` differs from its size. */
  cols: number;
  /** The bytes to send after any promotion and resize, standard base64 with padding; may be empty. */
  data_base64: string;
  /** The PTY to type into. */
  id: number;
  /** Tag: `input`. */
  op: "input";
  /** The attachment's height in rows. */
  rows: number;
}

/** PTY only: captures the visible screen as text, a VT checkpoint and the cursor in one step. Answered with `snapshot`. */
export interface SnapshotRequest {
  /** The features whose members the answer's `process` carries (SPEC V7; `input`: what the terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`). */
  features?: OptIn[];
  /** The PTY to capture. */
  id: number;
  /** Tag: `snapshot`. */
  op: "snapshot";
}

/** Reads the last physical rows of a PTY's active screen, history included, as plain text. Answered with `rows`. */
export interface ReadRowsRequest {
  /** The features whose members the answer's `process` carries (SPEC V7; `input`: what the terminal waits for, looked at afresh). Left out or empty: none, and the answer is what protocol 8 without features sends. At most 8 entries (`MAX_OPT_IN_ITEMS`). */
  features?: OptIn[];
  /** The PTY process to read. */
  id: number;
  /** Tag: `read_rows`. */
  op: "read_rows";
  /** How many rows to read (1 to 65535); omitted or null reads the terminal's current height. */
  rows?: number | null;
}

/** PTY only: sets or clears the user title, which wins over titles set by programs. `title_changed` is published only if the effective title changes. Answered with `ok`. */
export interface RenameRequest {
  /** The PTY to rename. */
  id: number;
  /** Tag: `rename`. */
  op: "rename";
  /** The new user title; null or an empty string clears it, so the latest program title or the creation title shows again. At most 256 characters (`MAX_TITLE_CHARS`). */
  title: string | null;
}

/** Reads the kept raw output from an offset onwards. Answered with `replay`; a pipe process keeps no output, so its answer has the right offsets and no bytes. */
export interface ReplayRequest {
  /** The process whose output is read. */
  id: number;
  /** The first offset wanted; an offset past the current output tail is an error. */
  offset: number;
  /** Tag: `replay`. */
  op: "replay";
}

/** Attaches to a process and keeps the connection open: answered with `attached` (carrying the replay from `offset`), then live output frames and events (`resized`, `controller_changed`, `title_changed`, `foreground_process_changed`, `exited`) until the process exits or the connection closes. */
export interface SubscribeRequest {
  /** A name for this attachment, chosen by the client; reusing a subscribed name replaces that subscription. At most 256 characters (`MAX_ATTACHMENT_ID_CHARS`). */
  attachment_id: string;
  /** The features whose events this subscription also carries, each in order with the output around it (SPEC I5; `input`: `input_changed`), and whose members `attached`'s `process` carries. Left out or empty: none, exactly the events of protocol 8 without features. At most 8 entries (`MAX_OPT_IN_ITEMS`); a pipe process has none of these events. */
  events?: OptIn[];
  /** The process to attach to. */
  id: number;
  /** Where the replay starts; an offset past the current output tail is an error. */
  offset: number;
  /** Tag: `subscribe`. */
  op: "subscribe";
  /** The role to attach with. */
  role: Role;
  /** For the controller role: whether to demote a different existing controller (which stays subscribed as an observer); when false, such a conflict fails the request. */
  takeover: boolean;
}

/** Stops a process and forgets it: a PTY's runtime is shut down; a pipe process's group and child get SIGKILL and the child is reaped. Pending `wait`s get `error` `terminated`. Answered with `ok`. */
export interface TerminateRequest {
  /** The process to stop and remove. */
  id: number;
  /** Tag: `terminate`. */
  op: "terminate";
}

/** Stops the daemon and every process it runs. Accepted from the current owner channel and from any authenticated ordinary connection. Answered with `ok`, then the daemon stops. */
export interface ShutdownRequest {
  /** Tag: `shutdown`. */
  op: "shutdown";
}

/** Lists the last commands of a terminal started with `shell_integration`, newest last. Answered with `commands`, or with `error` for a pipe process or a terminal without shell integration. Only a daemon whose `features` include `commands` knows it. */
export interface CommandsRequest {
  /** The terminal. */
  id: number;
  /** At most this many of the newest commands (1 to 256, `MAX_COMMANDS`); omitted or null: every command the terminal keeps. */
  limit?: number | null;
  /** Tag: `commands`. */
  op: "commands";
}

/** Types a command at the prompt of a terminal started with `shell_integration` and holds the connection until the command ends (answered with `command_finished`) or `timeout_ms` passes (answered with `command_running`; the command goes on, and `wait_command` waits again). Refused at once with `error` unless the shell is at its prompt with nothing typed (SPEC SH10). Only a daemon whose `features` include `commands` knows it. */
export interface RunRequest {
  /** The command line, typed as is and followed by Enter. Several lines are sent as one bracketed paste, which the shell must have enabled. Not empty, no control characters but newlines and tabs, at most 65536 bytes of UTF-8 (`MAX_RUN_COMMAND_BYTES`). */
  command: string;
  /** The terminal. */
  id: number;
  /** Tag: `run`. */
  op: "run";
  /** How long to wait for the command's end, in milliseconds: 0 to 86400000 (24 hours, `MAX_COMMAND_WAIT_MS`); omitted or null: 30000 (`DEFAULT_COMMAND_WAIT_MS`). */
  timeout_ms?: number | null;
}

/** Holds the connection until a command of a terminal started with `shell_integration` ends (answered with `command_finished`, at once for one that already ended) or `timeout_ms` passes (answered with `command_running`). Several may wait for one command (SPEC SH11). Only a daemon whose `features` include `commands` knows it. */
export interface WaitCommandRequest {
  /** The command, as `run`'s `command_running` or `commands` named it. */
  command_id: number;
  /** The terminal. */
  id: number;
  /** Tag: `wait_command`. */
  op: "wait_command";
  /** As `run`'s: 0 to 86400000 milliseconds, 30000 when omitted or null. */
  timeout_ms?: number | null;
}

/** Owner channel only: re-executes the daemon in place from a new binary, keeping its pid, socket, token, processes, terminals, offsets and ownership (SPEC §7). Answered with `ok` once the new image serves requests, or with `error` (the path refused, the new program's preflight failed, the new image could not take the state) while the old image still serves with nothing lost. Other connections are closed once their requests in flight are answered; a client resubscribes from the last offset it saw. Only a daemon whose `features` include `upgrade` carries it out; any other answers it with `error`. From an ordinary connection it is refused like `prepare_handoff`. */
export interface UpgradeRequest {
  /** Tag: `upgrade`. */
  op: "upgrade";
  /** The absolute path of the new binary: an executable regular file that no other user can write, owned by the daemon's user or by root. At most 4096 characters (`MAX_PATH_CHARS`). Omitted or null: the daemon's own executable as it is on disk now (a package upgrade replaced it). */
  program?: string | null;
}

/** A response or a subscription event, tagged by `type`. */
export type Response = PongResponse | OwnedResponse | HandoffResponse | CreatedResponse | ProcessesResponse | ProcessResponse | OkResponse | ErrorResponse | SnapshotResponse | RowsResponse | ReplayResponse | AttachedResponse | ResizedResponse | ControllerChangedResponse | TitleChangedResponse | ForegroundProcessChangedResponse | InputChangedResponse | ExitedResponse | CommandsResponse | CommandStartedResponse | CommandFinishedResponse | CommandRunningResponse;

/** The answer to `ping`: who the daemon is and what it speaks. */
export interface PongResponse {
  /** Names of the additive capabilities the daemon has beyond its protocol version; empty for plain protocol 8. */
  features: string[];
  /** The daemon's instance id, the same as in its registration. */
  instance_id: string;
  /** The daemon's own process id. */
  pid: number;
  /** The protocol version the daemon speaks: 8 for this schema. Clients refuse any other value. */
  protocol: number;
  /** Tag: `pong`. */
  type: "pong";
}

/** The answer to a successful `own`: this connection is now the owner channel, which accepts only `prepare_handoff`, `upgrade` (on a daemon whose `features` include it) and `shutdown`. Closing it stops the daemon unless a handoff was prepared on it, or a later `own` with a ticket has superseded it (then closing it changes nothing). */
export interface OwnedResponse {
  /** Tag: `owned`. */
  type: "owned";
}

/** The answer to `prepare_handoff`: the ticket a replacement server gives to `own`. */
export interface HandoffResponse {
  /** When the ticket stops being accepted, as milliseconds since the Unix epoch: 120 seconds after the handoff was first prepared. */
  expires_at: number;
  /** The secret to pass as `own.ticket`: 32 lowercase hex characters, consumed by the first successful claim. */
  ticket: string;
  /** Tag: `handoff`. */
  type: "handoff";
}

/** The answer to `create_pty` and `create_pipe`: the new process. */
export interface CreatedResponse {
  /** The process just started. */
  process: ProcessInfo;
  /** Tag: `created`. */
  type: "created";
}

/** The answer to `list`. */
export interface ProcessesResponse {
  /** Paged listing only (feature `pages`, SPEC D17): processes of the mode with greater ids followed this page when it was answered; the `after` of the next page (the id of this page's last process). Left out when this page is the last, and in every answer to a request without `after` and `limit`. */
  next?: number;
  /** Every process of the requested mode, in creation order (one page of them when the request named `after` or `limit`). */
  processes: ProcessInfo[];
  /** Tag: `processes`. */
  type: "processes";
}

/** The answer to `get`. */
export interface ProcessResponse {
  /** The process asked for. */
  process: ProcessInfo;
  /** Tag: `process`. */
  type: "process";
}

/** The request succeeded and has nothing to return. */
export interface OkResponse {
  /** Tag: `ok`. */
  type: "ok";
}

/** The request failed. Unknown ops and malformed requests are answered this way too (once the token has been checked), so clients can probe for an op. */
export interface ErrorResponse {
  /** What went wrong, for people, such as `unsupported request: <op>`, `invalid <op> request: ...` or `terminated`. */
  message: string;
  /** Tag: `error`. */
  type: "error";
}

/** The answer to `snapshot`: the screen, its checkpoint and the cursor, captured in one step with the process info. */
export interface SnapshotResponse {
  /** A VT checkpoint, standard base64 with padding: written into a fresh terminal of the same size, it rebuilds the screen, its modes and the cursor position. */
  checkpoint_base64: string;
  /** The cursor column, zero-based. */
  cursor_x: number;
  /** The cursor row within the visible screen, zero-based. */
  cursor_y: number;
  /** The process info, captured in the same step as the screen. */
  process: ProcessInfo;
  /** The plain text of the visible screen, one line per row, soft wraps not joined and trailing whitespace trimmed. */
  text: string;
  /** Tag: `snapshot`. */
  type: "snapshot";
}

/** The answer to `read_rows`: the rows and the cursor, captured in one step with the process info. */
export interface RowsResponse {
  /** The cursor column, zero-based. */
  cursor_x: number;
  /** The cursor row within the active area (not the returned rows), zero-based. */
  cursor_y: number;
  /** One string per physical row, oldest first: soft wraps not joined, trailing whitespace trimmed, blank rows as empty strings. */
  lines: string[];
  /** The process info, captured in the same step as the rows. */
  process: ProcessInfo;
  /** Tag: `rows`. */
  type: "rows";
}

/** The answer to `replay`: the kept output from the requested offset (or from the oldest kept byte) to the tail. */
export interface ReplayResponse {
  /** Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back. */
  available_offset: number;
  /** The bytes from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output. */
  data_base64: string;
  /** The offset just past the returned bytes: the output tail when the replay was read. */
  end_offset: number;
  /** The offset the request asked for. */
  requested_offset: number;
  /** True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost. */
  truncated: boolean;
  /** Tag: `replay`. */
  type: "replay";
}

/** The first frame of a subscription: the process, the role obtained and the replay. Live output frames and events follow, starting at `end_offset`. */
export interface AttachedResponse {
  /** Where the returned bytes start: the requested offset, or the oldest kept offset when the request reached further back. */
  available_offset: number;
  /** The offset just past the returned bytes: the output tail when the replay was read. */
  end_offset: number;
  /** The controller generation after attaching: a counter that grows each time the terminal's controller changes. */
  generation: number;
  /** The process info, captured in the same step as the replay. */
  process: ProcessInfo;
  /** The kept output from `available_offset` to `end_offset`, standard base64 with padding; empty for a pipe process, which keeps no output. */
  replay_base64: string;
  /** The offset the request asked for. */
  requested_offset: number;
  /** The role this attachment has now. */
  role: Role;
  /** True when the requested offset was older than the oldest kept byte, so the bytes from `requested_offset` to `available_offset` are lost. */
  truncated: boolean;
  /** Tag: `attached`. */
  type: "attached";
}

/** Subscription event: the terminal was resized. Later output is laid out for the new size. */
export interface ResizedResponse {
  /** A VT checkpoint of the screen just after the resize, standard base64 with padding; a client resets its terminal to the new size and writes it before any later output. */
  checkpoint_base64: string;
  /** The new width in columns. */
  cols: number;
  /** The controller generation when the resize happened (not a count of resizes). */
  generation: number;
  /** The new height in rows. */
  rows: number;
  /** Tag: `resized`. */
  type: "resized";
}

/** Subscription event: the terminal's controller changed (through takeover, promotion by `control` or `input`, or a detach). Sent to every subscriber, the new controller included. */
export interface ControllerChangedResponse {
  /** The attachment that controls the terminal now, or null when none does. */
  attachment_id: string | null;
  /** The controller generation after the change. */
  generation: number;
  /** Tag: `controller_changed`. */
  type: "controller_changed";
}

/** Subscription event: the effective title changed, through `rename` or an OSC 0/2 sequence not hidden by a user title. */
export interface TitleChangedResponse {
  /** The new effective title, at most 256 characters (`MAX_TITLE_CHARS`). */
  title: string;
  /** Tag: `title_changed`. */
  type: "title_changed";
}

/** Subscription event: the process in the terminal's foreground changed. */
export interface ForegroundProcessChangedResponse {
  /** The name of the deepest terminal-attached process in the foreground process group, or null when it is not known. */
  process: string | null;
  /** Tag: `foreground_process_changed`. */
  type: "foreground_process_changed";
}

/** Subscription event, sent only to a subscriber that asked for it (`subscribe` with `events: ["input"]`): what the terminal waits for changed (SPEC I5). */
export interface InputChangedResponse {
  /** What the terminal waits for now (as `pty.input`), or null when no process of its foreground group is waiting for input from it. */
  input: InputWait | null;
  /** Tag: `input_changed`. */
  type: "input_changed";
}

/** The process exited and the end of its output was read. The last event of a subscription, and the one answer to `wait`. */
export interface ExitedResponse {
  /** The exit status, or null when a signal killed the process. */
  exit_code: number | null;
  /** When the exit became final, as milliseconds since the Unix epoch; the same value as `exited_at` in the process info from then on. */
  exited_at: number;
  /** The output tail at exit: the offset just past the last byte the process wrote. */
  final_offset: number;
  /** Pipe processes only: why writing the output file stopped; left out when it never did. */
  output_error?: string;
  /** Pipe processes only: how many newline bytes went to the output file; left out for PTYs. */
  output_lines?: number;
  /** The name of the signal that killed the process, such as `SIGTERM`; left out when no signal did. */
  signal?: string;
  /** Tag: `exited`. */
  type: "exited";
}

/** The answer to `commands`: the terminal's last commands (at most 256, `MAX_COMMANDS`), oldest first, captured in one step with the process info. */
export interface CommandsResponse {
  /** The commands, oldest first; the running one, if any, last. */
  commands: ShellCommand[];
  /** The process info, captured in the same step as the commands. */
  process: ProcessInfo;
  /** Tag: `commands`. */
  type: "commands";
}

/** Subscription event, sent only to a subscriber that asked for it (`subscribe` with `events: ["commands"]`): a command of a terminal with shell integration started, after the output before its first byte (SPEC SH12). */
export interface CommandStartedResponse {
  /** The command line as in `commands` (at most 4096 bytes, `MAX_COMMAND_LINE_BYTES`). */
  command: string;
  /** The command (as in `commands`). */
  command_id: number;
  /** The shell's working directory, as in `commands`. */
  cwd: string | null;
  /** The output offset of its first byte of output. */
  output_start: number;
  /** Tag: `command_started`. */
  type: "command_started";
}

/** A command of a terminal with shell integration ended. The answer to `run` and `wait_command`, with the command's text; also a subscription event (without `text` and `truncated`), sent only to a subscriber that asked for it (`subscribe` with `events: ["commands"]`), after the command's last byte of output and before the next (SPEC SH11, SH12). */
export interface CommandFinishedResponse {
  /** The command. */
  command_id: number;
  /** Its exit status as the shell reported it, or null when it ended without one (the next prompt came without an end mark). */
  exit_code: number | null;
  /** The output offset just past its last byte of output: `replay` from `output_start` has its exact bytes while they are kept. */
  output_end: number;
  /** The output offset of its first byte of output (as in `commands`). */
  output_start: number;
  /** Answers only: the output as plain text rows joined by newlines (as `read_rows` formats rows, at the terminal's size when the command started; trailing blank rows left out), at most about 1 MiB (`MAX_ROWS_BYTES`): the first and the last rows, with a marker row where rows were left out. */
  text?: string;
  /** Answers only: whether rows were left out of `text` (a marker row says where and how many). */
  truncated?: boolean;
  /** Tag: `command_finished`. */
  type: "command_finished";
}

/** The answer to `run` or `wait_command` whose `timeout_ms` passed before the command ended: it goes on running, and `wait_command` with this `command_id` waits again (SPEC SH11). */
export interface CommandRunningResponse {
  /** The command: for a `run` whose command the shell has not started yet, the number it will get. */
  command_id: number;
  /** The output offset of its first byte of output, or null when the shell has not started it yet. */
  output_start: number | null;
  /** Tag: `command_running`. */
  type: "command_running";
}

/** How a subscription attaches: a `controller` may write and resize (at most one per terminal); an `observer` only watches until an interaction promotes it. */
export type Role = "controller" | "observer";

/** One command a shell with integration ran, as its marks told it (SPEC §10). */
export interface ShellCommand {
  /** The command line as the shell read it (bash: from its history, empty for a line bash keeps out of it). At most 4096 bytes of UTF-8 (`MAX_COMMAND_LINE_BYTES`): a longer one is cut at a character boundary. */
  command: string;
  /** Numbers the terminal's commands from 1, in the order they started. */
  command_id: number;
  /** The shell's working directory when the command started, or null when it had not reported one. At most 4096 bytes of UTF-8 (`MAX_SHELL_CWD_BYTES`). */
  cwd: string | null;
  /** The command's exit status as the shell reported it, or null while it runs or when it ended without one (the next prompt came without an end mark, or the terminal exited). */
  exit_code: number | null;
  /** When the daemon read the mark that ended the command (or learnt it had ended otherwise), as milliseconds since the Unix epoch; null while it runs. */
  finished_at: number | null;
  /** The output offset where the mark that ended the command starts (just past its last byte of output), or null while it runs. */
  output_end: number | null;
  /** The output offset just past the mark that started the command's output: its first byte of output, if any. */
  output_start: number;
  /** When the daemon read the mark that started the command. */
  started_at: number;
}

/** What the shell of a terminal started with `shell_integration` says about itself, from the marks its integration script writes (SPEC §10). */
export interface ShellState {
  /** The `command_id` of the running command, or null when none runs. */
  command_id: number | null;
  /** The shell's working directory as it last reported it (at its latest prompt), or null before it has. At most 4096 bytes of UTF-8 (`MAX_SHELL_CWD_BYTES`): a longer one is reported as null. */
  cwd: string | null;
  /** `starting` until the shell's first prompt, `prompt` while it shows its prompt or reads a command line, `running` from the start of a command's output until its end. */
  state: "starting" | "prompt" | "running";
}

/** A signal the daemon can send to a pipe process's group and child. */
export type Signal = "SIGTERM" | "SIGINT" | "SIGKILL";

/** The protocol version (`x-protocol-version` of `schema/protocol.json`). */
export const PROTOCOL_VERSION = 8 as const;

/** Additive capabilities of this protocol version (`x-features`). */
export const FEATURES: readonly string[] = ["commands", "input", "upgrade", "bounds", "pages"];

/** Every request `op`, in schema order. */
export const REQUEST_OPS = ["ping", "own", "prepare_handoff", "create_pty", "create_pipe", "list", "get", "wait", "signal", "set_metadata", "write", "resize", "control", "input", "snapshot", "read_rows", "rename", "replay", "subscribe", "terminate", "shutdown", "commands", "run", "wait_command", "upgrade"] as const;

/** Every response and event `type`, in schema order. */
export const RESPONSE_TYPES = ["pong", "owned", "handoff", "created", "processes", "process", "ok", "error", "snapshot", "rows", "replay", "attached", "resized", "controller_changed", "title_changed", "foreground_process_changed", "input_changed", "exited", "commands", "command_started", "command_finished", "command_running"] as const;

/** The `type` of the response that answers each op (`x-answer`); an `error` may answer any request instead. */
export const ANSWERS = {
  ping: "pong",
  own: "owned",
  prepare_handoff: "handoff",
  create_pty: "created",
  create_pipe: "created",
  list: "processes",
  get: "process",
  wait: "exited",
  signal: "ok",
  set_metadata: "ok",
  write: "ok",
  resize: "ok",
  control: "ok",
  input: "ok",
  snapshot: "snapshot",
  read_rows: "rows",
  rename: "ok",
  replay: "replay",
  subscribe: "attached",
  terminate: "ok",
  shutdown: "ok",
  commands: "commands",
  run: "command_finished",
  wait_command: "command_finished",
  upgrade: "ok",
} as const satisfies { readonly [Op in Request["op"]]: Response["type"] };

/** The types that may also answer an op (`x-answer-also`): `run`'s `command_running` after its timeout. */
export const OTHER_ANSWERS = {
  run: ["command_running"],
  wait_command: ["command_running"],
} as const satisfies { readonly [Op in Request["op"]]?: readonly Response["type"][] };

/** The response that answers the op `Op` (its `x-answer`, or one of its `x-answer-also`). */
export type AnswerTo<Op extends Request["op"]> = Extract<
  Response,
  { type: (typeof ANSWERS)[Op] | (Op extends keyof typeof OTHER_ANSWERS ? (typeof OTHER_ANSWERS)[Op][number] : never) }
>;

/** The response and event `type`s a subscription carries after `attached` (`x-event`), in schema order. */
export const EVENT_TYPES = ["resized", "controller_changed", "title_changed", "foreground_process_changed", "input_changed", "exited", "command_started", "command_finished"] as const;

/** The whole `message` of the `error` answering a claim without a ticket on a daemon that was claimed before (SPEC O2): another client owns it, so this one can use it but not own it. */
export const ALREADY_OWNED = "daemon already has a live owner";

/** The whole `message` of the `error` a daemon answers a missing or wrong token with (SPEC E3). A client that gets it re-reads the registration, since the daemon may have been replaced. */
export const AUTHENTICATION_FAILED = "authentication failed";

/** The service lock inside a runtime directory (SPEC L2): held exclusively by the daemon for its whole life, so a second daemon, or a sweep, can tell that the directory is in use. */
export const LOCK_FILE = "service.lock";

/** The registration file inside a runtime directory `DIR/NAME` (SPEC L4, CL1): the daemon writes it, clients read it to find the socket and the token. */
export const REGISTRATION_FILE = "service.json";

/** What the `message` of the `error` answering an unknown op starts with; the op follows (SPEC E5). A client can therefore probe whether a daemon knows a request. */
export const UNSUPPORTED_REQUEST_PREFIX = "unsupported request: ";

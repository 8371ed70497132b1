//! Type-level tests: this file is compiled by the test build (`tsc -p tsconfig.test.json`), where every
//! `@ts-expect-error` must meet an error or the build fails. They prove the compiler rejects the wrong uses:
//! `pty` of a `ProcessInfo` not narrowed by `mode`, an op the protocol does not have, a request missing a
//! member, an unknown error `_tag`, a member the answer `exchange` types by its op does not have, a `takeover`
//! that is neither the enum nor the older boolean, an unknown feature, a `run` outcome not narrowed by `type`;
//! and that read-only arrays are accepted as inputs. The one
//! runtime test narrows a real answer's shape.

import assert from "node:assert/strict";
import { test } from "node:test";

import type {
  ClientError,
  Daemon,
  ProcessInfo,
  ProcessInfoPipe,
  ProcessInfoPty,
  PtyInfo,
  RequestInput,
} from "../src/index.js";

/** What a caller writes once `mode` is known: no `!`, no `?.`. */
function describeProcess(info: ProcessInfo): string {
  if (info.mode === "pty") {
    return `${info.pty.title} ${info.pty.cols}x${info.pty.rows}`;
  }
  return `${info.pipe.output_path} (${info.pipe.output_lines} lines)`;
}

/** Never called: only compiled. */
export function rejectedUses(info: ProcessInfo, pipe: ProcessInfoPipe, daemon: Daemon, error: ClientError): void {
  // @ts-expect-error `pty` may be absent until `mode` says it is a PTY.
  const title: PtyInfo = info.pty;
  // @ts-expect-error a pipe process never has `pty`.
  void pipe.pty.title;
  // @ts-expect-error `mode` is the literal `pipe` on a pipe process.
  const mode: "pty" = pipe.mode;
  // @ts-expect-error an op the protocol does not have (an older or newer protocol's request).
  void daemon.call({ op: "attach", id: 1 });
  // @ts-expect-error `get` needs its `id`.
  void daemon.call({ op: "get" });
  // @ts-expect-error a member of the wrong type.
  void daemon.call({ op: "get", id: "1" });
  // @ts-expect-error an unknown member of a known op.
  void daemon.call({ op: "ping", verbose: true });
  // @ts-expect-error no error has this tag.
  if (error._tag === "NotAnError") return;
  // Ops newer than this client go through callRaw, unchecked by the compiler.
  void daemon.callRaw({ op: "teleport" });
  // `exchange` answers `get` with `process`, which has no `processes`.
  void daemon.exchange({ op: "get", id: 1 }).then((answer) => answer.process.id);
  // @ts-expect-error `get` is answered with `process`, not `processes`.
  void daemon.exchange({ op: "get", id: 1 }).then((answer) => answer.processes);
  // `run` is answered by either type (`OTHER_ANSWERS`), and its outcome narrows by `type`.
  void daemon.exchange({ op: "run", id: 1, command: "true" }).then((answer) => answer.type === "command_running" && answer.output_start);
  void daemon.run(1, "true").then((outcome) => {
    // @ts-expect-error only a finished command has an exit code.
    void outcome.exitCode;
    if (outcome.type === "command_finished") {
      const text: string = outcome.text;
      void text;
    }
  });
  // @ts-expect-error `waitCommand` needs the command's id.
  void daemon.waitCommand(1);
  // @ts-expect-error a feature the protocol does not have.
  void daemon.subscribe({ id: 1, attachmentId: "a", events: ["everything"] });
  // @ts-expect-error `takeover` is `"refuse"`, `"take"` or (deprecated) a boolean.
  void daemon.subscribe({ id: 1, attachmentId: "a", takeover: "yes" });
  void daemon.subscribe({ id: 1, attachmentId: "a", takeover: true });
  void title;
  void mode;
}

/** Never called: read-only arrays and records are accepted wherever the client only reads them. */
export function acceptedReadonlyInputs(daemon: Daemon): void {
  const args: readonly string[] = Object.freeze(["-c", "exit 0"]);
  const env: Readonly<Record<string, string>> = Object.freeze({ TERM: "xterm-256color" });
  void daemon.createPty({ program: "/bin/sh", args, env, cwd: "/", cols: 80, rows: 24 });
  void daemon.createPipe({ program: "/bin/sh", args, env, cwd: "/", outputPath: "/tmp/out" });
  const request: RequestInput = {
    op: "create_pty",
    program: "/bin/sh",
    args,
    cwd: "/",
    env,
    group_id: "",
    title: "sh",
    cols: 80,
    rows: 24,
  };
  void daemon.call(request);
  const pty: ProcessInfoPty | null = null;
  void pty;
}

test("a ProcessInfo narrowed by mode has its pty or its pipe", () => {
  const common = {
    id: 1,
    pid: 10,
    command: ["/bin/sh"],
    cwd: "/",
    group_id: "",
    lifecycle: { status: "running" as const },
    output_head: 0,
    output_tail: 0,
    started_at: 0,
    exited_at: null,
  };
  const pty: ProcessInfo = {
    ...common,
    mode: "pty",
    pty: { cols: 80, rows: 24, title: "sh", user_title: null, foreground_process: null },
  };
  const pipe: ProcessInfo = { ...common, mode: "pipe", pipe: { metadata: {}, output_lines: 3, output_path: "/tmp/out" } };
  assert.equal(describeProcess(pty), "sh 80x24");
  assert.equal(describeProcess(pipe), "/tmp/out (3 lines)");
});

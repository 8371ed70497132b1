//! What `run` and `waitCommand` answer (SPEC SH10, SH11): a `CommandOutcome`, the command's end with its text
//! or the news that it still runs when the request's timeout passed. The shapes are the generated views of
//! `command_finished` and `command_running` (both keep their `type`, so a caller narrows the union by it), with
//! what an answer (unlike the subscription event of the same type) always carries made required.

import type { AnswerTo } from "../generated/protocol.js";
import { commandFinishedOf, commandRunningOf, type CommandFinished, type CommandRunning } from "../generated/views.js";
import { ProtocolError } from "./errors.js";

/** How long the daemon waits for a command's end when `run` or `waitCommand` names no `timeoutMs` (30 s, the
 * schema's `DEFAULT_COMMAND_WAIT_MS`). */
export const DEFAULT_COMMAND_WAIT_MS = 30_000;

/** The longest `timeoutMs` `run` and `waitCommand` take (24 h, the schema's `MAX_COMMAND_WAIT_MS`). */
export const MAX_COMMAND_WAIT_MS = 86_400_000;

/** The command ended: its exit code (null when the shell reported none), the offsets of its output (`replay`
 * from `outputStart` has its exact bytes while the terminal keeps them) and its output as plain text rows;
 * `truncated` says rows were left out of a very long output (a marker row says where). */
export interface FinishedCommand extends CommandFinished {
  readonly text: string;
  readonly truncated: boolean;
}

/** The request's timeout passed first: the command goes on, and `waitCommand(id, commandId)` waits again.
 * `outputStart` is null while the shell has not started it yet. */
export type RunningCommand = CommandRunning;

/** How a `run` or `waitCommand` ended, discriminated by `type`. */
export type CommandOutcome = FinishedCommand | RunningCommand;

/** The caller's `CommandOutcome` from a checked answer to `run` or `wait_command`; a `command_finished` answer
 * without its text is a `ProtocolError`. */
export function commandOutcomeOf(answer: AnswerTo<"run" | "wait_command">): CommandOutcome {
  if (answer.type === "command_running") {
    return commandRunningOf(answer);
  }
  const { text, truncated } = answer;
  if (text === undefined || truncated === undefined) {
    throw new ProtocolError("a `command_finished` answer has no `text` or no `truncated`");
  }
  return { ...commandFinishedOf(answer), text, truncated };
}

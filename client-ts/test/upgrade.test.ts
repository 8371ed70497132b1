//! The client across an in-place upgrade of the real daemon (`OPENCODE_PTY_BIN`, issue 30, SPEC CL10):
//! `Owner.upgrade({ program })` to a private copy of the binary while a terminal prints numbered lines; its
//! controller and observer `Subscription`s each yield one `resumed` event and go on with contiguous offsets, the
//! bytes exactly the child's, the controller the controller again under the same attachment id; a `wait` and a
//! `waitCommand` held across the upgrade are answered, and a resumed observer keeps the events it asked for. After a real crash (SIGKILL) a subscription and a `wait`
//! end at once, as before resuming existed.

import assert from "node:assert/strict";
import { chmodSync, copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test, type TestContext } from "node:test";

import { ConnectionError, DaemonError, RESUME_WINDOW_MS, type Resumed, type Subscription } from "../src/index.js";
import { binary, bytes, eventually, releaseAtEnd, spawned, tempDir, until, WAIT_MS } from "./support.js";

const limit = { timeout: 90_000 };

/** Lines each follower must see before the upgrade, and again after it. */
const LINES = 200;

/** A terminal that prints `1`, `2`, ... (ten lines, then a 10 ms pause) until it is sent SIGUSR1, then `end`;
 * then it reads a line and answers `got LINE`. Its terminal does not echo, so its output is known exactly. */
const PRINTER =
  "stty -echo; trap 'stop=1' USR1; i=0; while [ -z \"$stop\" ]; do i=$((i+1)); echo $i; " +
  "case $i in *0) sleep 0.01;; esac; done; echo end; read line; echo \"got $line\"; exec sleep 600";

/** What the printer writes after its numbered lines, once it was sent `hello`. */
const TAIL = "end\r\ngot hello\r\n";

const env = { PATH: "/usr/bin:/bin" };

/** A private copy of the daemon binary: mode 0755 in a fresh directory of ours (mode 0700), as the daemon
 * requires of an upgrade's program. */
function privateCopy(t: TestContext): string {
  const dir = tempDir(t);
  chmodSync(dir, 0o700);
  const copy = join(dir, "opencode-pty");
  copyFileSync(binary(), copy);
  chmodSync(copy, 0o755);
  return copy;
}

/** Reads a subscription attached at offset 0 in the background until the printer's last words (or the end of
 * the subscription), checking each output chunk starts where the bytes so far end, and lets the test wait for
 * how far it got. */
class Follower {
  text: string;
  readonly resumed: { event: Resumed; seen: number }[] = [];
  readonly done: Promise<void>;
  private failure: unknown = null;
  /** Set once reading stopped: the printer's last words came, the subscription ended, or it failed. */
  private finished = false;
  private readonly waiters = new Set<() => void>();

  constructor(readonly subscription: Subscription) {
    const attached = subscription.attached;
    assert.deepEqual([attached.availableOffset, attached.endOffset], [0, attached.replay.length]);
    this.text = Buffer.from(attached.replay).toString("latin1");
    this.done = this.read();
    this.done.catch(() => undefined);
  }

  get lines(): number {
    return this.text.split("\n").length - 1;
  }

  private async read(): Promise<void> {
    try {
      while (!this.text.endsWith(TAIL)) {
        const event = await this.subscription.next();
        if (event === null) {
          return;
        }
        if (event.type === "output") {
          assert.equal(event.start, this.text.length, "output continues where it stopped");
          this.text += Buffer.from(event.bytes).toString("latin1");
        } else if (event.type === "resumed") {
          this.resumed.push({ event, seen: this.text.length });
        } else {
          assert.notEqual(event.type, "exited");
        }
        this.wake();
      }
    } catch (error) {
      this.failure = error;
      throw error;
    } finally {
      this.finished = true;
      this.wake();
    }
  }

  private wake(): void {
    for (const waiter of this.waiters) waiter();
  }

  /** Resolves once `reached` holds, within {@link WAIT_MS}; rejects if the subscription failed first. */
  async reach(what: string, reached: (follower: Follower) => boolean): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (reached(this)) {
          done();
          resolve();
        } else if (this.finished) {
          done();
          const why = this.failure ?? `the subscription ended (${String(this.subscription.endReason)})`;
          reject(why instanceof Error ? why : new Error(`${what}: ${String(why)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${what}: not within ${WAIT_MS} ms (${this.lines} lines, ${this.resumed.length} resumed)`));
      }, WAIT_MS);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }
}

/** Checks `text` is `1\r\n2\r\n...K\r\n` followed by {@link TAIL}, for some K > 2 {@link LINES}; returns K. */
function numbered(text: string): number {
  assert.ok(text.endsWith(TAIL), JSON.stringify(text.slice(-40)));
  const lines = text.slice(0, -TAIL.length).split("\r\n");
  assert.equal(lines.pop(), "", "whole lines");
  lines.forEach((line, n) => assert.equal(line, String(n + 1), `line ${n + 1}: no gap, no repeat`));
  assert.ok(lines.length > 2 * LINES, `${lines.length} lines`);
  return lines.length;
}

test("a controller and an observer go on across Owner.upgrade, every byte once, the controller again", limit, async (t) => {
  const { daemon, owner, runtimeDir } = await spawned(t);
  releaseAtEnd(t, owner);
  assert.ok(daemon.resumes, "the daemon announces the upgrade feature");
  const program = privateCopy(t);
  const before = await daemon.ping();

  const script = "trap 'exit 9' USR1; while :; do sleep 0.02; done";
  const pipe = await daemon.createPipe({ program: "/bin/sh", args: ["-c", script], cwd: "/", env, outputPath: join(runtimeDir, "p.log") });
  const waiting = daemon.wait(pipe.id);
  waiting.catch(() => undefined);
  const pty = await daemon.createPty({ program: "/bin/sh", args: ["-c", PRINTER], cwd: "/", env, cols: 80, rows: 24 });
  const shellPid = pty.pid ?? assert.fail("a running terminal has a pid");
  const controller = new Follower(await daemon.subscribe({ id: pty.id, attachmentId: "ctl", role: "controller" }));
  const observer = new Follower(await daemon.subscribe({ id: pty.id, attachmentId: "obs" }));
  t.after(() => {
    controller.subscription.close();
    observer.subscription.close();
  });
  const generation = controller.subscription.attached.generation;
  assert.deepEqual([controller.subscription.attached.role, observer.subscription.attached.role], ["controller", "observer"]);
  for (const follower of [controller, observer]) {
    await follower.reach("lines before the upgrade", (f) => f.lines >= LINES);
  }

  await owner.upgrade({ program });

  const after = await daemon.ping();
  assert.deepEqual([after.pid, after.instance_id], [before.pid, before.instance_id], "the same daemon");
  for (const follower of [controller, observer]) {
    await follower.reach("resumed", (f) => f.resumed.length >= 1);
    const from = follower.lines;
    await follower.reach("lines after the upgrade", (f) => f.lines >= from + LINES);
  }
  // The same attachment id holds control: another controller is refused naming it, without a takeover.
  await assert.rejects(
    daemon.subscribe({ id: pty.id, attachmentId: "other", role: "controller" }),
    (e: unknown) => e instanceof DaemonError && e.message === "terminal already has controller ctl",
  );
  // The printer stops, says `end`, and reads a line: the controller's write is taken, an observer's not.
  process.kill(shellPid, "SIGUSR1");
  for (const follower of [controller, observer]) {
    await follower.reach("the printer's end", (f) => f.text.includes("end\r\n"));
  }
  await assert.rejects(
    daemon.write(pty.id, "obs", bytes("nope\r")),
    (e: unknown) => e instanceof DaemonError && e.message.includes("not the terminal controller"),
  );
  await daemon.write(pty.id, "ctl", bytes("hello\r"));
  await Promise.all([controller.done, observer.done]);

  const lines = numbered(controller.text);
  assert.equal(observer.text, controller.text, "both saw the same bytes");
  for (const [follower, role] of [[controller, "controller"], [observer, "observer"]] as const) {
    assert.equal(follower.resumed.length, 1, "one resumption each");
    const [{ event, seen }] = follower.resumed as [{ event: Resumed; seen: number }];
    assert.equal(event.offset, seen, "output continues at the offset where it stopped");
    assert.deepEqual([event.role, event.generation], [role, generation]);
    assert.deepEqual([event.process.id, event.process.pid], [pty.id, shellPid]);
    assert.ok(event.attempts >= 1);
    assert.ok(seen > 0 && seen < follower.text.length - TAIL.length, `resumed at ${seen} of ${lines} lines`);
  }

  process.kill(pipe.pid ?? assert.fail("a running pipe process has a pid"), "SIGUSR1");
  const exited = await waiting;
  assert.deepEqual([exited.exitCode, exited.signal], [9, undefined], "the wait is answered across the upgrade");
  await owner.shutdown();
});

test("a waitCommand and an observer's events go on across Owner.upgrade", limit, async (t) => {
  const { daemon, owner } = await spawned(t);
  releaseAtEnd(t, owner);
  const program = privateCopy(t);
  const home = tempDir(t);
  const shellEnv = { HOME: home, PATH: process.env["PATH"] ?? "/usr/bin:/bin" };
  const pty = await daemon.createPty({ program: "bash", cwd: home, env: shellEnv, cols: 80, rows: 24, shellIntegration: true });
  const watcher = await daemon.subscribe({ id: pty.id, attachmentId: "watch", events: ["input", "commands"] });
  t.after(() => watcher.close());
  const seen = { output: "", offset: watcher.attached.endOffset };
  if (watcher.attached.process.pty?.input !== "prompt") {
    await until(watcher, (e) => e.type === "input_changed" && e.input === "prompt", seen);
  }
  const running = await daemon.run(pty.id, "read -s line; echo got-$line", { timeoutMs: 0 });
  assert.equal(running.type, "command_running");
  await until(watcher, (e) => e.type === "input_changed" && (e.input === "password" || e.input === "line"), seen);
  const finished = daemon.waitCommand(pty.id, running.commandId);
  finished.catch(() => undefined);

  await owner.upgrade({ program });

  const resumed = await until(watcher, (e) => e.type === "resumed", seen);
  assert.ok(resumed.type === "resumed" && resumed.offset === seen.offset && resumed.role === "observer", JSON.stringify(resumed));
  // Nobody controls the terminal, so input needs no attachment.
  await daemon.write(pty.id, null, bytes("hello\r"));
  const done = await finished;
  assert.ok(done.type === "command_finished", JSON.stringify(done));
  assert.deepEqual([done.commandId, done.exitCode, done.text], [running.commandId, 0, "got-hello"]);
  // The resumed watcher still carries the events it asked for.
  const ended = await until(watcher, (e) => e.type === "command_finished", seen);
  assert.ok(ended.type === "command_finished" && ended.commandId === running.commandId, JSON.stringify(ended));
  await daemon.terminate(pty.id);
});

test("after a crash a subscription and a wait end at once, without resuming", limit, async (t) => {
  const { daemon, owner, runtimeDir } = await spawned(t);
  releaseAtEnd(t, owner);
  const pipe = await daemon.createPipe({ program: "/bin/sleep", args: ["600"], cwd: "/", env, outputPath: join(runtimeDir, "s.log") });
  const waiting = daemon.wait(pipe.id);
  waiting.catch(() => undefined);
  const pty = await daemon.createPty({ program: "/bin/sh", args: ["-c", PRINTER], cwd: "/", env, cols: 80, rows: 24 });
  const follower = new Follower(await daemon.subscribe({ id: pty.id, attachmentId: "obs" }));
  t.after(() => follower.subscription.close());
  await follower.reach("output before the crash", (f) => f.lines >= 10);

  process.kill(daemon.pid, "SIGKILL");
  const killed = Date.now();
  // The subscription ends (the daemon's socket closed, or a read failed), and never with a `resumed` event.
  const failed = await follower.done.then(
    () => null,
    (error: unknown) => error,
  );
  assert.ok(failed === null || failed instanceof ConnectionError, String(failed));
  assert.ok(!follower.text.endsWith(TAIL), "the printer's last words cannot have come");
  assert.equal(follower.resumed.length, 0, "no daemon is left to resume");
  assert.equal(follower.subscription.endReason, "closed");
  await assert.rejects(waiting, (e: unknown) => e instanceof ConnectionError);
  assert.ok(Date.now() - killed < RESUME_WINDOW_MS / 2, "at once, not after the resume window");
  // The daemon's guardian ends its children (SPEC X4) before the runtime directory, with the record of their
  // groups, is removed.
  for (const pid of [pipe.pid, pty.pid]) {
    await eventually(`child ${String(pid)} of the killed daemon ended`, () => ended(pid ?? assert.fail("a pid")));
  }
});

/** Whether process `pid` has exited: gone, or a zombie nobody reaped yet. */
function ended(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}

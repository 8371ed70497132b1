//! Starting daemons: a failed `Daemon.spawn` leaves no process behind, and `connectOrSpawn` copes with a
//! rival caller starting a daemon at the same moment and with a registration left by a daemon that died.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { ConnectionError, Daemon } from "../src/index.js";
import { alive, killAtEnd, tempDir, WAIT_MS } from "./support.js";

const limit = { timeout: 60_000 };

test("a spawn that fails after the launch stops the daemon it started", limit, async (t) => {
  const runtimeDir = tempDir(t);
  // Registers itself (under its own pid, as a daemon does) with a socket nobody listens on, then lingers.
  const fake = join(runtimeDir, "fake-daemon");
  const id = "c".repeat(32);
  writeFileSync(
    fake,
    `#!/bin/sh
dir="$5/$3"
mkdir -p "$dir"
printf '{"instance_id":"${id}","pid":%d,"protocol":8,"features":[],"socket":"%s","token":"${id}"}' $$ "$dir/nobody.sock" > "$dir/new.tmp"
chmod 600 "$dir/new.tmp"
mv "$dir/new.tmp" "$dir/service.json"
exec sleep 60
`,
    { mode: 0o755 },
  );
  await assert.rejects(
    Daemon.spawn({ binary: fake, runtimeDir, name: "doomed", timeoutMs: WAIT_MS }),
    (e: unknown) => e instanceof ConnectionError && e.reason === "unreachable",
  );
  const { pid } = JSON.parse(readFileSync(join(runtimeDir, "doomed", "service.json"), "utf8")) as { pid: number };
  killAtEnd(t, pid);
  assert.equal(alive(pid), false, "the launched process was stopped and reaped before spawn rejected");
});

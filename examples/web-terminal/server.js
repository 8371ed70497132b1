/** `npm start`: finds or starts an opencode-pty daemon, opens (or picks) a terminal and serves it as a web page. */

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connectOrSpawn } from "opencode-pty-client";
import { startWebTerminal } from "./lib/web.js";

const USAGE = `usage: npm start -- [--name NAME] [--runtime-dir DIR] [--pty ID] [--shell PROGRAM] [--host HOST] [--port PORT]

Serves one terminal of the opencode-pty daemon NAME (default "web") at http://HOST:PORT/ (default
127.0.0.1, a free port), starting the daemon when none runs there. Without --pty it starts a shell
(--shell, default $SHELL or /bin/bash). Open the printed URL; a second tab observes and can take over.`;

const { values } = parseArgs({
  options: {
    name: { type: "string", default: "web" },
    "runtime-dir": { type: "string" },
    pty: { type: "string" },
    shell: { type: "string" },
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

/** The daemon binary when nothing names one: this repository's own build, if there is one. */
function repositoryBinary() {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "target");
  return ["release", "debug"].map((profile) => join(root, profile, "opencode-pty")).find((path) => existsSync(path));
}

/** `text` as a whole number from `min` to `max`, or the usage error naming `what`. */
function whole(text, what, min, max) {
  const value = Number(text);
  if (text === "" || !Number.isInteger(value) || value < min || value > max) {
    console.error(`${what} needs a whole number from ${min} to ${max}, not ${JSON.stringify(text)}\n\n${USAGE}`);
    process.exit(2);
  }
  return value;
}

// Checked before anything starts, so a typo starts no daemon.
const port = whole(values.port, "--port", 0, 65535);
let id = values.pty === undefined ? null : whole(values.pty, "--pty", 1, Number.MAX_SAFE_INTEGER);

const binary = process.env.OPENCODE_PTY_BIN ? undefined : repositoryBinary();
const { daemon, owner } = await connectOrSpawn({
  name: values.name,
  ...(values["runtime-dir"] ? { runtimeDir: values["runtime-dir"] } : {}),
  ...(binary ? { binary } : {}),
});
if (id === null) {
  const pty = await daemon.createPty({
    program: values.shell ?? process.env.SHELL ?? "/bin/bash",
    cwd: process.env.HOME ?? process.cwd(),
    cols: 80,
    rows: 24,
    groupId: "web-terminal",
  });
  id = pty.id;
}
const web = await startWebTerminal({ daemon, id, host: values.host, port });
console.log(`terminal ${id} of daemon "${values.name}": open ${web.url}`);
if (owner) {
  console.log("this process owns the daemon: stopping it (Ctrl-C) stops the daemon and its terminals");
}

async function stop() {
  await web.close();
  await owner?.release();
  process.exit(0);
}
process.once("SIGINT", stop);
process.once("SIGTERM", stop);

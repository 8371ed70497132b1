//! The owner process of unref.test.ts, run as its own Node process: spawns a daemon in argv[2] and owns it,
//! then (argv[3]) calls `owner.unref()` (`unref`), `unref()` then `ref()` (`ref`), or does the same through a
//! `ManagedDaemon` it unrefs (`managed`); prints the daemon's pid, and says `owner closed` if it is still
//! running when the owner channel ends.

import { Daemon, ManagedDaemon, type Owner } from "../src/index.js";

const [runtimeDir, mode] = process.argv.slice(2);
const location = { runtimeDir: runtimeDir ?? "", name: "unref", timeoutMs: 20_000 };
let pid: number;
let owner: Owner | null;
if (mode === "managed") {
  const managed = new ManagedDaemon(location).unref();
  const state = await managed.ready();
  ({ owner } = state);
  pid = state.daemon.pid;
} else {
  const spawned = await Daemon.spawn(location);
  owner = spawned.owner.unref();
  if (mode === "ref") owner.ref();
  pid = spawned.daemon.pid;
}
void owner?.closed.then(() => process.stdout.write("owner closed\n"));
process.stdout.write(`ready ${pid}\n`);

//! The owner process of unref.test.ts, run as its own Node process: spawns a daemon in argv[2], owns it, calls
//! `owner.unref()` (argv[3] `unref`) or `unref()` then `ref()` (argv[3] `ref`), prints the daemon's pid, and
//! says `owner closed` if it is still running when the owner channel ends.

import { Daemon } from "../src/index.js";

const [runtimeDir, mode] = process.argv.slice(2);
const { daemon, owner } = await Daemon.spawn({ runtimeDir: runtimeDir ?? "", name: "unref", timeoutMs: 20_000 });
owner.unref();
if (mode === "ref") owner.ref();
void owner.closed.then(() => process.stdout.write("owner closed\n"));
process.stdout.write(`ready ${daemon.pid}\n`);

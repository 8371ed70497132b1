//! The successor of handoff.test.ts, run as its own Node process: claims the daemon named by the handoff in
//! argv[2], lists its PTYs, stops it, and prints what it saw as JSON.

import { claimHandoff, type Handoff } from "../src/index.js";

const handoff = JSON.parse(process.argv[2] ?? "") as Handoff;
const { daemon, owner } = await claimHandoff(handoff);
const processes = (await daemon.list("pty")).map((p) => p.id);
await owner.shutdown();
await owner.closed;
process.stdout.write(JSON.stringify({ instanceId: daemon.instanceId, processes }));

/** A short fixed-seed round of the framer fuzz loop (`fuzz-framer.ts`), so the loop cannot rot. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { fuzzFramer } from "./fuzz-framer.js";

test("two seconds of mutated frame streams: only frames or ProtocolError, split-independent", { timeout: 60_000 }, () => {
  const report = fuzzFramer(2000, 14);
  assert.ok(report.executions > 100, `it ran (${report.executions} executions)`);
  assert.ok(report.frames > 0 && report.errors > 0, "both accepted frames and refused streams were exercised");
});

//! What the package ships and how it finds the daemon: every source map and `sourceMappingURL` in the packed
//! files points at a file the package ships (checked on `npm pack --dry-run` of a copy, which builds its own
//! `dist/`), and the binary lookup's order (the option, `$OPENCODE_PTY_BIN`, the platform package, then `PATH`).

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { DAEMON_BINARY_NAME, daemonBinary, findOnPath, platformPackage, platformPackageBinary } from "../src/index.js";
import { tempDir, WAIT_MS } from "./support.js";

/** The package's folder (`client-ts/`), from `build-test/test/`. */
const root = fileURLToPath(new URL("../../", import.meta.url));

test("source maps point only at files the package ships", { timeout: 120_000 }, async (t) => {
  // A copy of the package, so its build (`prepack`) cannot race another build of `dist/` here (the cargo test
  // that packs the client runs beside this one).
  const copy = tempDir(t);
  for (const entry of ["package.json", "tsconfig.json", "README.md", "CHANGELOG.md", "src"]) {
    cpSync(join(root, entry), join(copy, entry), { recursive: true });
  }
  symlinkSync(join(root, "node_modules"), join(copy, "node_modules"));
  const output = await new Promise<string>((resolve, reject) => {
    execFile("npm", ["pack", "--dry-run", "--json"], { cwd: copy, timeout: 4 * WAIT_MS, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`npm pack --dry-run failed: ${error.message}\n${stderr}`)) : resolve(stdout),
    );
  });
  // The build that `prepack` runs prints to stderr; stdout holds the JSON alone.
  const packed = JSON.parse(output) as { files: { path: string }[] }[];
  const files = new Set((packed[0]?.files ?? []).map((file) => file.path));
  assert.ok(files.has("dist/index.js") && files.has("README.md"), [...files].join(", "));
  let maps = 0;
  for (const path of files) {
    const text = readFileSync(join(copy, path), "utf8");
    if (path.endsWith(".js")) {
      for (const match of text.matchAll(/\/\/# sourceMappingURL=(\S+)/g)) {
        const target = normalize(join(dirname(path), match[1] ?? ""));
        assert.ok(files.has(target), `${path} names its map ${target}, which the package does not ship`);
      }
    }
    if (path.endsWith(".map")) {
      maps++;
      const map = JSON.parse(text) as { sources: string[]; sourceRoot?: string };
      for (const source of map.sources) {
        const target = normalize(join(dirname(path), map.sourceRoot ?? "", source));
        assert.ok(files.has(target), `${path} points at ${target}, which the package does not ship`);
      }
    }
  }
  assert.ok(maps > 0, "the package ships source maps");
});

test("the binary lookup: the option, OPENCODE_PTY_BIN, the platform package, then PATH", (t) => {
  const dir = tempDir(t);
  const [first, second, third] = ["a", "b", "c"].map((name) => join(dir, name));
  for (const folder of [first, second, third]) mkdirSync(folder ?? "");
  // Not executable, then a folder of that name, then the real one: only the last counts.
  writeFileSync(join(first ?? "", DAEMON_BINARY_NAME), "#!/bin/sh\n", { mode: 0o644 });
  mkdirSync(join(second ?? "", DAEMON_BINARY_NAME));
  writeFileSync(join(third ?? "", DAEMON_BINARY_NAME), "#!/bin/sh\n", { mode: 0o755 });
  const path = ["", "relative/bin", first, second, third].join(":");
  const found = join(third ?? "", DAEMON_BINARY_NAME);
  assert.equal(findOnPath(DAEMON_BINARY_NAME, path), found);
  assert.equal(findOnPath(DAEMON_BINARY_NAME, [first, second].join(":")), null);
  assert.equal(findOnPath(DAEMON_BINARY_NAME, undefined), findOnPath(DAEMON_BINARY_NAME, ""));
  // The platform package is an optional dependency, which this repository's `npm ci` skips while it is not
  // published; once it is, it comes before PATH.
  const installed = platformPackageBinary();
  assert.equal(platformPackage("linux", "x64"), "opencode-pty-linux-x64");
  assert.equal(platformPackage("linux", "arm64"), "opencode-pty-linux-arm64");
  assert.equal(platformPackage("linux", "ia32"), null);
  assert.equal(platformPackage("darwin", "arm64"), null);
  assert.equal(daemonBinary(undefined, { PATH: path }), installed ?? found);
  assert.equal(daemonBinary(undefined, { PATH: path, OPENCODE_PTY_BIN: "/from/env" }), "/from/env");
  assert.equal(daemonBinary("/given", { PATH: path, OPENCODE_PTY_BIN: "/from/env" }), "/given");
  assert.equal(daemonBinary(undefined, { PATH: first }), installed);
});

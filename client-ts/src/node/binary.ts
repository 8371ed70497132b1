//! Where the `opencode-pty` binary is when the caller does not say: `$OPENCODE_PTY_BIN`, else the platform
//! package installed beside this one (`opencode-pty-linux-x64` on Linux x86-64, `opencode-pty-linux-arm64` on
//! Linux arm64, each holding the binary with its libghostty-vt beside it, the way esbuild and biome ship their
//! native binaries), else `opencode-pty` on `PATH` (an installed release archive, `just install`).

import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, isAbsolute, join } from "node:path";

/** The binary's file name, looked for on `PATH`. */
export const DAEMON_BINARY_NAME = "opencode-pty";

/** The CPUs (Node's names) a Linux platform package is built for. */
const LINUX_CPUS: readonly string[] = ["x64", "arm64"];

/** The platform package for this machine, or null where none is built. */
export function platformPackage(platform: string = process.platform, arch: string = process.arch): string | null {
  return platform === "linux" && LINUX_CPUS.includes(arch) ? `opencode-pty-linux-${arch}` : null;
}

/** The binary of the installed platform package, or null when it is not installed (or none is built here). */
export function platformPackageBinary(): string | null {
  const name = platformPackage();
  if (!name) return null;
  try {
    const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
    return join(dirname(manifest), "bin", DAEMON_BINARY_NAME);
  } catch {
    return null;
  }
}

/** The first executable regular file called `name` in the directories of `path` (a `PATH` value), or null.
 * Relative and empty entries are skipped: they would depend on the current directory. */
export function findOnPath(name: string = DAEMON_BINARY_NAME, path: string | undefined = process.env["PATH"]): string | null {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      if (statSync(candidate).isFile()) {
        accessSync(candidate, constants.X_OK);
        return candidate;
      }
    } catch {
      // Missing or not executable: look further.
    }
  }
  return null;
}

/** The binary: `given`, else `$OPENCODE_PTY_BIN` of `env`, else the installed platform package's, else
 * `opencode-pty` on `env.PATH`; null when none. */
export function daemonBinary(given?: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (given) return given;
  const fromEnvironment = env["OPENCODE_PTY_BIN"];
  if (fromEnvironment) return fromEnvironment;
  return platformPackageBinary() ?? findOnPath(DAEMON_BINARY_NAME, env["PATH"]);
}

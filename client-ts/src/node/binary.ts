/**
 * Where the `opencode-pty` binary is when the caller does not say: `$OPENCODE_PTY_BIN`, else the platform
 * package installed beside this one (`opencode-pty-linux-x64` on Linux x86-64), the way esbuild and biome ship
 * their native binaries. That package holds the binary with its libghostty-vt beside it.
 */

import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The platform package for this machine, or null where none is built. */
export function platformPackage(platform: string = process.platform, arch: string = process.arch): string | null {
  return platform === "linux" && arch === "x64" ? "opencode-pty-linux-x64" : null;
}

/** The binary: `given`, else `$OPENCODE_PTY_BIN`, else the installed platform package's; null when none. */
export function daemonBinary(given: string | undefined): string | null {
  if (given) return given;
  const fromEnvironment = process.env["OPENCODE_PTY_BIN"];
  if (fromEnvironment) return fromEnvironment;
  const name = platformPackage();
  if (!name) return null;
  try {
    const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
    return join(dirname(manifest), "bin", "opencode-pty");
  } catch {
    return null;
  }
}

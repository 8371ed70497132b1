//! Finding a daemon on disk (SPEC §7.1): the runtime directory `DIR/NAME`, and reading its registration
//! `service.json` only when it is safe to trust (a regular file, not a symlink, ours, mode 0600), refusing
//! another protocol version before anything else in it is looked at (SPEC V3).

import { constants, promises as fs } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

import { checked } from "../core/check.js";
import { ConnectionError, VersionMismatchError } from "../core/errors.js";
import { PROTOCOL_VERSION, REGISTRATION_FILE, type Registration } from "../generated/protocol.js";

/** The largest registration file read (64 KiB); a real one is a few hundred bytes. */
export const MAX_REGISTRATION_BYTES = 64 * 1024;

/** Where a daemon lives: `runtimeDir/name` (SPEC L1). */
export interface Location {
  /** The parent of every daemon's runtime directory; defaults as the daemon's `--runtime-dir` does. */
  readonly runtimeDir?: string | undefined;
  /** One path component naming the daemon. */
  readonly name: string;
}

/** The default `--runtime-dir` (SPEC L1): `$XDG_STATE_HOME/opencode/pty` when absolute, else
 * `~/.local/state/opencode/pty`, else `<temp>/opencode/pty`. */
export function defaultRuntimeDir(): string {
  const state = process.env["XDG_STATE_HOME"];
  if (state && isAbsolute(state)) {
    return join(state, "opencode", "pty");
  }
  let home = "";
  try {
    home = homedir();
  } catch {
    // No home directory at all.
  }
  return home ? join(home, ".local", "state", "opencode", "pty") : join(tmpdir(), "opencode", "pty");
}

/** Checks a runtime name as the daemon does (SPEC L1) and returns the directory `runtimeDir/name`, absolute
 * (a relative `runtimeDir` is resolved against the current directory, so a handoff names the same place in
 * any process). */
export function daemonDir(location: Location): string {
  const { name } = location;
  if (name === "" || name === "." || name === ".." || !/^[A-Za-z0-9._-]+$/.test(name)) {
    throw new ConnectionError(
      `invalid runtime name ${JSON.stringify(name)}: use letters, digits, '.', '_' and '-'`,
      "registration",
    );
  }
  return resolve(location.runtimeDir ?? defaultRuntimeDir(), name);
}

/** Reads and checks `dir/service.json`. */
export async function readRegistration(dir: string): Promise<Registration> {
  const path = join(dir, REGISTRATION_FILE);
  const unsafe = (reason: string): ConnectionError =>
    new ConnectionError(`cannot use the registration ${path}: ${reason}`, "registration");
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      throw new ConnectionError(`no running daemon found in ${dir}`, "not-found", { cause: error });
    }
    if (code === "ELOOP") {
      throw unsafe("it is a symbolic link");
    }
    throw new ConnectionError(`cannot open the registration ${path}: ${(error as Error).message}`, "io", {
      cause: error,
    });
  }
  let text: string;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) {
      throw unsafe("it is not a regular file");
    }
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) {
      throw unsafe(`it belongs to uid ${stat.uid}, not to us (${uid})`);
    }
    if ((stat.mode & 0o077) !== 0) {
      throw unsafe(`its mode is ${(stat.mode & 0o777).toString(8)}, not 600`);
    }
    if (stat.size > MAX_REGISTRATION_BYTES) {
      throw unsafe(`it is larger than ${MAX_REGISTRATION_BYTES} bytes`);
    }
    const buffer = Buffer.alloc(MAX_REGISTRATION_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_REGISTRATION_BYTES) {
      throw unsafe(`it is larger than ${MAX_REGISTRATION_BYTES} bytes`);
    }
    text = buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw unsafe(`it is not JSON: ${(error as Error).message}`);
  }
  return checkRegistration(value, path);
}

/** Checks a registration read from `where`: another protocol version is refused with `VersionMismatchError`
 * before anything else in it is looked at (SPEC V3), then it must fit the schema (`ConnectionError`
 * `registration` otherwise). */
export function checkRegistration(value: unknown, where: string): Registration {
  const fields = typeof value === "object" && value !== null ? (value as { protocol?: unknown; pid?: unknown }) : {};
  const protocol = fields.protocol;
  if (typeof protocol === "number" && protocol !== PROTOCOL_VERSION) {
    const pid = Number.isSafeInteger(fields.pid) && (fields.pid as number) > 0 ? (fields.pid as number) : null;
    throw new VersionMismatchError(PROTOCOL_VERSION, protocol, { pid });
  }
  try {
    return checked<Registration>("Registration", value, "the registration");
  } catch (error) {
    throw new ConnectionError(`cannot use the registration ${where}: ${(error as Error).message}`, "registration");
  }
}

//! `opencode-pty-client`: the typed Node.js client of the opencode-pty daemon, protocol 8. The platform-neutral
//! core (framing, envelopes, schema checks, subscription state, the transport seam and an in-memory transport)
//! lives in `core/`, the `node:net` transport and the API in `node/`; the protocol types, the op table, the
//! shared wire texts (`REGISTRATION_FILE`, `AUTHENTICATION_FAILED`, `ALREADY_OWNED`, ...) and the caller-facing
//! answer shapes are generated from `schema/`.

export * from "./generated/protocol.js";
export {
  AbortError,
  alreadyOwned,
  ConnectionError,
  DaemonError,
  HandoffError,
  OpencodePtyError,
  ProtocolError,
  TimeoutError,
  VersionMismatchError,
  type ClientError,
  type ConnectionFailure,
  type ErrorCode,
  type HandoffFound,
  type HandoffRefusal,
  type MismatchedDaemon,
} from "./core/errors.js";
export {
  encodeControl,
  encodeOutput,
  FrameDecoder,
  FRAME_HEADER_BYTES,
  MAX_FRAME_BYTES,
  OUTPUT_PREFIX_BYTES,
  OUTPUT_TAG,
  type Frame,
  type JsonObject,
} from "./core/frame.js";
export { problemWith } from "./core/check.js";
export {
  DEFAULT_COMMAND_WAIT_MS,
  MAX_COMMAND_WAIT_MS,
  type CommandOutcome,
  type FinishedCommand,
  type RunningCommand,
} from "./core/commands.js";
export type {
  Attached,
  CommandFinished,
  CommandRunning,
  Commands,
  CommandStarted,
  ControllerChanged,
  DeepReadonly,
  EventView,
  Exited,
  ForegroundProcessChanged,
  Handoff,
  InputChanged,
  Replay,
  RequestInput,
  Resized,
  Resumed,
  Rows,
  Snapshot,
  SubscriptionEvent,
  TitleChanged,
} from "./core/messages.js";
export { memoryTransport, type MemoryDaemon, type MemoryPeer } from "./core/memory.js";
export type { Channel, Transport } from "./core/transport.js";
export {
  DAEMON_BINARY_NAME,
  daemonBinary,
  findOnPath,
  platformPackage,
  platformPackageBinary,
} from "./node/binary.js";
export { MAX_QUEUED_FRAMES, socketTransport } from "./node/connection.js";
export { connectOrSpawn, discover, type Connected } from "./node/connect.js";
export {
  Daemon,
  type DiscoverOptions,
  type FromRegistrationOptions,
  type ResumeOptions,
  type Spawned,
  type SpawnOptions,
} from "./node/daemon.js";
export { claimHandoff } from "./node/handoff.js";
export {
  DEFAULT_LIST_PAGE,
  DEFAULT_TIMEOUT_MS,
  type AttachmentSize,
  type CallOptions,
  type CommandWaitOptions,
  type CreatePipeParams,
  type CreatePtyParams,
  type InfoOptions,
  type ListAllOptions,
  type ListPage,
  type ListPageParams,
  type SubscribeParams,
  type Takeover,
} from "./node/options.js";
export {
  ManagedDaemon,
  RECOVERY_ATTEMPTS,
  type LostReason,
  type ManagedEvent,
  type ManagedLocation,
  type ManagedOptions,
  type ManagedState,
} from "./node/managed.js";
export { Owner, UPGRADE_TIMEOUT_MS, type UpgradeOptions } from "./node/owner.js";
export { RESUME_FIRST_BACKOFF_MS, RESUME_MAX_BACKOFF_MS, RESUME_WINDOW_MS, UPGRADE_FEATURE } from "./node/resume.js";
export { discoverIfRunning, GONE_POLL_MS, SHUTDOWN_WAIT_MS, shutdownAndWait } from "./node/running.js";
export { defaultRuntimeDir, MAX_REGISTRATION_BYTES, type Location } from "./node/registration.js";
export { REGISTRATION_POLL_MS, STOP_GRACE_MS, type DaemonStderr } from "./node/spawn.js";
export { Subscription, type EndReason } from "./node/subscription.js";

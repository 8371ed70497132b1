/** Will hold the typed TypeScript client for Node that OpenCode uses to talk to the opencode-pty daemon. */

/** The protocol version this client speaks; it rejects a daemon that reports another. */
export const PROTOCOL_VERSION = 8;

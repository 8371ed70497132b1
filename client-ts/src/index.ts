/** The typed TypeScript client for Node that OpenCode uses to talk to the opencode-pty daemon (the client itself arrives with its own issue; today it exports the generated protocol types). */

export * from "./generated/protocol.js";

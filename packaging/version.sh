#!/usr/bin/env bash
# Prints the release's version: the workspace's, `version` under `[workspace.package]` in Cargo.toml, the one
# place it is set. The binary reports it (`opencode-pty --version`), the archives and npm platform packages are
# named after it, and client-ts/package.json must hold the same (a test in server/tests/client_ts.rs checks).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
sed -n '/^\[workspace\.package\]/,/^\[/s/^version *= *"\([^"]*\)"/\1/p' Cargo.toml

#!/usr/bin/env bash
# Builds the npm platform package opencode-pty-linux-x64-<version>.tgz from a release archive (packaging/dist.sh):
# bin/opencode-pty and bin/libghostty-vt.so.0 (found through $ORIGIN), the licences and NOTICE. The client
# (opencode-pty-client) finds the binary in it when OPENCODE_PTY_BIN is not set, as esbuild and biome ship
# theirs.
#
#   packaging/npm.sh ARCHIVE [--out DIR]      (DIR defaults to target/dist; the package's path is printed last)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ $# -lt 1 ]; then
    echo "usage: packaging/npm.sh ARCHIVE [--out DIR]" >&2
    exit 2
fi
archive="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
out="target/dist"
if [ "${1:-}" = --out ]; then
    out="$2"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$archive" -C "$work"
unpacked="$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
version="$("$unpacked/opencode-pty" --version | sed -n 's/^opencode-pty \([^ ]*\) .*/\1/p')"
package="$work/package"
mkdir -p "$package/bin"
cp "$unpacked/opencode-pty" "$unpacked/libghostty-vt.so.0" "$package/bin/"
cp "$unpacked/LICENSE" "$unpacked/NOTICE" "$unpacked/LICENSE.ghostty" "$unpacked/LICENSE.apache-2.0" "$package/"
sed "s/\"VERSION\"/\"$version\"/" packaging/npm/package.json > "$package/package.json"
(cd "$package" && npm pack --silent --pack-destination "$out" > /dev/null)
echo "$out/opencode-pty-linux-x64-$version.tgz"

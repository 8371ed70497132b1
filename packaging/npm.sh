#!/usr/bin/env bash
# Builds the npm platform package opencode-pty-linux-<cpu>-<version>.tgz from a release archive (packaging/dist.sh):
# opencode-pty-linux-x64 from an x86_64-unknown-linux-gnu archive, opencode-pty-linux-arm64 from an aarch64 one, with
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
# The folder is opencode-pty-<version>-<target>: the package's version and Node's name for its CPU.
folder="$(basename "$unpacked")"
case "$folder" in
    *-x86_64-unknown-linux-gnu) triple=x86_64-unknown-linux-gnu; cpu=x64; machine="x86-64" ;;
    *-aarch64-unknown-linux-gnu) triple=aarch64-unknown-linux-gnu; cpu=arm64; machine="arm64" ;;
    *) echo "$1 holds $folder, not opencode-pty-<version>-<x86_64 or aarch64>-unknown-linux-gnu" >&2; exit 1 ;;
esac
version="${folder#opencode-pty-}"
version="${version%-"$triple"}"
package="$work/package"
mkdir -p "$package/bin"
cp "$unpacked/opencode-pty" "$unpacked/libghostty-vt.so.0" "$package/bin/"
cp "$unpacked/LICENSE" "$unpacked/NOTICE" "$unpacked/LICENSE.ghostty" "$unpacked/LICENSE.apache-2.0" "$package/"
sed -e "s/\"VERSION\"/\"$version\"/" -e "s/CPU/$cpu/g" -e "s/MACHINE/$machine/" packaging/npm/package.json \
    > "$package/package.json"
(cd "$package" && npm pack --silent --pack-destination "$out" > /dev/null)
echo "$out/opencode-pty-linux-$cpu-$version.tgz"

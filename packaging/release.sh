#!/usr/bin/env bash
# Builds everything a release publishes, for each platform asked for: the archive (packaging/dist.sh), its
# sha256 (`sha256sum` format, beside it as ARCHIVE.sha256) and the npm platform package (packaging/npm.sh); then
# the client's npm package (`npm pack` in client-ts/). The release's one version is the workspace's
# (Cargo.toml, `[workspace.package] version`): the binary reports it, the archives and platform packages are
# named after it, and the client's package.json must say the same (and ask for the platform packages at it).
#
#   packaging/release.sh [--target TRIPLE]... [--binary PATH] [--out DIR]
#
# Without --target, this machine's x86_64-unknown-linux-gnu; --binary packs a binary already built (one target
# only), as the tests do. Everything goes to DIR (default target/dist); the paths made are printed, one a line.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

targets=()
binary=""
out="target/dist"
while [ $# -gt 0 ]; do
    case "$1" in
        --target) targets+=("$2"); shift 2 ;;
        --binary) binary="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "usage: packaging/release.sh [--target TRIPLE]... [--binary PATH] [--out DIR]" >&2; exit 2 ;;
    esac
done
if [ -n "$binary" ] && [ "${#targets[@]}" -gt 1 ]; then
    echo "--binary packs one binary: give at most one --target with it" >&2
    exit 2
fi

version="$(bash packaging/version.sh)"
client="$(node -p 'const p = require("./client-ts/package.json"); [p.version, ...Object.values(p.optionalDependencies ?? {})].join(" ")')"
for found in $client; do
    if [ "$found" != "$version" ]; then
        echo "client-ts/package.json says $found where the workspace (Cargo.toml) says $version" >&2
        exit 1
    fi
done

mkdir -p "$out"
out="$(cd "$out" && pwd)"
made=()
for target in "${targets[@]:-}"; do
    args=(--out "$out")
    [ -n "$target" ] && args+=(--target "$target")
    [ -n "$binary" ] && args+=(--binary "$binary")
    archive="$(bash packaging/dist.sh "${args[@]}" | tail -n 1)"
    case "$(basename "$archive")" in
        "opencode-pty-$version-"*) ;;
        *) echo "$archive is not of version $version (the workspace's): an older binary?" >&2; exit 1 ;;
    esac
    (cd "$(dirname "$archive")" && sha256sum "$(basename "$archive")" > "$(basename "$archive").sha256")
    package="$(bash packaging/npm.sh "$archive" --out "$out" | tail -n 1)"
    made+=("$archive" "$archive.sha256" "$package")
done

# The client, built by its prepack script; its dev dependencies installed first when they are missing or older
# than the lockfile (an install already there is left alone: tests may be using it).
installed=client-ts/node_modules/.package-lock.json
if ! [ -e "$installed" ] || [ client-ts/package-lock.json -nt "$installed" ]; then
    (cd client-ts && npm ci --no-audit --no-fund > /dev/null)
fi
tarball="$(cd client-ts && npm pack --silent --pack-destination "$out" | tail -n 1)"
made+=("$out/$tarball")
printf '%s\n' "${made[@]}"

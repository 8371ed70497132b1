#!/usr/bin/env bash
# Builds the release archive opencode-pty-<version>-x86_64-unknown-linux-gnu.tar.gz: the binary, stripped, with
# libghostty-vt.so.0 beside it (the binary finds it through its run path, `$ORIGIN` alone, so the archive works
# wherever it is unpacked, with no build tree), its debug info in opencode-pty.debug, LICENSE, NOTICE and the
# licence texts NOTICE names.
#
#   packaging/dist.sh [--binary PATH] [--out DIR]
#
# Without --binary it builds the release binary first (`cargo build --release -p opencode-pty`). The archive
# goes to DIR (default target/dist); its path is printed last.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

binary=""
out="target/dist"
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "usage: packaging/dist.sh [--binary PATH] [--out DIR]" >&2; exit 2 ;;
    esac
done

if [ -z "$binary" ]; then
    cargo build --release --locked -p opencode-pty
    binary="target/release/opencode-pty"
fi
# The library the binary was linked against: the one its build found (the run path after $ORIGIN).
libdir="$(readelf -d "$binary" | sed -n 's/.*R[UN]*PATH.*\[\$ORIGIN:\(.*\)\]/\1/p' | head -n 1)"
if [ -z "$libdir" ] || [ ! -f "$libdir/libghostty-vt.so" ]; then
    echo "cannot find the libghostty-vt $binary was built with (run path: ${libdir:-none})" >&2
    exit 1
fi
version="$("$binary" --version | sed -n 's/^opencode-pty \([^ ]*\) .*/\1/p')"
name="opencode-pty-${version}-x86_64-unknown-linux-gnu"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stage="$work/$name"
mkdir -p "$stage"
cp "$binary" "$stage/opencode-pty"
# Shipped stripped, with its debug info in opencode-pty.debug beside it (found through its .gnu_debuglink, by
# gdb and friends), and a run path of `$ORIGIN` alone: nothing of the build folder.
objcopy --only-keep-debug "$stage/opencode-pty" "$stage/opencode-pty.debug"
chmod 644 "$stage/opencode-pty.debug"
strip --strip-all "$stage/opencode-pty"
(cd "$stage" && objcopy --add-gnu-debuglink=opencode-pty.debug opencode-pty)
python3 packaging/runpath.py "$stage/opencode-pty"
# A real file under the name the binary asks for (SONAME), not a link into the build tree.
cp "$libdir/libghostty-vt.so" "$stage/libghostty-vt.so.0"
cp LICENSE "$stage/LICENSE"
cp "$libdir/LICENSE.ghostty" "$stage/LICENSE.ghostty"
cp "$libdir/LICENSE" "$stage/LICENSE.apache-2.0"
revision="$(cat "$libdir/GHOSTTY_REVISION")"
sed "s/GHOSTTY_REVISION_HERE/$revision/" packaging/NOTICE > "$stage/NOTICE"
cp packaging/install.sh "$stage/install.sh"

mkdir -p "$out"
archive="$(cd "$out" && pwd)/$name.tar.gz"
tar -C "$work" -czf "$archive" "$name"
echo "$archive"

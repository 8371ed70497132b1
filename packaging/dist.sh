#!/usr/bin/env bash
# Builds the release archive opencode-pty-<version>-<target>.tar.gz (x86_64- or aarch64-unknown-linux-gnu): the
# binary, stripped, with libghostty-vt.so.0 beside it (the binary finds it through its run path, `$ORIGIN` alone, so the archive works
# wherever it is unpacked, with no build tree), its debug info in opencode-pty.debug, LICENSE, NOTICE and the
# licence texts NOTICE names.
#
#   packaging/dist.sh [--target TRIPLE] [--binary PATH] [--out DIR]
#
# Without --binary it builds the release binary first (`cargo build --release -p opencode-pty`, with `--target
# TRIPLE` when one is given: aarch64-unknown-linux-gnu is cross-built with Debian's gcc-aarch64-linux-gnu, see
# .cargo/config.toml). The target is read from the binary itself; a binary for another architecture than this
# machine's is stripped with that architecture's binutils (aarch64-linux-gnu-objcopy) and asked its version
# under qemu-user. The archive goes to DIR (default target/dist); its path is printed last.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

binary=""
target=""
out="target/dist"
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --target) target="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "usage: packaging/dist.sh [--target TRIPLE] [--binary PATH] [--out DIR]" >&2; exit 2 ;;
    esac
done

if [ -z "$binary" ]; then
    if [ -n "$target" ]; then
        cargo build --release --locked --target "$target" -p opencode-pty
        binary="target/$target/release/opencode-pty"
    else
        cargo build --release --locked -p opencode-pty
        binary="target/release/opencode-pty"
    fi
fi
# The target the binary was built for, from its ELF header, and the tools that handle it on this machine.
case "$(readelf -h "$binary" | sed -n 's/^ *Machine: *//p')" in
    "Advanced Micro Devices X86-64") arch=x86_64 ;;
    AArch64) arch=aarch64 ;;
    *) echo "$binary is no x86-64 or AArch64 Linux binary" >&2; exit 1 ;;
esac
triple="$arch-unknown-linux-gnu"
if [ -n "$target" ] && [ "$target" != "$triple" ]; then
    echo "$binary is built for $triple, not --target $target" >&2
    exit 1
fi
if [ "$arch" = "$(uname -m)" ]; then
    tools=""
    run=()
else
    tools="$arch-linux-gnu-"
    run=("qemu-$arch" -L "/usr/$arch-linux-gnu")
fi
# The library the binary was linked against: the one its build found (the run path after $ORIGIN).
libdir="$(readelf -d "$binary" | sed -n 's/.*R[UN]*PATH.*\[\$ORIGIN:\(.*\)\]/\1/p' | head -n 1)"
if [ -z "$libdir" ] || [ ! -f "$libdir/libghostty-vt.so" ]; then
    echo "cannot find the libghostty-vt $binary was built with (run path: ${libdir:-none})" >&2
    exit 1
fi
version="$("${run[@]}" "$binary" --version | sed -n 's/^opencode-pty \([^ ]*\) .*/\1/p')"
name="opencode-pty-${version}-${triple}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stage="$work/$name"
mkdir -p "$stage"
cp "$binary" "$stage/opencode-pty"
# Shipped stripped, with its debug info in opencode-pty.debug beside it (found through its .gnu_debuglink, by
# gdb and friends), and a run path of `$ORIGIN` alone: nothing of the build folder.
"${tools}objcopy" --only-keep-debug "$stage/opencode-pty" "$stage/opencode-pty.debug"
chmod 644 "$stage/opencode-pty.debug"
"${tools}strip" --strip-all "$stage/opencode-pty"
(cd "$stage" && "${tools}objcopy" --add-gnu-debuglink=opencode-pty.debug opencode-pty)
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

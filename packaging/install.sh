#!/usr/bin/env bash
# Installs an unpacked opencode-pty archive (the folder this script is in) under PREFIX:
# PREFIX/lib/opencode-pty/ holds the binary, its debug info, libghostty-vt.so.0 and the licences; PREFIX/bin/opencode-pty starts
# it. Run from the archive (`./install.sh ~/.local`) or through `just install PREFIX`.
#
#   install.sh PREFIX
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: install.sh PREFIX   (for example ~/.local or /usr/local)" >&2
    exit 2
fi
prefix="$1"
from="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for file in opencode-pty libghostty-vt.so.0 LICENSE NOTICE; do
    if [ ! -f "$from/$file" ]; then
        echo "$from is not an unpacked opencode-pty archive (no $file)" >&2
        exit 1
    fi
done

lib="$prefix/lib/opencode-pty"
mkdir -p "$lib" "$prefix/bin"
for file in opencode-pty libghostty-vt.so.0 LICENSE NOTICE LICENSE.ghostty LICENSE.apache-2.0; do
    install -m "$([ "$file" = opencode-pty ] && echo 755 || echo 644)" "$from/$file" "$lib/$file"
done
# The binary's debug info, for a debugger (it finds it beside the binary through its .gnu_debuglink).
if [ -f "$from/opencode-pty.debug" ]; then
    install -m 644 "$from/opencode-pty.debug" "$lib/opencode-pty.debug"
fi
# A link would leave $ORIGIN where the link is; a two-line starter keeps the library beside the binary.
starter="$prefix/bin/opencode-pty"
printf '#!/bin/sh\nexec "%s/opencode-pty" "$@"\n' "$lib" > "$starter"
chmod 755 "$starter"
echo "installed $starter (runs $lib/opencode-pty)"

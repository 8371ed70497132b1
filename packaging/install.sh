#!/usr/bin/env bash
# Installs an unpacked opencode-pty archive (the folder this script is in) under PREFIX:
# PREFIX/lib/opencode-pty/ holds the binary, its debug info, libghostty-vt.so.0 and the licences; PREFIX/bin/opencode-pty starts
# it; the shell completions go to PREFIX/share/bash-completion/completions/opencode-pty,
# PREFIX/share/zsh/site-functions/_opencode-pty and PREFIX/share/fish/vendor_completions.d/opencode-pty.fish, the
# man pages to PREFIX/share/man/man1/. Run from the archive (`./install.sh ~/.local`) or through `just install PREFIX`.
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
# Completions and man pages where bash-completion, zsh's fpath, fish and man look under a prefix (an archive
# made before they were shipped has none).
share="$prefix/share"
install_to() {
    if [ -f "$from/$1" ]; then
        mkdir -p "$(dirname "$2")"
        install -m 644 "$from/$1" "$2"
    fi
}
install_to completions/opencode-pty.bash "$share/bash-completion/completions/opencode-pty"
install_to completions/_opencode-pty "$share/zsh/site-functions/_opencode-pty"
install_to completions/opencode-pty.fish "$share/fish/vendor_completions.d/opencode-pty.fish"
for page in "$from"/man/*.1; do
    if [ -f "$page" ]; then
        install_to "man/$(basename "$page")" "$share/man/man1/$(basename "$page")"
    fi
done
echo "installed $starter (runs $lib/opencode-pty)"

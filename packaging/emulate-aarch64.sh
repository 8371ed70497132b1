#!/bin/sh
# Runs an aarch64 Linux program (the cross-built daemon) on an x86-64 machine under qemu-user, as if the machine
# were arm64:
#
#   packaging/emulate-aarch64.sh PROGRAM [ARGS...]
#
# The daemon executes itself again (its guardian, `/proc/self/exe guard`, and an in-place upgrade, `fexecve`), and
# qemu-user alone cannot do that: the kernel refuses an aarch64 file (ENOEXEC). So the program runs in a user and
# mount namespace of its own in which the kernel hands every aarch64 ELF file to qemu-aarch64 (binfmt_misc; a
# namespace's own registrations need Linux 6.7 or later); the machine's own binfmt_misc is left alone. In the
# registration, `O` lets qemu run a file executed through a descriptor (the upgrade's `fexecve`), `P` keeps the
# program's argv[0], `F` opens qemu now; the libraries come from QEMU_LD_PREFIX (Debian's libc6-arm64-cross by
# default), which every process in the namespace inherits. x86-64 programs the daemon starts (shells) run natively.
#
# The program keeps this script's pid (`unshare` without --fork, then `exec`), so a launcher waiting for a
# registration naming that pid finds it. Needs Debian's qemu-user (qemu-aarch64), libc6-arm64-cross, util-linux's
# unshare, and permission to create a user namespace (root, or unprivileged user namespaces). QEMU_AARCH64 names
# another qemu-aarch64.
set -eu

if [ $# -lt 1 ]; then
    echo "usage: packaging/emulate-aarch64.sh PROGRAM [ARGS...]" >&2
    exit 2
fi
qemu="${QEMU_AARCH64:-$(command -v qemu-aarch64 || true)}"
if [ -z "$qemu" ] || [ ! -x "$qemu" ]; then
    echo "emulate-aarch64: qemu-aarch64 is missing (Debian: apt-get install qemu-user)" >&2
    exit 127
fi
QEMU_LD_PREFIX="${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}"
export QEMU_LD_PREFIX
if [ ! -e "$QEMU_LD_PREFIX/lib/ld-linux-aarch64.so.1" ]; then
    echo "emulate-aarch64: no aarch64 C library in $QEMU_LD_PREFIX (Debian: apt-get install libc6-arm64-cross)" >&2
    exit 127
fi

# ELF, 64-bit, little-endian, version 1, any OS ABI; e_type EXEC or DYN (the mask's 0xfe); e_machine 183 (AArch64).
magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
registration=":opencode-pty-aarch64:M::$magic:$mask:$qemu:POF"

# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --user --map-root-user --mount --propagation private /bin/sh -c '
    set -eu
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    printf "%s" "$1" > /proc/sys/fs/binfmt_misc/register
    shift
    exec "$@"
' emulate-aarch64 "$registration" "$@"

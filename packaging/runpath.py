#!/usr/bin/env python3
"""Shortens a binary's run path to `$ORIGIN`, in place: the build gives it `$ORIGIN:<build folder>` (so that it
runs from target/), and what is shipped must name no folder of the machine that built it.

    packaging/runpath.py BINARY

The run path's text in the dynamic string table is overwritten with `$ORIGIN` and padded with NUL bytes, so
nothing moves in the file (the way chrpath shortens one). Fails unless that text is there exactly once."""

import os
import re
import subprocess
import sys

ORIGIN = b"$ORIGIN"


def run_path(binary):
    """The run path readelf reports (RUNPATH or RPATH), or None."""
    dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    found = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", dynamic)
    return found.group(1).encode() if found else None


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: packaging/runpath.py BINARY")
    binary = sys.argv[1]
    current = run_path(binary)
    if current is None:
        sys.exit(f"{binary} has no run path")
    if current == ORIGIN:
        return
    if not current.startswith(ORIGIN + b":"):
        sys.exit(f"{binary}'s run path does not start with $ORIGIN: {current.decode()}")
    with open(binary, "rb") as file:
        data = file.read()
    needle = b"\0" + current + b"\0"
    if data.count(needle) != 1:
        sys.exit(f"{binary}: the run path's text is there {data.count(needle)} times, not once")
    shortened = b"\0" + ORIGIN + b"\0" * (len(current) - len(ORIGIN)) + b"\0"
    temporary = binary + ".runpath"
    with open(temporary, "wb") as file:
        file.write(data.replace(needle, shortened))
    os.chmod(temporary, os.stat(binary).st_mode)
    os.replace(temporary, binary)
    if run_path(binary) != ORIGIN:
        sys.exit(f"{binary}: the run path is {run_path(binary)!r} after shortening")


if __name__ == "__main__":
    main()

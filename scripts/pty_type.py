#!/usr/bin/env python3
"""Runs a program in a pseudo-terminal, types keys into it, and prints everything it wrote.

usage: pty_type.py KEYS GAP_SECONDS SETTLE_SECONDS -- PROGRAM [ARGS...]
Each character of KEYS is typed GAP_SECONDS apart; after SETTLE_SECONDS, Enter is typed and
the program's whole output (what a terminal would have shown) is printed.
Used by the `weather search -i` test to type faster than the server answers.
"""
import os
import pty
import select
import sys
import time


def main():
    keys, gap, settle = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    program = sys.argv[sys.argv.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(program[0], program)
    output = bytearray()

    def drain(seconds):
        end = time.time() + seconds
        while time.time() < end:
            ready, _, _ = select.select([fd], [], [], max(0.0, end - time.time()))
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                output.extend(chunk)

    drain(0.5)
    for key in keys:
        os.write(fd, key.encode())
        drain(gap)
    drain(settle)
    os.write(fd, b"\r")
    drain(3)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    sys.stdout.write(output.decode("utf-8", "replace"))


if __name__ == "__main__":
    main()

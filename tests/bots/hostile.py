"""Hostile bots for the tests: each attacks the machine's resources one way, then plays
``random`` (so its matches go on while what it started lives).

``cmd:{python} tests/bots/hostile.py MODE`` as a ladder or tournament bot, MODE one of:

* ``bomb``: threads, then processes, until the kernel refuses one; keeps them all;
* ``tmpfs``: fills its /tmp and /dev/shm with files until they are full; keeps them;
* ``balloon``: allocates and touches memory, 64 MiB at a time, without end;
* ``burn``: four processes spinning on the CPU for as long as it lives;
* ``flood``: prints to its stdout without end.

Each says what it got on stderr (its log) as ``HOSTILE <mode> ...``.
"""

from __future__ import annotations

import os
import sys
import threading
import time


def say(text: str) -> None:
    print(f"HOSTILE {text}", file=sys.stderr, flush=True)


def bomb() -> None:
    threads = forks = 0
    try:
        while threads < 100_000:
            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
            threads += 1
    except RuntimeError:
        pass
    try:
        while forks < 100_000:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
            forks += 1
    except OSError:
        pass
    say(f"bomb threads={threads} forks={forks}")


def tmpfs() -> None:
    written = 0
    for folder in ("/tmp", "/dev/shm"):
        try:
            while written < 64 * 1024**3:
                with open(f"{folder}/fill-{written}", "wb") as out:
                    for _ in range(16):
                        out.write(b"x" * 1024**2)
                        written += 1024**2
        except OSError as exc:
            say(f"tmpfs {folder} full after {written // 1024**2} MiB ({exc.strerror})")


def balloon() -> None:
    held = []
    while True:
        chunk = bytearray(64 * 1024**2)
        for offset in range(0, len(chunk), 4096):
            chunk[offset] = 1
        held.append(chunk)
        if len(held) % 8 == 0:
            say(f"balloon {len(held) * 64} MiB")


def burn() -> None:
    for _ in range(4):
        if os.fork() == 0:
            while True:
                pass
    say("burn 4 spinning processes")


def flood() -> None:
    line = b"flood " * 20 + b"\n"
    while True:
        os.write(1, line * 1000)


MODES = {"bomb": bomb, "tmpfs": tmpfs, "balloon": balloon, "burn": burn, "flood": flood}


def main() -> None:
    mode = sys.argv[1]
    MODES[mode]()
    # then play: the seat's CIRULLA_* variables are in the environment
    os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random"])


if __name__ == "__main__":
    main()

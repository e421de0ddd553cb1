"""A hostile bot for the tests: it floods the way it reaches the match server with
connections, holds every one half-open (a partial HTTP/2 preface, then silence), keeps
trying for more while it lives, and plays ``random`` meanwhile: it connects to play first,
then floods (``--delay`` seconds after its own connection opened), so its matches go on
and the flood lasts as long as its seat does.

Run as a ladder or tournament ``cmd:`` bot (``cmd:{python} tests/programs/relay_flood.py``),
with CIRULLA_SERVER etc. set by the runner, or by hand:
``python tests/programs/relay_flood.py --no-play --connections 500``.

* ``--connections N`` (default 400): how many connections it tries to hold at once;
* ``--no-play``: only flood (at once, until killed), do not play;
* ``--delay S`` (default 0.5): seconds between its own connection and the flood;
* at every change, and every second, it writes ``FLOOD {"held": ..., "opened": ...,
  "failed": ...}`` on stderr (its log): how many connections it holds, opened in all, and
  attempts that failed; ``--report FILE`` rewrites FILE with the same JSON too.

Against the old relay (one thread per connection, no limit, an accept loop that died on
its first error) 309 such connections exhausted the ladder's open files and threads.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

#: What it sends on each connection: the start of the HTTP/2 preface, never finished.
PARTIAL_PREFACE = b"PRI * HTTP/2.0\r\n"


def address() -> tuple[int, str | tuple[str, int]]:
    """The match server as this process was told to dial it (CIRULLA_SERVER)."""
    target = os.environ.get("CIRULLA_SERVER", "")
    if target.startswith("unix:"):
        return socket.AF_UNIX, target.removeprefix("unix:")
    host, _, port = target.rpartition(":")
    return socket.AF_INET, (host.strip("[]") or "127.0.0.1", int(port or 0))


def sockets() -> int:
    """How many sockets this process holds (its gRPC channel's, before the flood)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            continue
    return count


def wait_for_own_connection(timeout: float) -> None:
    """Until the bot's own connection to the match server is open (or ``timeout``): a
    slow start under load must not let the flood take every slot of its own endpoint."""
    deadline = time.monotonic() + timeout
    while sockets() == 0 and time.monotonic() < deadline:
        time.sleep(0.1)


class Flood:
    """Opens connections until it holds ``wanted``, and keeps trying while it lives."""

    def __init__(self, wanted: int, report: Path | None, delay: float = 0.0) -> None:
        self.wanted = wanted
        self.delay = delay
        self.report = report
        self.held: list[socket.socket] = []
        self.opened = 0
        self.failed = 0
        self.last_error = ""

    def one(self) -> None:
        family, where = address()
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(0.5)  # a full backlog must not hang the flood
        try:
            sock.connect(where)
            sock.sendall(PARTIAL_PREFACE)
        except OSError as exc:
            sock.close()
            self.failed += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            time.sleep(0.01)
            return
        self.held.append(sock)
        self.opened += 1

    def run(self) -> None:
        if self.delay:
            wait_for_own_connection(30.0)
            time.sleep(self.delay)
        written, shown = 0.0, -1
        while True:
            if len(self.held) < self.wanted:
                self.one()
            else:
                time.sleep(0.05)
            # every change of what it holds (a match may be over in a second), and each second
            if len(self.held) != shown or time.monotonic() - written > 1.0:
                self.write()
                written, shown = time.monotonic(), len(self.held)

    def write(self) -> None:
        """Its state on stderr (the bot's log, sandboxed or not), and in ``--report``."""
        state = {
            "held": len(self.held),
            "opened": self.opened,
            "failed": self.failed,
            "last_error": self.last_error,
        }
        print("FLOOD", json.dumps(state), file=sys.stderr, flush=True)
        if self.report is not None:
            temp = self.report.with_name(self.report.name + ".tmp")
            temp.write_text(json.dumps(state))
            temp.replace(self.report)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=400)
    parser.add_argument("--no-play", action="store_true")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--delay", type=float, default=0.5)
    args = parser.parse_args()
    # playing, it connects first; the flood then takes everything else it can get
    flood = Flood(args.connections, args.report, 0.0 if args.no_play else args.delay)
    thread = threading.Thread(target=flood.run, name="flood", daemon=True)
    thread.start()
    if args.no_play:
        thread.join()
        return 0
    from cirulla.cli import main as cirulla

    code = cirulla(["bot", "random"])
    # A fast game can end before the flood has filled its endpoint: the process lingers
    # (at most 3 s) until the flood has stopped growing, so its bound is always met and
    # reported, whatever the machine's speed.
    deadline = time.monotonic() + 3.0
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        if len(flood.held) != last:
            last, since = len(flood.held), time.monotonic()
        elif last > 0 and time.monotonic() - since > 0.5:
            break
        time.sleep(0.05)
    flood.write()
    return code


if __name__ == "__main__":
    sys.exit(main())

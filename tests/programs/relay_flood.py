"""A hostile bot for the tests: it floods the way it reaches the match server with
connections, holds every one half-open (a partial HTTP/2 preface, then silence), keeps
trying for more while it lives, and plays random moves meanwhile. It floods on its first
turn, when its own connection is certainly open, and answers that turn only once the flood
has reached its wall (no connection gained for half a second, attempts failing), so the
rest of each of its matches is played under a flood at its bound, whatever the machine's
speed; the flood lasts as long as its seat does.

Run as a ladder or tournament ``cmd:`` bot (``cmd:{python} tests/programs/relay_flood.py``),
with CIRULLA_SERVER etc. set by the runner, or by hand:
``python tests/programs/relay_flood.py --no-play --connections 500``.

* ``--connections N`` (default 400): how many connections it tries to hold at once;
* ``--no-play``: only flood (at once, until killed), do not play;
* at every change, every second and every turn, it writes ``FLOOD {"held": ...,
  "opened": ..., "failed": ..., "turns": ...}`` on stderr (its log): how many connections
  it holds, opened in all, attempts that failed, and the turns it has been asked to play
  (a line of held connections with ``turns`` 2 or more: its match went on under the
  flood); ``--report FILE`` rewrites FILE with the same JSON too.

Against the old relay (one thread per connection, no limit, an accept loop that died on
its first error) 309 such connections exhausted the ladder's open files and threads.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sys
import threading
import time
from collections.abc import Sequence
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


class Flood:
    """Opens connections until it holds ``wanted``, and keeps trying while it lives."""

    def __init__(self, wanted: int, report: Path | None) -> None:
        self.wanted = wanted
        self.report = report
        self.held: list[socket.socket] = []
        self.opened = 0
        self.failed = 0
        self.last_error = ""
        self.turns = 0
        self.lock = threading.Lock()  # the flood's thread and the player's both write

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
        written, shown = 0.0, -1
        while True:
            if len(self.held) < self.wanted:
                self.one()
            else:
                time.sleep(0.05)
            # every change of what it holds, and each second
            if len(self.held) != shown or time.monotonic() - written > 1.0:
                self.write()
                written, shown = time.monotonic(), len(self.held)

    def at_wall(self, timeout: float) -> None:
        """Until the flood holds all it wants, or has gained no connection for half a
        second while its attempts fail (the relay's bound and its backlog are full), or
        ``timeout``."""
        deadline = time.monotonic() + timeout
        last, since = -1, time.monotonic()
        while time.monotonic() < deadline and len(self.held) < self.wanted:
            if len(self.held) != last:
                last, since = len(self.held), time.monotonic()
            elif last > 0 and self.failed > 0 and time.monotonic() - since > 0.5:
                return
            time.sleep(0.02)

    def write(self) -> None:
        """Its state on stderr (the bot's log, sandboxed or not), and in ``--report``."""
        state = {
            "held": len(self.held),
            "opened": self.opened,
            "failed": self.failed,
            "last_error": self.last_error,
            "turns": self.turns,
        }
        with self.lock:
            sys.stderr.write(f"FLOOD {json.dumps(state)}\n")
            sys.stderr.flush()
            if self.report is not None:
                temp = self.report.with_name(self.report.name + ".tmp")
                temp.write_text(json.dumps(state))
                temp.replace(self.report)


class FloodingPlayer:
    """The bot's policy: random moves; on its first turn it starts the flood and answers
    once the flood is at its wall (at most 5 s: well inside a 10 s move clock)."""

    name = "relay-flood"

    def __init__(self, flood: Flood) -> None:
        self.flood = flood
        self.random = random.Random()

    def choose(self, view: object, legal: Sequence[object], time_left: float | None) -> int:
        self.flood.turns += 1
        if self.flood.turns == 1:
            threading.Thread(target=self.flood.run, name="flood", daemon=True).start()
            self.flood.at_wall(5.0)
        self.flood.write()
        return self.random.randrange(len(legal))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=400)
    parser.add_argument("--no-play", action="store_true")
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    flood = Flood(args.connections, args.report)
    if args.no_play:
        flood.run()
        return 0
    from cirulla.bots.kit import BotError, run_bot

    try:
        run_bot(FloodingPlayer(flood))
    except BotError as exc:
        print(f"relay_flood: {exc}", file=sys.stderr, flush=True)
        return 1
    flood.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())

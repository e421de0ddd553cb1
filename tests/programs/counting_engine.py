"""A text-protocol engine for the tests (docs/text-protocol.md) that plays the first legal
action and can misbehave on purpose:

* ``--starts FILE``: append one line to FILE at every start (how often it was started);
* ``--crash-once FILE --crash-at N``: exit with code 3 at its N-th genmove, unless FILE
  exists (it is created first): the first process crashes mid-game, later ones do not;
* ``--garbage``: answer every genmove with the same text that is no action;
* ``--slow-start S``: sleep S seconds before answering anything.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

COMMANDS = [
    *("protocol_version", "name", "version", "known_command", "list_commands", "quit"),
    *("rules", "newgame", "event", "hand", "state", "genmove"),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=Path)
    parser.add_argument("--crash-once", type=Path)
    parser.add_argument("--crash-at", type=int, default=3)
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--slow-start", type=float, default=0.0)
    args = parser.parse_args()
    if args.starts is not None:
        with args.starts.open("a") as f:
            f.write("started\n")
    time.sleep(args.slow_start)
    moves = 0

    def answer(ident: str, text: str = "") -> None:
        sys.stdout.write(f"={ident} {text}".rstrip() + "\n\n")
        sys.stdout.flush()

    for line in sys.stdin:
        ident, _, rest = line.strip().partition(" ")
        command, _, arguments = rest.partition(" ")
        if command == "protocol_version":
            answer(ident, "1")
        elif command == "name":
            answer(ident, "counting")
        elif command == "version":
            answer(ident, "1.0")
        elif command == "list_commands":
            answer(ident, "\n".join(COMMANDS))
        elif command == "known_command":
            answer(ident, "true" if arguments in COMMANDS else "false")
        elif command == "genmove":
            moves += 1
            crash = args.crash_once is not None and moves == args.crash_at
            if crash and not args.crash_once.exists():
                args.crash_once.write_text("crashed\n")
                print("counting: crashing on purpose", file=sys.stderr, flush=True)
                return 3
            answer(ident, "pass" if args.garbage else "0")
        elif command == "quit":
            answer(ident)
            return 0
        elif command in COMMANDS:
            answer(ident)
        else:
            sys.stdout.write(f"?{ident} unknown command\n\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

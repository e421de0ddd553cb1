"""The ``cirulla`` command. Each area registers its own subcommands, so this file only
lists the areas; ``cirulla bench`` collects benchmarks from every area the same way.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from cirulla import PROTOCOL_VERSION, __version__
from cirulla.rules.core import CORE

# Modules exposing ``register(commands, bench)``: ``commands`` is the top-level subparsers
# object, ``bench`` the subparsers of ``cirulla bench``. Each sets ``func`` on its parsers.
AREAS = (
    "cirulla.rules.cli",
    "cirulla.bots.cli",
    "cirulla.clients.cli",
    "cirulla.clients.ladder.cli",
    "cirulla.server.cli",
    "cirulla.clients.play.cli",
    "cirulla.env.cli",
)

#: The area that registers each top-level command: ``cirulla COMMAND`` imports that area
#: alone (together the areas pull in gRPC, the bots, the runner and the benchmarks: about
#: 0.3 s that every server, runner and per-game bot would pay at start). ``bench``, help
#: and unknown words get every area. tests/test_cli_dispatch.py checks this table against
#: what the areas register.
COMMAND_AREAS = {
    "rules": "cirulla.rules.cli",
    "bot": "cirulla.bots.cli",
    "match": "cirulla.bots.cli",
    "engine": "cirulla.bots.cli",
    "tournament": "cirulla.clients.cli",
    "ladder": "cirulla.clients.ladder.cli",
    "server": "cirulla.server.cli",
    "replay": "cirulla.server.cli",
    "play": "cirulla.clients.play.cli",
    "watch": "cirulla.clients.play.cli",
}

DESCRIPTION = """\
Cirulla (Genoese scopa) match server, bots and tournaments.

Start here:
  cirulla play --vs greedy           play a game against a bot in the terminal
  cirulla tournament                 run a small bot tournament on a local server
  cirulla rules options              every rule option, its default and the presets
  cirulla server                     run the match server (gRPC, 127.0.0.1:50051)
  cirulla bot random --help          play one seat of a match with a built-in bot
  cirulla ladder --help              continuous rated matches between registered bots

Every subcommand has --help.
"""


def areas_for(words: Sequence[str]) -> tuple[str, ...]:
    """The areas a command line needs: its command's alone when it names one."""
    command = next((w for w in words if not w.startswith("-")), None)
    area = COMMAND_AREAS.get(command or "")
    return (area,) if area is not None else AREAS


def build_parser(areas: Sequence[str] = AREAS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cirulla",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"cirulla {__version__} ({PROTOCOL_VERSION}, core: {CORE})",
        help="show the version, the protocol and which rules core runs (native or python)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    bench_parser = commands.add_parser(
        "bench",
        help="benchmarks that print JSON "
        "(rules, mcts, strength, server, soak, tournament, ladder, pool, env)",
        description="Benchmarks. Each prints one JSON object on stdout.",
    )
    bench = bench_parser.add_subparsers(dest="bench", metavar="BENCHMARK", required=True)
    for area in areas:
        importlib.import_module(area).register(commands, bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(areas_for(words))
    # Everything after "--" is a command line (`cirulla bot text -- CMD ARGS`): argparse
    # cannot give it to a positional that follows optional arguments, so it is cut here
    # and handed to the subcommand as `args.command_line`.
    tail: list[str] | None = None
    if "--" in words:
        cut = words.index("--")
        words, tail = words[:cut], words[cut + 1 :]
    args, extra = parser.parse_known_args(words)
    if extra:
        # argparse fills a trailing list positional (`cirulla bot check [options] SPEC`)
        # before it sees options; words it left over go there, anything else is an error
        if getattr(args, "engine", None) == [] and not any(w.startswith("-") for w in extra):
            args.engine = extra
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if tail is not None:
        if not hasattr(args, "command_line"):
            parser.error(f"unrecognized arguments: -- {' '.join(tail)}")
        args.command_line = tail
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return int(func(args) or 0)
    except ValueError as exc:
        # Bad input that a subcommand did not word itself (an unknown bot kind, preset,
        # rule option...): one line, no traceback.
        name = " ".join(filter(None, (args.command, getattr(args, "bench", None))))
        print(f"cirulla {name}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())

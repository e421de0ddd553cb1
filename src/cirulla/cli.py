"""The ``cirulla`` command. Each area registers its own subcommands, so this file only
lists the areas; ``cirulla bench`` collects benchmarks from every area the same way.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from cirulla.extras import MissingExtraError, extra_of, install_hint, modules_of, require
from cirulla.logs import quiet_grpc
from cirulla.rules.core import CORE
from cirulla.version import PROTOCOL_VERSION, __version__

quiet_grpc()  # before any area imports grpc: its core's INFO lines are not our logs

# Modules exposing ``register(commands, bench)``: ``commands`` is the top-level subparsers
# object, ``bench`` the subparsers of ``cirulla bench``. Each sets ``func`` on its parsers.
AREAS = (
    "cirulla.rules.cli",
    "cirulla.bots.cli",
    "cirulla.clients.tournament.cli",
    "cirulla.ladder.cli",
    "cirulla.server.cli",
    "cirulla.clients.play.cli",
    "cirulla.cli_env",
    "cirulla.bots.train_cli",
)

#: The area that registers each top-level command: ``cirulla COMMAND`` imports that area
#: alone (together the areas pull in gRPC, the bots, the runner and the benchmarks: about
#: 0.3 s that every server, runner and per-game bot would pay at start). ``bench``, help
#: and unknown words get every area. tests/project/test_cli_dispatch.py checks this table against
#: what the areas register.
COMMAND_AREAS = {
    "rules": "cirulla.rules.cli",
    "bot": "cirulla.bots.cli",
    "match": "cirulla.bots.cli",
    "engine": "cirulla.bots.cli",
    "tournament": "cirulla.clients.tournament.cli",
    "ladder": "cirulla.ladder.cli",
    "server": "cirulla.server.cli",
    "replay": "cirulla.server.cli",
    "play": "cirulla.clients.play.cli",
    "watch": "cirulla.clients.play.cli",
    "train": "cirulla.bots.train_cli",
}

#: The extra (pyproject.toml, cirulla.extras) each command needs as a whole, and each
#: benchmark: checked before it runs, so a base install (``pip install cirulla``: rules,
#: bot kit, protocol) says which extra to install instead of failing inside an import.
#: Unlisted commands run on the base install (``play`` checks its own needs: the terminal
#: UI, and the server when it starts one).
COMMAND_EXTRAS = {
    "server": "server",
    "tournament": "tournament",
    "ladder": "ladder",
    "watch": "tui",
    "train": "train",
}
BENCH_EXTRAS = {
    "server": "server",
    "soak": "server",
    "tournament": "tournament",
    "ladder": "ladder",
    "pool": "ladder",
    "env": "env",
    "learned": "env",
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
    """The areas a command line needs: its command's alone when it names one, none for
    ``cirulla --version`` (which prints before any command is parsed: every area's
    imports, the learning environment's NumPy and Gymnasium among them, cost it 0.4 s)."""
    command = next((w for w in words if not w.startswith("-")), None)
    if command is None and "--version" in words and not HELP.intersection(words):
        return ()
    area = COMMAND_AREAS.get(command or "")
    return (area,) if area is not None else AREAS


#: The options that print the whole parser's help (and so need every area).
HELP = frozenset({"-h", "--help"})


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line, as every other refusal of the
    command is: the command, the option and what is wrong, and where the options are
    listed; not the usage block first (eleven lines for ``cirulla tournament``, the
    error lost under it). Subcommand parsers are of the same class (``add_subparsers``
    makes them of its parser's).

    No abbreviated options: argparse took ``cirulla server --port 50999`` for
    ``--port-file 50999``, wrote a file named 50999 and listened on the default port; an
    option that is not spelled out is an error naming it."""

    @property
    def allow_abbrev(self) -> bool:
        return False

    @allow_abbrev.setter
    def allow_abbrev(self, value: bool) -> None:
        """argparse's ``__init__`` sets it (True by default); this parser keeps False."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def subcommand_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The innermost subcommand's parser that ``args`` went through (``cirulla ladder
    standings`` for ``args`` of that command), so its errors name it."""
    while True:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, sub.dest, None) if sub is not None else None
        if sub is None or chosen not in sub.choices:
            return parser
        parser = sub.choices[chosen]


def build_parser(areas: Sequence[str] = AREAS) -> argparse.ArgumentParser:
    parser = Parser(
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
        "(rules, mcts, strength, server, soak, tournament, ladder, pool, env, learned)",
        description="Benchmarks. Each prints one JSON object on stdout.",
    )
    bench = bench_parser.add_subparsers(dest="bench", metavar="BENCHMARK", required=True)
    failed: dict[str, str] = {}  # area -> the extra's library its import lacked
    for area in areas:
        try:
            module = importlib.import_module(area)
        except ImportError as exc:
            # an area whose registration needs an extra's library (it should not: it
            # imports it when it runs) still gets its commands, which name the extra
            top = (exc.name or "").split(".")[0]
            if extra_of(top) is None:
                raise
            failed[area] = top
            continue
        module.register(commands, bench)
    for command, area in COMMAND_AREAS.items():
        if area in failed and command not in commands.choices:
            wanted = COMMAND_EXTRAS.get(command)
            if wanted is None or failed[area] not in modules_of(wanted):
                wanted = extra_of(failed[area])
            _unavailable(commands, command, str(wanted))
    if failed:
        for name, extra in BENCH_EXTRAS.items():
            if name not in bench.choices:
                _unavailable(bench, name, extra)
    return parser


def _unavailable(subparsers: argparse._SubParsersAction[Parser], name: str, extra: str) -> None:
    """``name`` as a command that only says which extra to install (whatever follows it)."""
    hint = f"needs the {extra} extra: {install_hint(extra)}"
    p = subparsers.add_parser(name, help=f"({hint})", description=hint, add_help=False)
    p.set_defaults(missing_extra=extra)


def command_name(args: argparse.Namespace) -> str:
    """``server``, ``bench env``: how messages name the command that runs."""
    return " ".join(filter(None, (args.command, getattr(args, "bench", None))))


def check_extras(args: argparse.Namespace) -> None:
    """Raise MissingExtraError if the command of ``args`` needs an extra not installed."""
    unavailable = getattr(args, "missing_extra", None)
    if unavailable is not None:
        raise MissingExtraError([unavailable])
    if args.command == "bench":
        needed = BENCH_EXTRAS.get(getattr(args, "bench", None) or "")
    else:
        needed = COMMAND_EXTRAS.get(args.command or "")
    if needed is not None:
        require(needed)


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
    try:
        # before the leftover words: `cirulla tournament --bot x` on a base install is
        # about the missing extra, not about --bot
        check_extras(args)
    except MissingExtraError as exc:
        print(f"cirulla {command_name(args)}: {exc}", file=sys.stderr)
        return 2
    if extra:
        # argparse fills a trailing list positional (`cirulla bot check [options] SPEC`)
        # before it sees options; words it left over go there, anything else is an error
        if getattr(args, "engine", None) == [] and not any(w.startswith("-") for w in extra):
            args.engine = extra
        else:
            subcommand_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    if tail is not None:
        if not hasattr(args, "command_line"):
            subcommand_parser(parser, args).error(f"unrecognized arguments: -- {' '.join(tail)}")
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
        print(f"cirulla {command_name(args)}: error: {exc}", file=sys.stderr)
        return 2
    except MissingExtraError as exc:  # a need found as it ran (play's server, a policy)
        print(f"cirulla {command_name(args)}: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        # an extra's library a command imported without checking first: still one line
        owner = extra_of(exc.name)
        if owner is None:
            raise
        print(f"cirulla {command_name(args)}: {MissingExtraError([owner])}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())

"""The bodies of ``cirulla play`` and ``cirulla watch``: the terminal UI (Textual), the
local game and the checks of a match before its screen opens. ``cli`` registers the
commands and loads this module only when one of them runs (the TUI extra's libraries and
gRPC take half a second to import)."""

from __future__ import annotations

import argparse
import sys

from cirulla.clients.play.app import CirullaApp, PlayApp, WatchApp
from cirulla.clients.play.launch import LocalGame
from cirulla.clients.play.preflight import match_problem
from cirulla.rules import CirullaError, parse_overrides


def no_terminal(command: str) -> str:
    """Why ``command``'s screen cannot open here, or "": Textual draws on standard output
    and reads keys from standard input, and with either redirected the screen went to the
    file or pipe and the command waited for keys that never came, until killed."""
    missing = [
        name
        for name, stream in (("input", sys.stdin), ("output", sys.stdout))
        if not (stream and stream.isatty())
    ]
    if not missing:
        return ""
    return (
        f"cirulla {command}: needs a terminal, and standard {' and '.join(missing)} "
        f"{'is' if len(missing) == 1 else 'are'} not one (run it in a terminal window)"
    )


def play(args: argparse.Namespace) -> int:
    joining = [args.server, args.match, args.token]
    if any(joining):
        if not all(joining):
            print("cirulla play: --server, --match and --token go together", file=sys.stderr)
            return 2
        problem = match_problem(args.server, args.match, joining=True, token=args.token)
        if problem:
            print(f"cirulla play: {problem}", file=sys.stderr)
            return 1
        return finished("play", PlayApp(args.server, args.match, args.token, args.name))
    if problem := no_terminal("play"):  # before a server and bots start for nothing
        print(problem, file=sys.stderr)
        return 2
    try:
        overrides = parse_overrides(args.rule)
        if args.players is not None:
            overrides["players"] = args.players
        elif args.vs and "players" not in overrides:
            overrides["players"] = min(4, len(args.vs) + 1)
        # the bots' specs are parsed there (a bad one is a ValueError)
        game = LocalGame(args.vs, args.preset, overrides, seat=args.seat, seed=args.seed)
    except (CirullaError, ValueError) as exc:
        print(f"cirulla play: {exc}", file=sys.stderr)
        return 2
    try:
        with game:
            return finished("play", PlayApp(game.address, game.match_id, game.token, args.name))
    except RuntimeError as exc:
        print(f"cirulla play: {exc}", file=sys.stderr)
        return 1


def finished(command: str, app: CirullaApp) -> int:
    """Run ``app``; an error it showed is repeated on stderr once the screen is gone."""
    if problem := no_terminal(command):
        print(problem, file=sys.stderr)
        return 2
    app.run()
    if app.error_text:
        print(f"cirulla {command}: {app.error_text}", file=sys.stderr)
        return 1
    return 0


def watch(args: argparse.Namespace) -> int:
    problem = match_problem(args.server, args.match)
    if problem:
        print(f"cirulla watch: {problem}", file=sys.stderr)
        return 1
    return finished("watch", WatchApp(args.server, args.match))

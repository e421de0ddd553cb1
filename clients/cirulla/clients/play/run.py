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

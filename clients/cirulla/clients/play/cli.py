"""``cirulla play`` and ``cirulla watch``."""

from __future__ import annotations

import argparse

from cirulla.extras import require
from cirulla.rules.arguments import add_rule_arguments

PLAY_HELP = """\
Play Cirulla in the terminal against the bots.

Without --server, starts a local match server and one bot process per other seat,
and seats you at seat 0:
  cirulla play                          # you against greedy, 2 players
  cirulla play --vs mcts                # against ISMCTS (default 1000 iterations)
  cirulla play --players 4 --vs greedy --vs random --vs greedy   # 2 against 2
  cirulla play --preset genova-home --rule target=21
With --server, --match and --token, takes a seat of an existing match instead
(the token comes from whoever created the match):
  cirulla play --server 127.0.0.1:50051 --match m-1-3fa2b1 --token SECRET

Keys: arrows (or the number keys) and Enter pick a card; a card with one way to play
(it takes nothing, or its line says what it takes) is played at once, otherwise pick
how it captures: the line above the list says what the action takes before you confirm
with Enter; Esc goes back to the cards; q quits (asking first while the game is on).
Declarations (low hand, three of a kind) are choices of their own in the card list.
Your seat plays its default action if it runs out of time.
"""

WATCH_HELP = """\
Follow a live match in the terminal as a spectator: the table, the cards each side
took, scores and a log of every public event. No hand is ever shown (the server sends
spectators public information only). A match that is not there (wrong id, no server
at the address, an aborted match) is one line on stderr and exit status 1.

  cirulla watch m-1-3fa2b1 --server 127.0.0.1:50051
"""


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    bench: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    del bench
    p = commands.add_parser(
        "play",
        help="play against the bots in the terminal",
        description=PLAY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--vs",
        action="append",
        default=[],
        metavar="SPEC",
        help="bot for the next other seat (random, greedy, mcts, mcts:iterations=300, "
        "cmd:...); repeat per seat, the last one fills the rest (default greedy)",
    )
    add_rule_arguments(p)
    p.add_argument("--seat", type=int, default=0, help="your seat (default %(default)s)")
    p.add_argument("--seed", type=int, help="deal seed, to play the same cards again")
    p.add_argument("--name", default="human", help="your name at the table")
    p.add_argument("--server", metavar="HOST:PORT", help="join a match on this server")
    p.add_argument("--match", metavar="ID", help="the match to join (with --server)")
    p.add_argument("--token", metavar="TOKEN", help="your seat token (with --server)")
    p.set_defaults(func=run_play)

    w = commands.add_parser(
        "watch",
        help="follow a live match in the terminal (public information only)",
        description=WATCH_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    w.add_argument("match", metavar="MATCH_ID", help="the match to watch")
    w.add_argument("--server", default="127.0.0.1:50051", help="match server (default %(default)s)")
    w.set_defaults(func=run_watch)


def run_play(args: argparse.Namespace) -> int:
    joining = [args.server, args.match, args.token]
    # the terminal UI (Textual) always; the match server's extra when it starts one
    require(*(("tui",) if any(joining) else ("tui", "server")))
    from cirulla.clients.play import run

    return run.play(args)


def run_watch(args: argparse.Namespace) -> int:
    from cirulla.clients.play import run

    return run.watch(args)

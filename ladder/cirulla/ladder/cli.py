"""``cirulla ladder``: run a ladder, register bots, read the standings and every match.

Every command but ``serve`` is a LadderService client: it finds the ladder of the
current folder in ``cirulla-ladder.json`` (written by ``serve``), or takes ``--server``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cirulla.ladder import bench as ladder_bench
from cirulla.ladder import cli_author, cli_operator, cli_own_bot, cli_serve, pool_bench, worker
from cirulla.ladder.defaults import STATE_FILE

DESCRIPTION = """\
A ladder never stops: bots are registered once, the ladder keeps scheduling rated
matches between them (openskill ratings per queue, duplicate pairs for 2 and 4 players),
and anyone can read the standings and every match. See docs/ladder.md.

Start here:
  cirulla ladder serve &                       the ladder and its match server
  cirulla ladder add random random             register bots (SPEC as in tournament --bot)
  cirulla ladder add greedy greedy
  cirulla ladder add mcts mcts:iterations=200
  cirulla ladder standings                     after a minute or two
  cirulla ladder matches --bot greedy          every match, newest first
  cirulla ladder request greedy mcts --games 4 a series, played before scheduled matches
  cirulla bot text --ladder 127.0.0.1:50061 --bot-name mine -- ./engine   an engine connects in
"""


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    bench: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """The ``ladder`` command: ``serve`` (cli_serve), the operator's commands
    (cli_operator), the author's (cli_author) and ``worker``, in the order ``--help`` lists
    them; then the options every client command shares."""
    p = commands.add_parser(
        "ladder",
        help="continuous rated matches between registered bots (serve, add, standings...)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="ladder_command", metavar="COMMAND", required=True)

    cli_serve.add_serve_parser(sub)
    cli_operator.add_registration_parsers(sub)
    cli_author.add_author_parsers(sub)
    cli_own_bot.add_own_bot_parsers(sub)
    cli_operator.add_state_parsers(sub)
    for parser in sub.choices.values():
        if parser.prog.endswith(" serve"):
            continue
        parser.add_argument(
            "--server",
            metavar="HOST:PORT",
            help=f"the ladder's address (default: from ./{STATE_FILE})",
        )
        parser.add_argument(
            "--admin-token-file",
            type=Path,
            metavar="FILE",
            help="admin token for add/pause/resume/remove (default: the ladder's "
            "--admin-token-file from its state file, or $CIRULLA_ADMIN_TOKEN)",
        )
        parser.add_argument(
            "--tls-ca",
            type=Path,
            metavar="PEM",
            help="connect with TLS, checking the ladder against this CA certificate "
            f"(default: $CIRULLA_TLS_CA, else the certificate named in ./{STATE_FILE} "
            "when the ladder serves TLS; none of them: plaintext)",
        )
    worker.add_parser(sub)
    ladder_bench.register_bench(bench)
    pool_bench.register_bench(bench)

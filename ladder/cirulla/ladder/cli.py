"""``cirulla ladder``: run a ladder, register bots, read the standings and every match.

Every command but ``serve`` is a LadderService client: it finds the ladder of the
current folder in ``cirulla-ladder.json`` (written by ``serve``), or takes ``--server``.

This module builds every ``cirulla ladder`` parser from light modules only; each
subcommand names the function that runs it with ``cirulla.runs.Runs``, imported when it
runs: ``cli_serve`` (``serve``), ``cli_operator`` (``add``, ``cgroup-setup``,
``standings``, ``pause``/``resume``/``remove``), ``cli_author`` (``history``, ``match``,
``matches``, ``h2h``, ``request``, ``requests``), ``cli_own_bot`` (``logs``, ``record``,
``events``, ``rotate-key``) and ``worker``; ``cirulla bench ladder`` and ``bench pool``
(``bench``, ``pool_bench``) the same way. ``cirulla ladder add`` so imports neither the
ladder's server nor the other commands' clients, and ``--help`` none of them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cirulla.ladder.defaults import (
    DEFAULT_DATA,
    DEFAULT_DB,
    DEFAULT_LISTEN,
    LEASE_SECONDS,
    MATCH_STATES,
    QUEUES,
    STATE_FILE,
    WORKER_DATA,
)
from cirulla.ladder.idle import MOST_SECONDS
from cirulla.logs import add_log_level_argument
from cirulla.rules.arguments import add_rule_arguments
from cirulla.runs import Runs

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
    """The ``ladder`` command: ``serve``, the operator's commands, the author's and
    ``worker``, in the order ``--help`` lists them; then the options every client command
    shares."""
    p = commands.add_parser(
        "ladder",
        help="continuous rated matches between registered bots (serve, add, standings...)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="ladder_command", metavar="COMMAND", required=True)

    add_serve_parser(sub)
    add_registration_parsers(sub)
    add_author_parsers(sub)
    add_own_bot_parsers(sub)
    add_state_parsers(sub)
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
    add_worker_parser(sub)
    add_ladder_bench_parser(bench)
    add_pool_bench_parser(bench)


def add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    s = sub.add_parser(
        "serve",
        help="run the ladder: match server, scheduler and workers",
        description="Run the ladder until Ctrl-C or SIGTERM. Writes cirulla-ladder.json in "
        "the current folder so the other ladder commands find it. Safe to kill at any "
        "moment: a restart recovers (docs/ladder.md, 'Durability').",
    )
    s.add_argument(
        "--db",
        default=DEFAULT_DB,
        help="ladder database: a SQLite file or postgresql://USER@HOST:PORT/NAME "
        "(default %(default)s)",
    )
    s.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help="address of the match server and LadderService; port 0 picks one "
        "(default %(default)s)",
    )
    s.add_argument(
        "--data",
        default=DEFAULT_DATA,
        type=Path,
        metavar="DIR",
        help="bot logs, game records and the match server's database (default %(default)s)",
    )
    s.add_argument(
        "--admin-token-file",
        type=Path,
        metavar="FILE",
        help="the admin token (Bearer metadata) add, pause, resume and remove need "
        "(default: DIR/admin-token in --data, created 0600 on first start)",
    )
    s.add_argument(
        "--insecure-open",
        action="store_true",
        help="let anyone who reaches --listen register NEW connect-in bots without the "
        "token (never a command, never an existing name); everything else still needs it",
    )
    add_safety_arguments(s)
    add_webhook_argument(s)  # serve --webhook, beside the authors' commands
    s.add_argument(
        "--concurrency",
        type=int,
        default=4,
        metavar="N",
        help="matches played at once by this process; 0: only schedule, for "
        "`cirulla ladder worker`s to play (default %(default)s)",
    )
    add_rule_arguments(s, players=False)  # the queue sets the seats
    s.add_argument(
        "--move-limit",
        dest="move_limit_ms",
        type=int,
        default=10_000,
        metavar="MS",
        help="per-move clock in milliseconds, as cirulla tournament's; a bot out of time "
        "forfeits the game (default %(default)s)",
    )
    s.add_argument(  # its former name, still accepted
        "--move-limit-ms",
        dest="move_limit_ms",
        type=int,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )
    s.add_argument(
        "--game-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="wall-clock limit per game (default %(default)s)",
    )
    s.add_argument(
        "--state-file",
        type=Path,
        default=Path(STATE_FILE),
        metavar="FILE",
        help="where the address is written for the other commands (default %(default)s)",
    )

    add_keeping_arguments(s)
    s.add_argument(
        "--pace",
        type=float,
        default=0.0,
        metavar="GAMES_PER_MINUTE",
        help="schedule at most this many games a minute (default: as fast as it plays)",
    )
    s.add_argument(
        "--idle-pace",
        type=float,
        default=0.0,
        metavar="GAMES_PER_MINUTE",
        help="the pace once a queue is settled: no validation games left, every sigma "
        "under 2 (default: --pace)",
    )
    add_idle_poll_argument(s)
    add_log_level_argument(s)
    s.set_defaults(func=Runs("cirulla.ladder.cli_serve", "run_serve"))


def add_idle_poll_argument(p: argparse.ArgumentParser) -> None:
    """--idle-poll, which the scheduler and the workers of every ladder process follow."""
    p.add_argument(
        "--idle-poll",
        type=float,
        default=MOST_SECONDS,
        metavar="SECONDS",
        help="the longest wait between an idle ladder's looks at its database for new work "
        "(default %(default)s; work this process learns of wakes it at once, work another "
        "process writes is seen within it)",
    )


def add_keeping_arguments(p: argparse.ArgumentParser) -> None:
    """--keep-records, --log-file and --bot-logs, which a worker's own data folder needs
    as well."""
    p.add_argument(
        "--keep-records",
        metavar="N|Nd",
        help="keep the records of the newest N games, or of the last N days (30d); older "
        "records and bot logs are pruned, results and ratings stay (default: keep all)",
    )
    p.add_argument(
        "--log-file",
        type=Path,
        metavar="FILE",
        help="log to FILE, rotated at 10 MiB, 5 old files kept (default: stderr)",
    )
    p.add_argument(
        "--bot-logs",
        metavar="SIZE",
        help="what one bot's logs may hold on disk in all (default 256M): past it its "
        "oldest logs are cut to their start and tail, then deleted",
    )


def add_safety_arguments(p: argparse.ArgumentParser) -> None:
    """``--no-sandbox``, the TLS options, ``--http`` and ``--metrics`` of ``serve`` and
    ``worker``."""
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve the web view here: standings, bots, matches, replays and live games "
        "(public information only; docs/ladder.md, 'The web view')",
    )
    p.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve Prometheus metrics (cirulla_*, the match server's and the ladder's) at "
        "http://HOST:PORT/metrics",
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run managed bots WITHOUT the bubblewrap sandbox, able to read everything "
        "this user can (the ladder's database, records, admin token): only for bots you "
        "wrote yourself (default: every bot process is sandboxed, and the ladder refuses to "
        "start where bubblewrap cannot run)",
    )
    p.add_argument(
        "--tls-cert",
        type=Path,
        metavar="PEM",
        help="serve TLS on --listen with this certificate chain (as `cirulla server`)",
    )
    p.add_argument("--tls-key", type=Path, metavar="PEM", help="private key for --tls-cert")
    p.add_argument(
        "--tls-ca",
        type=Path,
        metavar="PEM",
        help="CA of the other ladder processes' TLS match servers (default: "
        "$CIRULLA_TLS_CA, else --tls-cert itself)",
    )


def add_registration_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``add``, ``cgroup-setup`` and ``standings``."""
    a = sub.add_parser(
        "add",
        help="register a bot, or a new version of one",
        description="Register NAME with SPEC (what `cirulla tournament --bot` takes, or "
        "'connect' for a bot that connects in with `cirulla bot KIND --ladder`). The same "
        "NAME with a new SPEC or queues is a new version: its history stays, its rating "
        "starts from the old mean with a wide uncertainty, and it plays validation games "
        "first. Relative paths in SPEC are made absolute here, in this folder (a missing "
        "one is refused): the ladder starts the bot in its workers' folders.",
    )
    a.add_argument("name")
    a.add_argument("spec")
    a.add_argument(
        "--queue",
        action="append",
        choices=QUEUES,
        help="queue to play in (repeatable; default 2p)",
    )
    a.add_argument(
        "--max-concurrency",
        type=int,
        default=0,
        metavar="N",
        help="matches the bot may play at once (default 4)",
    )
    a.add_argument("--memory", metavar="SIZE", help="its memory in the sandbox (default 2G)")
    a.add_argument(
        "--processes", metavar="N", help="its processes and threads in the sandbox (default 256)"
    )
    a.add_argument("--cpu", metavar="CORES", help="its CPU quota in cores (default 1)")
    a.add_argument(
        "--limits",
        metavar="KEY=VALUE,...",
        default="",
        help="the same as one list: memory=4G,processes=64,cpu=2,output=32M,tmp=1G "
        "(docs/ladder.md, 'Per-bot limits'); stored with the version",
    )
    a.set_defaults(func=Runs("cirulla.ladder.cli_operator", "run_add"))

    cg = sub.add_parser(
        "cgroup-setup",
        help="as root, once: give USER a control group folder for its bots' limits",
        description="Make the control group folder each bot's limits live under "
        "(/sys/fs/cgroup/<memory|pids|cpu>/BASE on v1, /sys/fs/cgroup/BASE on v2) and give "
        "it to USER, the user the ladder runs as: it then limits each bot's memory, "
        "processes and CPU without privileges (docs/ladder.md, 'Threat model'). Idempotent.",
    )
    cg.add_argument("--user", required=True, help="the user the ladder and its workers run as")
    cg.add_argument(
        "--base",
        default=None,
        help="the folder's name (default: $CIRULLA_CGROUP, else cirulla); give the ladder "
        "the same as CIRULLA_CGROUP",
    )
    cg.set_defaults(func=Runs("cirulla.ladder.cli_operator", "run_cgroup_setup"))

    st = sub.add_parser("standings", help="ratings of one queue, best first")
    st.add_argument("--queue", choices=QUEUES, default="2p")
    st.add_argument("--all", action="store_true", help="also paused and deactivated bots")
    st.add_argument("--json", action="store_true", help="print JSON")
    st.set_defaults(func=Runs("cirulla.ladder.cli_operator", "run_standings"))
    add_db_argument(st)


def add_state_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``pause``, ``resume`` and ``remove``."""
    for name, helptext in (
        ("pause", "stop scheduling a bot (its running matches finish)"),
        ("resume", "schedule a paused or deactivated bot again"),
        ("remove", "take a bot off the ladder (its matches stay readable)"),
    ):
        c = sub.add_parser(name, help=helptext)
        c.add_argument("bot")
        if name != "resume":
            c.add_argument("--reason", default="", help="shown in the standings")
        c.set_defaults(func=Runs("cirulla.ladder.cli_operator", "run_state"), action=name)


def add_author_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``history``, ``match``, ``matches``, ``h2h``, ``request`` and ``requests``."""
    h = sub.add_parser("history", help="a bot's versions, ratings and matches")
    h.add_argument("bot")
    h.add_argument("--queue", choices=QUEUES)
    h.add_argument("--limit", type=int, default=20)
    h.add_argument("--json", action="store_true")
    h.set_defaults(func=Runs("cirulla.ladder.cli_author", "run_history"))

    m = sub.add_parser("match", help="one ladder match (ladder id or match server id)")
    m.add_argument("match_id")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=Runs("cirulla.ladder.cli_author", "run_match"))

    ms = sub.add_parser(
        "matches",
        help="every ladder match, newest first (optionally of one queue, status or bot)",
    )
    ms.add_argument("--queue", choices=QUEUES, help="only this queue")
    ms.add_argument("--status", choices=MATCH_STATES, help="only matches in this state")
    ms.add_argument("--bot", metavar="NAME", help="only matches this bot has a seat in")
    ms.add_argument(
        "--limit", type=int, default=20, metavar="N", help="matches listed (default %(default)s)"
    )
    ms.add_argument("--json", action="store_true")
    ms.set_defaults(func=Runs("cirulla.ladder.cli_author", "run_matches"))

    hh = sub.add_parser("h2h", help="results between two bots")
    hh.add_argument("bot_a")
    hh.add_argument("bot_b")
    hh.add_argument("--queue", choices=QUEUES)
    hh.add_argument("--limit", type=int, default=20, help="matches listed (default %(default)s)")
    hh.add_argument("--json", action="store_true")
    hh.set_defaults(func=Runs("cirulla.ladder.cli_author", "run_h2h"))

    rq = sub.add_parser(
        "request",
        help="request a match or series between named bots, played before scheduled play",
        description="Queue N games between 2 to 4 registered bots (their number is the queue: "
        "2p, 3p, 4p), claimed before any scheduled match. Needs the admin token; a bot's "
        "owner may instead give the bot's key (--bot-key-file, or $CIRULLA_BOT_KEY when no "
        "admin token is at hand) to request --unrated games of that bot. Follow it with "
        "`cirulla ladder requests` and `cirulla ladder match ID`.",
    )
    rq.add_argument("bots", nargs="+", metavar="BOT", help="2 to 4 bot names, seats in order")
    rq.add_argument("--games", type=int, default=1, metavar="N", help="games (default 1)")
    rq.add_argument("--unrated", action="store_true", help="the games never change a rating")
    rq.add_argument(
        "--bot-key-file",
        type=Path,
        metavar="FILE",
        help="request as the owner of one of the bots, with its bot key (unrated only)",
    )
    rq.add_argument("--json", action="store_true")
    rq.set_defaults(func=Runs("cirulla.ladder.cli_author", "run_request"))

    rqs = sub.add_parser("requests", help="requested matches and how far they are, newest first")
    rqs.add_argument("--bot", help="only requests naming this bot")
    rqs.add_argument("--limit", type=int, default=20, help="requests listed (default %(default)s)")
    rqs.add_argument("--json", action="store_true")
    rqs.set_defaults(func=Runs("cirulla.ladder.cli_author", "run_requests"))
    add_db_argument(h)
    add_db_argument(m)
    add_db_argument(ms)
    add_db_argument(hh)
    add_db_argument(rqs)


def add_webhook_argument(p: argparse.ArgumentParser) -> None:
    """``serve --webhook URL``."""
    p.add_argument(
        "--webhook",
        metavar="URL",
        help="POST JSON to this http(s) URL when a bot is deactivated (bot, version, "
        "reason, time); a failing endpoint is logged and never stalls the ladder",
    )


def add_own_bot_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The author commands and ``rotate-key``, on ``cirulla ladder``'s sub-commands."""
    key_help = (
        "a file holding the bot's key (default: $CIRULLA_BOT_KEY; without either, the admin token)"
    )
    lg = sub.add_parser(
        "logs",
        help="a bot's own output in its finished games, with the bot's key",
        description="What the bot wrote (stdout and stderr) in its finished games, newest "
        "first, read with its key ($CIRULLA_BOT_KEY or --bot-key-file, never on the command "
        "line). Games still in play, and the first game of a duplicate pair until its twin "
        "is over, are left out.",
    )
    lg.add_argument("bot")
    lg.add_argument("--match", default="", metavar="ID", help="only this game")
    lg.add_argument("--limit", type=int, default=5, metavar="N", help="games (default 5)")
    lg.add_argument("--bot-key-file", type=Path, metavar="FILE", help=key_help)
    lg.add_argument("--json", action="store_true")
    lg.set_defaults(func=Runs("cirulla.ladder.cli_own_bot", "run_logs"))

    rc = sub.add_parser(
        "record",
        help="the full record of one finished game of a bot, with the bot's key",
        description="The record (every hand and deck) of one finished game of the bot, "
        "read with its key; printed as text, or written with --out as a record file that "
        "`cirulla replay` reads.",
    )
    rc.add_argument("bot")
    rc.add_argument("match_id")
    rc.add_argument("--out", type=Path, metavar="FILE", help="write the record file here")
    rc.add_argument("--bot-key-file", type=Path, metavar="FILE", help=key_help)
    rc.add_argument("--json", action="store_true")
    rc.set_defaults(func=Runs("cirulla.ladder.cli_own_bot", "run_record"))

    ev = sub.add_parser(
        "events",
        help="a bot's state changes (registered, paused, deactivated...), with its key",
    )
    ev.add_argument("bot")
    ev.add_argument("--limit", type=int, default=50, metavar="N")
    ev.add_argument("--bot-key-file", type=Path, metavar="FILE", help=key_help)
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=Runs("cirulla.ladder.cli_own_bot", "run_events"))

    rk = sub.add_parser(
        "rotate-key",
        help="give a bot a new key (admin): the old one stops working at once",
        description="A new key for the bot, printed once: its author's key for logs, "
        "record and events, and a connect-in bot's Enroll key. Needs the admin token.",
    )
    rk.add_argument("bot")
    rk.set_defaults(func=Runs("cirulla.ladder.cli_own_bot", "run_rotate_key"))


def add_worker_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    w = sub.add_parser(
        "worker",
        help="play scheduled matches of a (PostgreSQL) ladder on this machine",
        description="Claim and play the matches a ladder schedules, on this machine's own "
        "match server, until Ctrl-C or SIGTERM. Start any number on any machines with the "
        "ladder's database (docs/ladder.md, 'Workers').",
    )
    w.add_argument(
        "--db",
        default=DEFAULT_DB,
        help="the ladder's database, e.g. postgresql://USER@HOST:PORT/NAME (default "
        "%(default)s, which only a worker on the ladder's own machine can share)",
    )
    w.add_argument(
        "--listen",
        default="127.0.0.1:0",
        metavar="HOST:PORT",
        help="address of this worker's match server; port 0 picks one (default %(default)s)",
    )
    w.add_argument(
        "--advertise",
        metavar="HOST:PORT",
        help="address bots on other machines reach this match server at (default: from "
        "--listen; give it when listening on 0.0.0.0 for connect-in bots elsewhere)",
    )
    w.add_argument(
        "--data",
        default=WORKER_DATA,
        type=Path,
        metavar="DIR",
        help="bot logs, game records and the match server's database (default %(default)s)",
    )
    w.add_argument(
        "--concurrency",
        type=int,
        default=2,
        metavar="N",
        help="matches played at once (default %(default)s)",
    )
    w.add_argument(
        "--lease",
        type=float,
        default=LEASE_SECONDS,
        metavar="SECONDS",
        help="how long a match stays this worker's without a heartbeat; after that any "
        "ladder process re-queues or cancels it (default %(default)s)",
    )
    add_safety_arguments(w)
    add_keeping_arguments(w)
    add_idle_poll_argument(w)
    add_log_level_argument(w)
    w.set_defaults(func=Runs("cirulla.ladder.worker", "run_worker"))


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """``--db`` of the commands that only read: the database read when no ladder answers."""
    parser.add_argument(
        "--db",
        help="when no ladder answers, read this ladder database instead (default: the "
        f"one ./{STATE_FILE} names, else {DEFAULT_DB} if it exists)",
    )


#: ``cirulla bench ladder --help``: what ``cirulla.ladder.bench`` measures and prints.
LADDER_BENCH_DESCRIPTION = """\
``cirulla bench ladder``: sustained ladder throughput, embedded and with workers.

First the embedded default: ``cirulla ladder serve`` on a fresh SQLite file with its
default settings (standard rules, 4 games at once), a random and a greedy bot
registered; after a warm-up it counts the rated games finished per minute over a fixed
window (the issue's target: 20 a minute on 2 cores), and the median game's duration.

Then, for each worker count, a fresh PostgreSQL database (a throwaway cluster started here
unless ``--db`` names a server), random bots registered, ``cirulla ladder serve
--concurrency 0`` scheduling and N ``cirulla ladder worker`` processes playing. After a
warm-up it counts, over a fixed window, the matches finished per minute and the
scheduling latency of the matches started in it: scheduled -> claimed by a worker and
scheduled -> started on a match server (the bots' processes launched, the match
created). Prints one JSON object. Figures on a shared machine are noisy: compare the
two worker counts of one run.
"""


def add_ladder_bench_parser(bench: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench.add_parser(
        "ladder",
        help="ladder matches per minute and scheduling latency, 1 and 2 workers (PostgreSQL)",
        description=LADDER_BENCH_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--db",
        metavar="URL",
        help="a PostgreSQL server to use (postgresql://USER@HOST:PORT/DB; each run creates "
        "and drops its own database there); default: start a throwaway one",
    )
    p.add_argument(
        "--workers",
        default="1,2",
        help="worker counts to compare on PostgreSQL (default 1,2; '' for none)",
    )
    p.add_argument(
        "--no-embedded",
        dest="embedded",
        action="store_false",
        help="skip the embedded SQLite ladder (serve with random and greedy)",
    )
    p.add_argument(
        "--embedded-concurrency",
        type=int,
        default=4,
        help="games at once of the embedded ladder (default 4, serve's default)",
    )
    p.add_argument("--concurrency", type=int, default=2, help="matches per worker (default 2)")
    p.add_argument("--bots", type=int, default=6, help="random bots registered (default 6)")
    p.add_argument("--warmup", type=float, default=15.0, help="seconds before measuring (15)")
    p.add_argument("--seconds", type=float, default=45.0, help="measured window (45)")
    p.add_argument("--json", action="store_true", help="JSON only (the default output too)")
    p.set_defaults(func=Runs("cirulla.ladder.bench", "run_bench"))


#: ``cirulla bench pool --help``: what ``cirulla.ladder.pool_bench`` measures and prints.
POOL_BENCH_DESCRIPTION = """\
``cirulla bench pool``: one tournament played here and on the worker pool.

The same tournament (random against greedy, fixed deck and bot seeds) is played twice:
by a local ``cirulla tournament`` (its own server and bots) and by ``cirulla tournament
--db`` with N ``cirulla ladder worker`` processes on a fresh PostgreSQL database (a
throwaway cluster started here unless ``--db`` names a server). Prints one JSON object:
the wall time of each, their ratio and whether the per-game results are identical. All
processes share this machine, so the ratio shows the pool's overhead (claims, polling,
results through the database), not the speed-up of more machines.
"""


def add_pool_bench_parser(bench: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench.add_parser(
        "pool",
        help="a tournament played locally and on N ladder workers (PostgreSQL): time, same results",
        description=POOL_BENCH_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--db",
        metavar="URL",
        help="a PostgreSQL server to use (a database is created and dropped there); "
        "default: start a throwaway one",
    )
    p.add_argument("--games", type=int, default=20, help="games of the tournament (default 20)")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument(
        "--concurrency", type=int, default=1, help="games per worker; the runner and the "
        "local run play workers x concurrency games at once (default 1)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="JSON only (the default output too)")
    p.set_defaults(func=Runs("cirulla.ladder.pool_bench", "run_bench"))

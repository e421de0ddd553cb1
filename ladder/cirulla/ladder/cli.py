"""``cirulla ladder``: run a ladder, register bots, read the standings and every match.

Every command but ``serve`` is a LadderService client: it finds the ladder of the
current folder in ``cirulla-ladder.json`` (written by ``serve``), or takes ``--server``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cirulla.clients.matches.journal import Outcome
from cirulla.ladder import endings
from cirulla.ladder.defaults import (
    DEFAULT_DATA,
    DEFAULT_DB,
    DEFAULT_LISTEN,
    MATCH_STATES,
    STATE_FILE,
)
from cirulla.ladder.fields import plain
from cirulla.logs import quiet_grpc
from cirulla.rules.cli import add_rule_arguments

if TYPE_CHECKING:
    from cirulla.v1 import ladder_pb2

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

QUEUE_CHOICES = ("2p", "3p", "4p")


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    bench: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    p = commands.add_parser(
        "ladder",
        help="continuous rated matches between registered bots (serve, add, standings...)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="ladder_command", metavar="COMMAND", required=True)

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
    from cirulla.logs import add_log_level_argument

    add_log_level_argument(s)
    s.set_defaults(func=run_serve)

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
        choices=QUEUE_CHOICES,
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
    a.set_defaults(func=run_add)

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
    cg.set_defaults(func=run_cgroup_setup)

    st = sub.add_parser("standings", help="ratings of one queue, best first")
    st.add_argument("--queue", choices=QUEUE_CHOICES, default="2p")
    st.add_argument("--all", action="store_true", help="also paused and deactivated bots")
    st.add_argument("--json", action="store_true", help="print JSON")
    st.set_defaults(func=run_standings)

    h = sub.add_parser("history", help="a bot's versions, ratings and matches")
    h.add_argument("bot")
    h.add_argument("--queue", choices=QUEUE_CHOICES)
    h.add_argument("--limit", type=int, default=20)
    h.add_argument("--json", action="store_true")
    h.set_defaults(func=run_history)

    m = sub.add_parser("match", help="one ladder match (ladder id or match server id)")
    m.add_argument("match_id")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=run_match)

    ms = sub.add_parser(
        "matches",
        help="every ladder match, newest first (optionally of one queue, status or bot)",
    )
    ms.add_argument("--queue", choices=QUEUE_CHOICES, help="only this queue")
    ms.add_argument("--status", choices=MATCH_STATES, help="only matches in this state")
    ms.add_argument("--bot", metavar="NAME", help="only matches this bot has a seat in")
    ms.add_argument(
        "--limit", type=int, default=20, metavar="N", help="matches listed (default %(default)s)"
    )
    ms.add_argument("--json", action="store_true")
    ms.set_defaults(func=run_matches)

    hh = sub.add_parser("h2h", help="results between two bots")
    hh.add_argument("bot_a")
    hh.add_argument("bot_b")
    hh.add_argument("--queue", choices=QUEUE_CHOICES)
    hh.add_argument("--limit", type=int, default=20, help="matches listed (default %(default)s)")
    hh.add_argument("--json", action="store_true")
    hh.set_defaults(func=run_h2h)

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
    rq.set_defaults(func=run_request)

    rqs = sub.add_parser("requests", help="requested matches and how far they are, newest first")
    rqs.add_argument("--bot", help="only requests naming this bot")
    rqs.add_argument("--limit", type=int, default=20, help="requests listed (default %(default)s)")
    rqs.add_argument("--json", action="store_true")
    rqs.set_defaults(func=run_requests)

    for name, helptext in (
        ("pause", "stop scheduling a bot (its running matches finish)"),
        ("resume", "schedule a paused or deactivated bot again"),
        ("remove", "take a bot off the ladder (its matches stay readable)"),
    ):
        c = sub.add_parser(name, help=helptext)
        c.add_argument("bot")
        if name != "resume":
            c.add_argument("--reason", default="", help="shown in the standings")
        c.set_defaults(func=run_state, action=name)

    for parser in (st, h, m, ms, hh, rqs):
        parser.add_argument(
            "--db",
            help="when no ladder answers, read this ladder database instead (default: the "
            f"one ./{STATE_FILE} names, else {DEFAULT_DB} if it exists)",
        )
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
    from cirulla.ladder import bench as ladder_bench
    from cirulla.ladder import pool_bench, worker

    worker.add_parser(sub)
    ladder_bench.register_bench(bench)
    pool_bench.register_bench(bench)


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


# ------------------------------------------------------------------------- client side


class CommandError(Exception):
    """One line for stderr."""


def ladder_address(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if args.server:
        return args.server, {}
    path = Path(STATE_FILE)
    if not path.exists():
        raise CommandError(
            f"no ladder in this folder (no {STATE_FILE}): start one with "
            "`cirulla ladder serve`, or pass --server HOST:PORT"
        )
    try:
        state = json.loads(path.read_text())
        return str(state["address"]), state
    except (ValueError, KeyError) as exc:
        raise CommandError(f"{STATE_FILE} is not a ladder state file: {exc}") from None


def admin_metadata(args: argparse.Namespace, state: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    token = os.environ.get("CIRULLA_ADMIN_TOKEN", "")
    path = args.admin_token_file or (
        Path(state["admin_token_file"]) if state.get("admin_token_file") else None
    )
    if path is not None:
        try:
            token = path.read_text().strip()
        except OSError as exc:
            raise CommandError(f"--admin-token-file: {exc}") from None
    return (("authorization", f"Bearer {token}"),) if token else ()


def tls_roots(args: argparse.Namespace, state: dict[str, Any]) -> bytes | None:
    """The CA certificate to check the ladder against (None: plaintext): --tls-ca, else
    $CIRULLA_TLS_CA, else the certificate the ladder of this folder serves (its state
    file names it; a self-signed certificate is its own CA)."""
    given = getattr(args, "tls_ca", None) or os.environ.get("CIRULLA_TLS_CA")
    if not given and not args.server:
        given = state.get("tls_cert")
    if not given:
        return None
    try:
        return Path(given).read_bytes()
    except OSError as exc:
        raise CommandError(f"--tls-ca {given}: {exc.strerror or exc}") from None


def open_channel(args: argparse.Namespace, address: str, state: dict[str, Any]) -> Any:
    import grpc

    roots = tls_roots(args, state)
    if roots is None:
        return grpc.insecure_channel(address)
    return grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=roots))


#: The rpcs that only read: served from the ladder's database when no ladder answers.
READ_METHODS = frozenset(
    {
        "GetStandings",
        "GetBotHistory",
        "GetLadderMatch",
        "GetHeadToHead",
        "ListMatchRequests",
        "ListLadderMatches",
    }
)
#: The databases a read of this process has already said it reads (said once each).
_READ_NOTICES: set[str] = set()


class _LocalContext:
    """What the LadderService's read rpcs use of a gRPC context, when this command
    serves them itself from the database: no metadata, and an abort that is one line."""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()

    async def abort(self, code: Any, details: str) -> None:
        raise CommandError(f"{details} ({code.name})")


def database_of(args: argparse.Namespace, state: dict[str, Any]) -> str | None:
    """The ladder database to read when the ladder is not running: ``--db``, else the one
    the folder's state file names, else the default file if it exists; None if none."""
    from sqlalchemy.engine import make_url

    from cirulla.ladder.db import database_url

    db: str | None = getattr(args, "db", None) or state.get("db")
    if not db:
        return DEFAULT_DB if Path(DEFAULT_DB).exists() else None
    try:
        url = make_url(database_url(db))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if url.password == "***":  # the state file never holds a password
        raise CommandError(
            "the ladder is not running, and its state file hides the database password: "
            "pass --db postgresql://USER:PASSWORD@HOST:PORT/NAME"
        )
    if url.drivername.startswith("sqlite") and not Path(url.database or "").exists():
        raise CommandError(f"the ladder is not running, and there is no database at {db}")
    return db


def read_database(db: str, method: str, request: Any) -> Any:
    """Serve a read rpc from the database itself (the same code the ladder runs), after
    one line on stderr saying so."""
    import asyncio

    from cirulla.ladder.db import database_url, display_url, open_database
    from cirulla.ladder.service import LadderService
    from cirulla.ladder.store import LadderStore

    shown = display_url(database_url(db))
    if shown not in _READ_NOTICES:  # a command reading several pages says it once
        _READ_NOTICES.add(shown)
        print(f"ladder not running: read from the database at {shown}", file=sys.stderr)
    try:
        engine = open_database(db)
    except Exception as exc:  # a database that is down or not a ladder's: one line
        raise CommandError(f"cannot read the database at {shown}: {exc}") from None
    try:
        service = LadderService(LadderStore(engine))
        return asyncio.run(getattr(service, method)(request, _LocalContext()))
    finally:
        engine.dispose()


def call(
    args: argparse.Namespace,
    method: str,
    request: Any,
    admin: bool = False,
    extra: tuple[tuple[str, str], ...] = (),
) -> Any:
    import grpc

    from cirulla.v1 import ladder_pb2_grpc

    reads = method in READ_METHODS and not admin
    try:
        address, state = ladder_address(args)
    except CommandError:
        db = database_of(args, {}) if reads else None
        if db is None:
            raise
        return read_database(db, method, request)
    metadata = (*(admin_metadata(args, state) if admin else ()), *extra)
    secure = tls_roots(args, state) is not None
    with open_channel(args, address, state) as channel:
        stub = ladder_pb2_grpc.LadderServiceStub(channel)
        try:
            return getattr(stub, method)(request, timeout=30, metadata=metadata)
        except grpc.RpcError as exc:
            # a ladder named by --server is somewhere else: its database only with --db
            local = not args.server or getattr(args, "db", None)
            if exc.code() == grpc.StatusCode.UNAVAILABLE and reads and local:
                db = database_of(args, state)
                if db is not None:
                    return read_database(db, method, request)
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                hint = (
                    "if it serves TLS, is --tls-ca the CA of its certificate?"
                    if secure
                    else "if it serves TLS, pass --tls-ca PEM (or set CIRULLA_TLS_CA)"
                )
                raise CommandError(
                    f"the ladder at {address} is not reachable (is `cirulla ladder serve` "
                    f"running? {hint})"
                ) from None
            raise CommandError(f"{exc.details()} ({exc.code().name})") from None


def run_command(fn: Any) -> Any:
    def wrapper(args: argparse.Namespace) -> int:
        quiet_grpc()  # read when grpc is first imported
        try:
            return int(fn(args) or 0)
        except CommandError as exc:
            print(f"cirulla ladder {args.ladder_command}: {exc}", file=sys.stderr)
            return 2

    return wrapper


def to_json(message: Any) -> dict[str, Any]:
    from google.protobuf import json_format

    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def when(ts: Any) -> str:
    if not ts.seconds:
        return "-"
    return datetime.datetime.fromtimestamp(ts.seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")


def queue_pb(name: str | None) -> ladder_pb2.LadderQueue:
    from cirulla.ladder.service import QUEUE_TO_PB
    from cirulla.v1 import ladder_pb2

    return QUEUE_TO_PB[name] if name else ladder_pb2.LADDER_QUEUE_UNSPECIFIED


def state_text(bot: Any) -> str:
    from cirulla.v1 import ladder_pb2

    state = ladder_pb2.BotState.Name(bot.state).removeprefix("BOT_STATE_").lower()
    if bot.state == ladder_pb2.BOT_STATE_ACTIVE and bot.offline:
        # not "validating": nothing is played until the bot connects in again
        state = "offline (not connected)"
        if bot.validation_games_left:
            state += f", {bot.validation_games_left} validation games left"
    elif bot.state == ladder_pb2.BOT_STATE_ACTIVE and bot.validation_games_left:
        state = f"validating ({bot.validation_games_left} left)"
    return f"{state}: {bot.state_reason}" if bot.state_reason else state


def match_line(m: Any) -> list[str]:
    from cirulla.v1 import ladder_pb2

    status = ladder_pb2.LadderMatchStatus.Name(m.status).removeprefix("LADDER_MATCH_STATUS_")
    seats = " ".join(f"{s.bot_name}(v{s.version})" for s in m.seats)
    if m.withheld:
        result = "withheld until its twin ends"
    elif m.status == ladder_pb2.LADDER_MATCH_STATUS_CANCELLED:
        result = m.cancel_reason
    elif m.HasField("winner_side"):
        names = ", ".join(s.bot_name for s in m.seats if s.side == m.winner_side)
        points = {s.side: s.points for s in m.seats}
        score = "-".join(str(points[k]) for k in sorted(points))
        forfeits = [
            f"{s.bot_name}: {s.outcome}"
            for s in m.seats
            if s.side != m.winner_side and s.outcome not in ("", Outcome.OK)
        ]
        if forfeits:  # the game was not played out: its points are not a score
            result = f"{names} won by forfeit ({', '.join(forfeits)})"
            result += f", {score}" if any(points.values()) else ""
        else:
            result = f"{names} won {score}"
    elif m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED:
        result = "no winner"
    else:
        result = ""
    if why := endings.describe_pb(m):  # a score alone misleads (7-27 is a cappotto)
        result += f" — {why}"
    return [m.match_id, when(m.create_time), status.lower(), seats, result]


def say(console: Any, item: Any) -> None:
    """Print a line of the ladder's data: never markup, never an escape sequence."""
    console.print(plain(item) if isinstance(item, str) else item)


def matches_table(matches: Any, title: str | None = None) -> Any:
    from rich.table import Table

    table = Table(title=title)
    for column in ("match", "scheduled", "status", "seats", "result"):
        table.add_column(column)
    for m in matches:
        table.add_row(*(plain(cell) for cell in match_line(m)))
    return table


# ------------------------------------------------------------------------- commands


def run_serve(args: argparse.Namespace) -> int:
    import asyncio

    from cirulla.ladder.serve import ServeOptions, serve
    from cirulla.ladder.store import QUEUE_PLAYERS, MatchConfig
    from cirulla.rules import OptionError, Options, parse_overrides
    from cirulla.server.logs import setup_logging

    setup_logging(args.log_level, "ladder")
    try:
        overrides = parse_overrides(args.rule)
        if "players" in overrides:
            raise ValueError("--rule players=...: the players of a match come from its queue")
        queues = []
        for queue, players in QUEUE_PLAYERS.items():
            try:
                Options.preset(args.preset, players=players, **overrides)
                queues.append(queue)
            except OptionError as exc:
                if players == 2:
                    raise
                print(f"cirulla ladder serve: queue {queue} not played: {exc}", file=sys.stderr)
        if args.concurrency < 0:
            raise ValueError(f"--concurrency must be 0 or more, not {args.concurrency}")
        options = ServeOptions(
            db=args.db,
            listen=args.listen,
            data=args.data,
            state_file=args.state_file,
            admin_token_file=args.admin_token_file,
            insecure_open=args.insecure_open,
            concurrency=args.concurrency,
            queues=tuple(queues),
            sandbox=not args.no_sandbox,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
            tls_ca=args.tls_ca,
            http=args.http,
            metrics=args.metrics,
            config=MatchConfig(
                preset=args.preset,
                rules=overrides,
                move_limit_ms=args.move_limit_ms,
                game_timeout=args.game_timeout,
            ),
        )
        asyncio.run(serve(options))
    except (OSError, ValueError, OptionError) as exc:
        print(f"cirulla ladder serve: {exc}", file=sys.stderr)
        return 2
    return 0


@run_command
def run_add(args: argparse.Namespace) -> int:
    from cirulla.ladder.spec_paths import SpecPathError, resolve_spec_paths
    from cirulla.v1 import ladder_pb2

    try:
        # resolved here, where the operator typed it: the bot runs in a worker's folder
        spec = resolve_spec_paths(args.spec)
    except SpecPathError as exc:
        raise CommandError(str(exc)) from None
    request = ladder_pb2.AddBotRequest(
        bot_name=args.name,
        spec=spec,
        queues=[queue_pb(q) for q in (args.queue or ["2p"])],
        max_concurrency=args.max_concurrency,
    )
    from cirulla.ladder.limits import compact

    limits, limits_pb = add_limits(args)
    if limits_pb is not None:
        request.limits.CopyFrom(limits_pb)
    response = call(args, "AddBot", request, admin=True)
    bot = response.bot
    if response.new_version:
        print(f"{bot.name} version {bot.version}: {bot.spec} ({state_text(bot)})")
        if limits:
            print(f"limits in the sandbox: {limits} ({compact(bot.limits)})")
    else:
        print(f"{bot.name} version {bot.version} is already registered with this spec")
    if response.bot_key:
        print(
            "bot key (shown once; keep it secret, give it to the bot as CIRULLA_BOT_KEY):\n"
            + response.bot_key
        )
    return 0


def run_cgroup_setup(args: argparse.Namespace) -> int:
    from cirulla.bots.cgroups import delegate

    try:
        folders = delegate(args.user, args.base)
    except (OSError, ValueError) as exc:
        print(f"cirulla ladder cgroup-setup: {exc}", file=sys.stderr)
        return 2
    for folder in folders:
        print(f"{folder}: {args.user}'s bots get their limits here")
    return 0


def add_limits(args: argparse.Namespace) -> tuple[str, Any]:
    """``--memory``, ``--processes``, ``--cpu`` and ``--limits`` as one checked list and
    as the request's ``BotLimits`` (the fields given; None when none is): ("", None)
    without any. A bad value is one line naming the option."""
    from cirulla.bots.cgroups import BotLimits, parse_limits
    from cirulla.ladder.limits import text_from_pb
    from cirulla.ladder.store_rows import LadderError
    from cirulla.v1 import ladder_pb2

    parts = [p for p in args.limits.split(",") if p.strip()]
    for key in ("memory", "processes", "cpu"):
        value = getattr(args, key)
        if value is not None:
            parts.append(f"{key}={value}")
    if not parts:
        return "", None
    # over a base of zeros: a field still 0 afterwards was not given (the ladder's default)
    unset = BotLimits(memory_bytes=0, processes=0, cpu=0, output_bytes=0, tmp_bytes=0)
    try:
        given = parse_limits(",".join(parts), unset)
    except ValueError as exc:
        raise CommandError(f"--{str(exc).split(':')[0]}: {str(exc).split(': ', 1)[-1]}") from None
    cpu_given = any(p.split("=", 1)[0].strip().lower() == "cpu" for p in parts)
    if cpu_given and given.cpu == 0:
        raise CommandError("--cpu: a ladder bot always has a CPU quota: more than 0 cores")
    pb = ladder_pb2.BotLimits(
        memory_bytes=given.memory_bytes,
        processes=given.processes,
        cpu_millicores=max(1, round(given.cpu * 1000)) if given.cpu else 0,
        output_bytes=given.output_bytes,
        tmp_bytes=given.tmp_bytes,
    )
    try:
        text_from_pb(pb)
    except LadderError as exc:
        field, _, why = str(exc).partition(": ")
        option = {
            "limits.memory_bytes": "--memory",
            "limits.processes": "--processes",
            "limits.cpu_millicores": "--cpu",
            "limits.output_bytes": "--limits output",
            "limits.tmp_bytes": "--limits tmp",
        }.get(field, "--limits")
        raise CommandError(f"{option}: {why}") from None
    return ",".join(parts), pb


@run_command
def run_standings(args: argparse.Namespace) -> int:
    from rich.table import Table
    from rich.text import Text

    from cirulla.console import output_console
    from cirulla.ladder.limits import compact
    from cirulla.v1 import ladder_pb2

    response = call(
        args,
        "GetStandings",
        ladder_pb2.GetStandingsRequest(queue=queue_pb(args.queue), include_inactive=args.all),
    )
    if args.json:
        print(json.dumps(to_json(response), indent=1))
        return 0
    title = f"Ladder standings, queue {args.queue} ({response.rated_games} rated games)"
    table = Table(title=title)
    columns = ["#", "bot", "v", "rating", "mu", "sigma", "games", "win%", "state"]
    if args.all:  # the operator's view: what each version runs under
        columns.append("limits")
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("bot", "state", "limits") else "right"
        )
    for e in response.entries:
        r = e.rating
        rate = f"{100 * (r.wins + r.draws / 2) / r.games:.0f}%" if r.games else "-"
        row: list[str | Text] = [
            str(e.rank),
            plain(e.bot.name),
            str(e.bot.version),
            f"{r.score:.1f}" + ("?" if r.provisional else ""),
            f"{r.mu:.1f}",
            f"{r.sigma:.2f}",
            str(r.games),
            rate,
            plain(state_text(e.bot)),
        ]
        if args.all:
            row.append(compact(e.bot.limits))
        table.add_row(*row)
    console = output_console()
    console.print(table)
    console.print("rating = mu - 3 sigma; ? = provisional (fewer than 10 rated games)")
    if args.all:
        console.print(
            "limits = memory/processes/CPU cores of each version in the sandbox; "
            "- = connect-in (runs elsewhere)"
        )
    for e in response.entries:
        if e.bot.last_log and e.bot.state == ladder_pb2.BOT_STATE_DEACTIVATED:
            console.print(Text(e.bot.name, style="bold"), "last log:")
            console.print(plain(e.bot.last_log[-1500:]))
    return 0


@run_command
def run_history(args: argparse.Namespace) -> int:
    from cirulla.console import output_console
    from cirulla.ladder.service import PB_TO_QUEUE
    from cirulla.v1 import ladder_pb2

    response = call(
        args,
        "GetBotHistory",
        ladder_pb2.GetBotHistoryRequest(
            bot_name=args.bot, queue=queue_pb(args.queue), page_size=args.limit
        ),
    )
    if args.json:
        print(json.dumps(to_json(response), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    bot = response.bot
    say(console, f"{bot.name} version {bot.version}: {bot.spec} — {state_text(bot)}")
    if bot.last_failure:
        say(console, f"last failure: {bot.last_failure}")
    if bot.last_log and bot.state == ladder_pb2.BOT_STATE_DEACTIVATED:
        say(console, "last log (the bot's own output in that match):")
        say(console, bot.last_log[-1500:])
    for v in response.versions:
        say(console, f"  v{v.version} {when(v.create_time)}  {v.spec}")
    for r in response.ratings:
        queue = PB_TO_QUEUE.get(r.queue, str(r.queue))
        say(
            console,
            f"  {queue}: rating {r.score:.1f} (mu {r.mu:.1f}, sigma {r.sigma:.2f}), "
            f"{r.games} games, {r.wins} wins" + (" provisional" if r.provisional else ""),
        )
    say(console, matches_table(response.matches, "matches, newest first"))
    return 0


@run_command
def run_match(args: argparse.Namespace) -> int:
    from cirulla.console import output_console
    from cirulla.ladder.service import PB_TO_QUEUE
    from cirulla.v1 import ladder_pb2

    m = call(args, "GetLadderMatch", ladder_pb2.GetLadderMatchRequest(match_id=args.match_id)).match
    if args.json:
        print(json.dumps(to_json(m), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    match_id, created, status, _seats, result = match_line(m)
    say(console, f"{match_id} ({PB_TO_QUEUE.get(m.queue, str(m.queue))}) {status}")
    say(
        console, f"  scheduled {created}, started {when(m.start_time)}, ended {when(m.finish_time)}"
    )
    if m.server_match_id:
        say(console, f"  match server: {m.server_address} match {m.server_match_id}")
    if m.pair_id:
        say(console, f"  duplicate pair {m.pair_id}")
    if m.request_id:
        say(console, f"  requested: {m.request_id} (cirulla ladder requests)")
    say(console, f"  result: {result or '-'}" + ("" if m.rated else " (unrated)"))
    for s in m.seats:
        points = str(s.points) if s.HasField("points") else "-"
        rating = f" mu {s.mu_after:.1f} sigma {s.sigma_after:.2f}" if s.HasField("mu_after") else ""
        fault = f" — {s.fault}" if s.fault else ""
        say(
            console,
            f"  seat {s.seat} side {s.side}: {s.bot_name} v{s.version} "
            f"{s.outcome or ''} points {points}{rating}{fault}",
        )
    for note in m.notes:
        say(console, f"  note: {note}")
    return 0


@run_command
def run_matches(args: argparse.Namespace) -> int:
    from cirulla.console import output_console
    from cirulla.ladder.service import MAX_PAGE, STATUS_TO_PB
    from cirulla.v1 import ladder_pb2

    if args.limit < 1:
        raise CommandError(f"--limit: must be at least 1, not {args.limit}")
    found: list[Any] = []
    token = ""
    while len(found) < args.limit:  # the rpc's pages are at most MAX_PAGE long
        response = call(
            args,
            "ListLadderMatches",
            ladder_pb2.ListLadderMatchesRequest(
                queue=queue_pb(args.queue),
                status=(
                    STATUS_TO_PB[args.status]
                    if args.status
                    else ladder_pb2.LADDER_MATCH_STATUS_UNSPECIFIED
                ),
                bot_name=args.bot or "",
                page_size=min(args.limit - len(found), MAX_PAGE),
                page_token=token,
            ),
        )
        found.extend(response.matches)
        token = response.next_page_token
        if not token:
            break
    if args.json:
        out = {"matches": [to_json(m) for m in found], "more": bool(token)}
        print(json.dumps(out, indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    say(console, matches_table(found, "matches, newest first"))
    if token:
        say(console, f"the newest {len(found)} are listed; older ones: raise --limit")
    return 0


@run_command
def run_h2h(args: argparse.Namespace) -> int:
    from cirulla.console import output_console
    from cirulla.v1 import ladder_pb2

    h = call(
        args,
        "GetHeadToHead",
        ladder_pb2.GetHeadToHeadRequest(
            bot_a=args.bot_a, bot_b=args.bot_b, queue=queue_pb(args.queue), page_size=args.limit
        ),
    )
    if args.json:
        print(json.dumps(to_json(h), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    say(
        console,
        f"{h.bot_a} vs {h.bot_b}: {h.games} games, {h.a_wins}-{h.b_wins}-{h.draws} (W-L-D), "
        f"points {h.a_points}-{h.b_points}",
    )
    say(console, matches_table(h.matches))
    return 0


@run_command
def run_state(args: argparse.Namespace) -> int:
    from cirulla.v1 import ladder_pb2

    if args.action == "pause":
        request: Any = ladder_pb2.PauseBotRequest(bot_name=args.bot, reason=args.reason)
        method = "PauseBot"
    elif args.action == "resume":
        request = ladder_pb2.ResumeBotRequest(bot_name=args.bot)
        method = "ResumeBot"
    else:
        request = ladder_pb2.RemoveBotRequest(bot_name=args.bot, reason=args.reason)
        method = "RemoveBot"
    bot = call(args, method, request, admin=True).bot
    print(f"{bot.name}: {state_text(bot)}")
    return 0


def request_summary(r: Any) -> str:
    """``grd 3, rnd 1, 0 drawn`` over the request's finished, not withheld games."""
    from cirulla.v1 import ladder_pb2

    wins = dict.fromkeys(r.bot_names, 0)
    drawn = 0
    for m in r.matches:
        if m.status != ladder_pb2.LADDER_MATCH_STATUS_FINISHED or m.withheld:
            continue
        if not m.HasField("winner_side"):
            drawn += 1
            continue
        for s in m.seats:
            if s.side == m.winner_side and s.bot_name in wins:
                wins[s.bot_name] += 1
    return ", ".join(f"{name} {n}" for name, n in wins.items()) + f", {drawn} drawn"


def request_line(r: Any) -> list[str]:
    from cirulla.ladder.service import PB_TO_QUEUE

    queue = PB_TO_QUEUE.get(r.queue, "?")
    kind = "unrated" if r.unrated else "rated"
    left = r.games - r.finished - r.cancelled
    progress = f"{r.finished}/{r.games} played" + (
        f", {r.cancelled} cancelled" if r.cancelled else ""
    )
    progress += f", {left} to play" if left else ""
    return [
        r.request_id,
        when(r.create_time),
        r.requested_by,
        " ".join(r.bot_names) + f" ({queue}, {kind})",
        progress,
        request_summary(r),
    ]


@run_command
def run_request(args: argparse.Namespace) -> int:
    from cirulla.console import output_console
    from cirulla.ladder.store import MAX_REQUEST_GAMES
    from cirulla.v1 import ladder_pb2

    if not 1 <= args.games <= MAX_REQUEST_GAMES:  # 0 on the wire means 1
        raise CommandError(f"--games: 1 to {MAX_REQUEST_GAMES}, not {args.games}")
    key = ""
    if args.bot_key_file is not None:
        try:
            key = args.bot_key_file.read_text().strip()
        except OSError as exc:
            raise CommandError(f"--bot-key-file: {exc.strerror or exc}") from None
        if not key:
            raise CommandError(f"--bot-key-file {args.bot_key_file}: the file is empty")
    request = ladder_pb2.RequestMatchRequest(
        bot_names=args.bots, games=args.games, unrated=args.unrated, bot_key=key
    )
    admin = not key
    if admin:
        _, state = ladder_address(args)
        if not admin_metadata(args, state) and os.environ.get("CIRULLA_BOT_KEY"):
            request.bot_key = os.environ["CIRULLA_BOT_KEY"].strip()  # an owner's request
            admin = False
    r = call(args, "RequestMatch", request, admin=admin).request
    if args.json:
        print(json.dumps(to_json(r), indent=1))
        return 0
    console = output_console(markup=False, highlight=False, emoji=False)
    ident, _, by, bots, _, _ = request_line(r)
    say(
        console,
        f"request {ident} by {by}: {r.games} games, {bots}; played before scheduled matches",
    )
    for m in r.matches:
        say(console, f"  {m.match_id}  " + " ".join(f"{s.bot_name}(v{s.version})" for s in m.seats))
    say(
        console, f"follow it: cirulla ladder requests; cirulla ladder match {r.matches[0].match_id}"
    )
    return 0


@run_command
def run_requests(args: argparse.Namespace) -> int:
    from rich.table import Table

    from cirulla.console import output_console
    from cirulla.v1 import ladder_pb2

    response = call(
        args,
        "ListMatchRequests",
        ladder_pb2.ListMatchRequestsRequest(bot_name=args.bot or "", page_size=args.limit),
    )
    if args.json:
        print(json.dumps(to_json(response), indent=1))
        return 0
    table = Table(title="Requested matches, newest first")
    for column in ("request", "requested", "by", "bots", "games", "wins"):
        table.add_column(column)
    for r in response.requests:
        table.add_row(*(plain(cell) for cell in request_line(r)))
    console = output_console()
    console.print(table)
    for r in response.requests:
        if r.finished + r.cancelled < r.games:
            waiting = [m.match_id for m in r.matches if m.status in (
                ladder_pb2.LADDER_MATCH_STATUS_SCHEDULED,
                ladder_pb2.LADDER_MATCH_STATUS_CLAIMED,
                ladder_pb2.LADDER_MATCH_STATUS_RUNNING,
            )]  # fmt: skip
            console.print(plain(f"{r.request_id} next: cirulla ladder match {waiting[0]}"))
    return 0

"""``cirulla server``, ``cirulla replay`` and ``cirulla bench server``."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

from cirulla.logs import add_log_level_argument
from cirulla.server import records
from cirulla.server.convert.records import record_pb
from cirulla.server.limits import Limits
from cirulla.server.logs import setup_logging
from cirulla.server.replay import load_record, public_records, replay_document
from cirulla.server.store import Store

#: Environment variable holding the admin token (kept off the command line).
ADMIN_TOKEN_ENV = "CIRULLA_ADMIN_TOKEN"

#: The open-server limits ``cirulla server`` exposes: flag, Limits field, type, help.
LIMIT_FLAGS: tuple[tuple[str, str, type, str], ...] = (
    (
        "--stream-queue",
        "stream_queue",
        int,
        "messages queued for one stream before a client that does not read is disconnected",
    ),
    ("--hello-timeout", "hello_timeout_s", float, "seconds a Play stream may wait before hello"),
    (
        "--max-streams-per-connection",
        "max_streams_per_connection",
        int,
        "streams (calls) one client connection may hold open at once (a process's channels "
        "to the server share one); gRPC clients queue calls past it, keep loads well below",
    ),
    (
        "--create-rate",
        "create_rate",
        float,
        "without the admin token: matches and rooms one client address may create per second",
    ),
    ("--create-burst", "create_burst", int, "... and in a burst"),
    (
        "--keep-finished-matches",
        "keep_finished_matches",
        int,
        "ended matches kept in memory at most (the oldest leave first; 0: none)",
    ),
    (
        "--keep-finished-events",
        "keep_finished_events",
        int,
        "... and at most this many of their events in all",
    ),
    ("--max-live-matches", "max_live_matches", int, "waiting plus running matches at once"),
    (
        "--max-deck-cards",
        "max_deck_cards",
        int,
        "cards of explicit deck orders (MatchSettings.deck_orders, 40 a deck) the waiting "
        "and running matches may hold in all",
    ),
    (
        "--waiting-timeout",
        "waiting_timeout_s",
        float,
        "seconds a match may wait for its players before it is aborted (0: never)",
    ),
    (
        "--room-idle",
        "room_idle_s",
        float,
        "seconds a room without connected seats stays in memory (0: forever)",
    ),
    ("--max-rooms", "max_rooms", int, "rooms held in memory at once"),
)

SERVER_HELP = """\
Run the Cirulla match server (gRPC, asyncio).

Clients create matches with CreateMatch (one secret token per seat), then each player
opens a Play stream with its token; the match starts when every seat has joined. Every
finished game is stored in the SQLite database (--db) and can be checked with
`cirulla replay`. The standard gRPC health service and server reflection are enabled,
so `grpcurl -plaintext 127.0.0.1:50051 list` works.

Examples:
  cirulla server                                   # 127.0.0.1:50051, ./cirulla.sqlite3
  CIRULLA_ADMIN_TOKEN=s3cret cirulla server --listen 0.0.0.0:50051
  cirulla server --listen 127.0.0.1:0 --port-file port.txt --db /tmp/t.sqlite3
  cirulla server --http 127.0.0.1:8080             # and the web view on port 8080

With an admin token (--admin-token-file or CIRULLA_ADMIN_TOKEN), CreateMatch, CreateRoom
and AbortMatch need the call metadata `authorization: Bearer <token>`; without one the
server is open, within the limits below (docs/server.md, "Limits and trust"). Stop with
Ctrl-C or SIGTERM: connected players get a Goodbye (reason SERVER_SHUTDOWN) first.
Needs the server extra (pip install -e '.[server]' in the clone).
"""

REPLAY_HELP = """\
Re-run a recorded game through the rules core and check every deal score and the result.

RECORD is a record id stored in --db (see ListRecords, or `cirulla replay --list`), or a
record file: the protocol's Record message as JSON, as `cirulla tournament` writes it
(records/*.json, every game of a match) and `cirulla replay --export ID --out FILE`
writes it. Exits 0 when the replay matches the record, 1 on any mismatch.
--show prints the game as text instead: one line per action, each deal's score lines,
the result (the tournament writes the same text next to each record, records/*.txt).

Examples:
  cirulla replay m-1-3fa2b1-g1 --db cirulla.sqlite3
  cirulla replay --export m-1-3fa2b1-g1 --out game.json
  cirulla replay game.json
  cirulla replay --show tournament-out/20261207-101500/records/m-1-3fa2b1.json
"""


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    bench: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    p = commands.add_parser(
        "server",
        help="run the gRPC match server",
        description=SERVER_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--listen",
        default="127.0.0.1:50051",
        metavar="HOST:PORT",
        help="address to listen on; port 0 picks a free port (default %(default)s)",
    )
    p.add_argument(
        "--db",
        default="cirulla.sqlite3",
        metavar="PATH",
        help="SQLite file for match summaries and game records (default %(default)s)",
    )
    p.add_argument(
        "--port-file", metavar="FILE", help="after binding, write the bound port number to FILE"
    )
    p.add_argument(
        "--admin-token-file",
        metavar="FILE",
        help="require 'authorization: Bearer TOKEN' metadata on CreateMatch, CreateRoom and "
        "AbortMatch, TOKEN being the first line of FILE (or set CIRULLA_ADMIN_TOKEN); "
        "without one, anyone may create, within the limits below",
    )
    p.add_argument(
        "--admin-token",
        metavar="TOKEN",
        help="the admin token itself (visible to other local users in `ps`: prefer "
        "--admin-token-file or CIRULLA_ADMIN_TOKEN)",
    )
    p.add_argument(
        "--parent-pid",
        type=int,
        metavar="PID",
        help="stop when process PID (the program that started this server) exits",
    )
    limits = Limits()
    for flag, attr, kind, text in LIMIT_FLAGS:
        p.add_argument(
            flag,
            type=kind,
            default=getattr(limits, attr),
            dest=attr,
            help=f"{text} (default %(default)s)",
        )
    p.add_argument(
        "--bot-socket",
        metavar="PATH",
        help="also listen on this unix socket for sandboxed bots: only MatchService/Play is "
        "served there (in plaintext, mode 0600), every other rpc is refused; a tournament "
        "or ladder with --sandbox relays its bots here (docs/server.md, 'The bot socket')",
    )
    p.add_argument("--tls-cert", metavar="PEM", help="serve TLS with this certificate chain")
    p.add_argument("--tls-key", metavar="PEM", help="private key for --tls-cert")
    p.add_argument(
        "--disconnect-grace-ms",
        type=int,
        default=30_000,
        metavar="MS",
        help="default time a dropped seat has to reconnect (default %(default)s)",
    )
    p.add_argument(
        "--keep-finished",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long a finished or aborted match stays in memory (late spectators get its "
        "events) before only the database serves it; GetMatch, ListMatches and GetRecord "
        "answer either way (default %(default)s)",
    )
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="also serve the web view here (match list, live view, replays; public "
        "information only), e.g. 127.0.0.1:8080",
    )
    p.add_argument(
        "--ladder",
        metavar="HOST:PORT",
        help="with --http: also show the ladder served at this address (read through its "
        "LadderService: standings, bots, matches) at /ladder; `cirulla ladder serve --http` "
        "does this for its own ladder",
    )
    p.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve Prometheus metrics (cirulla_*) at http://HOST:PORT/metrics",
    )
    add_log_level_argument(p)  # logfmt lines on stderr (cirulla.logs)
    p.set_defaults(func=run_server_command)

    r = commands.add_parser(
        "replay",
        help="check a recorded game against the rules core",
        description=REPLAY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("record", nargs="?", help="record id (in --db) or a record JSON file")
    r.add_argument("--db", default="cirulla.sqlite3", help="database (default %(default)s)")
    r.add_argument("--export", metavar="ID", help="write record ID from --db as JSON (--out)")
    r.add_argument("--out", metavar="FILE", help="output file for --export (default stdout)")
    r.add_argument("--list", action="store_true", help="list record ids in --db, newest first")
    r.add_argument(
        "--show",
        action="store_true",
        help="print RECORD as text (one line per action, score lines) instead of checking it",
    )
    r.set_defaults(func=run_replay_command)

    b = bench.add_parser(
        "server",
        help="the server's CPU per decision and latency at 100 concurrent matches, "
        "against a raw gRPC echo; round trip; gRPC vs in-process game",
        description="Measure the match server on loopback; prints one JSON object "
        "(docs/performance.md).",
    )
    b.add_argument("--json", action="store_true", help="print JSON (always on; for symmetry)")
    b.add_argument(
        "--decisions",
        type=int,
        default=2000,
        help="decisions timed on one stream (default %(default)s)",
    )
    b.add_argument(
        "--matches", type=int, default=100, help="matches at once in the load (default %(default)s)"
    )
    b.add_argument(
        "--total",
        type=int,
        default=None,
        help="matches played per load run (default: --matches)",
    )
    b.add_argument(
        "--target", type=int, default=51, help="game target of the load (default %(default)s)"
    )
    b.add_argument(
        "--think-ms",
        type=float,
        default=20.0,
        help="a seat's thinking time per decision in the paced run, whose latency is "
        "reported (default %(default)s)",
    )
    b.add_argument(
        "--processes", type=int, default=2, help="client processes (default %(default)s)"
    )
    b.add_argument(
        "--baseline-python",
        metavar="PYTHON",
        help="also run the load against a server run by this interpreter (another "
        "installation: the code before a change, measured in the same run)",
    )
    b.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="load runs per server, alternated with the baseline's (A B B A ...); the "
        "JSON adds every round and their medians, which the targets then read: on a "
        "shared machine one run of each is not an A/B (default %(default)s)",
    )
    b.set_defaults(func=run_bench_command)

    k = bench.add_parser(
        "soak",
        help="server memory and decision latency over a long run of concurrent matches",
        description="A `cirulla server` process under CONCURRENCY matches at once until "
        "TOTAL have finished (random seats in this process); prints one JSON object: "
        "decision round trip p50/p99/max, server memory start/peak/end, server CPU.",
    )
    k.add_argument("--json", action="store_true", help="print JSON (always on; for symmetry)")
    k.add_argument(
        "--concurrency", type=int, default=200, help="matches in play at once (default %(default)s)"
    )
    k.add_argument(
        "--total", type=int, default=400, help="matches to finish in all (default %(default)s)"
    )
    k.add_argument("--target", type=int, default=11, help="game target (default %(default)s)")
    k.add_argument(
        "--processes",
        type=int,
        default=4,
        help="client processes playing the seats (default %(default)s)",
    )
    k.set_defaults(func=run_soak_command)


def admin_token_of(args: argparse.Namespace) -> str | None:
    """--admin-token-file, else CIRULLA_ADMIN_TOKEN, else --admin-token (None: open)."""
    if args.admin_token_file:
        try:
            lines = Path(args.admin_token_file).read_text().splitlines()
        except OSError as exc:
            raise ValueError(
                f"--admin-token-file {args.admin_token_file}: {exc.strerror}"
            ) from None
        token = lines[0].strip() if lines else ""
        if not token:
            raise ValueError(f"--admin-token-file {args.admin_token_file} is empty")
        return token
    return os.environ.get(ADMIN_TOKEN_ENV) or args.admin_token or None


def run_server_command(args: argparse.Namespace) -> int:
    from cirulla.server.app import serve  # the server extra (gRPC health, reflection)

    try:
        check_listen(args.listen)
    except ValueError as exc:
        print(f"cirulla server: {exc}", file=sys.stderr)
        return 2
    setup_logging(args.log_level)
    try:
        limits = Limits(**{attr: getattr(args, attr) for _, attr, _, _ in LIMIT_FLAGS})
        asyncio.run(
            serve(
                args.listen,
                args.db,
                port_file=args.port_file,
                parent_pid=args.parent_pid,
                limits=limits,
                admin_token=admin_token_of(args),
                tls_cert=args.tls_cert,
                tls_key=args.tls_key,
                disconnect_grace_ms=args.disconnect_grace_ms,
                keep_finished_s=args.keep_finished,
                http=args.http,
                ladder=args.ladder,
                metrics=args.metrics,
                bot_socket=args.bot_socket,
            )
        )
    except (OSError, ValueError) as exc:
        print(f"cirulla server: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # grpc: "Failed to bind to address ..."
        print(f"cirulla server: cannot listen on {args.listen}: {exc}", file=sys.stderr)
        return 2
    return 0


def check_listen(address: str) -> None:
    """``--listen`` is HOST:PORT (``[::1]:50051`` for IPv6), port 0-65535 (0 = any free)."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(
            f"--listen takes HOST:PORT with a port 0..65535 (0: any free one), "
            f"e.g. 127.0.0.1:50051, not {address!r}"
        )


def run_replay_command(args: argparse.Namespace) -> int:
    if args.list or args.export:
        if not Path(args.db).exists():
            print(f"cirulla replay: no database {args.db}", file=sys.stderr)
            return 2
        try:
            return _list_or_export(args)
        except OSError as exc:  # not a database, an --out that cannot be written: one line
            print(f"cirulla replay: {exc}", file=sys.stderr)
            return 2
    return _check_or_show(args)


def _list_or_export(args: argparse.Namespace) -> int:
    """``replay --list`` or ``replay --export ID [--out FILE]``."""
    store = Store(args.db)
    if args.list:
        for rec in store.list_records(limit=1000):
            res = rec["result"]
            print(
                f"{rec['record_id']}\t{rec['finish_time']}\twinner side {res['winner']}"
                f"\t{res['reason']}\t{res['totals']}"
            )
        return 0
    stored = store.get_record(args.export)
    if stored is None:
        pruned = store.pruned(args.export)
        said = f"record {args.export!r}: {pruned}" if pruned else f"no record {args.export!r}"
        print(f"cirulla replay: {said} in {args.db}", file=sys.stderr)
        return 2
    text = records.dumps(records.record_dict(record_pb(stored)))
    if args.out:
        try:
            Path(args.out).write_text(text)
        except OSError as exc:
            raise OSError(f"--out {args.out}: {exc.strerror}") from None
    else:
        print(text, end="")
    return 0


def _check_or_show(args: argparse.Namespace) -> int:
    """``replay RECORD`` (check it) or ``replay --show RECORD``."""
    if not args.record:
        print(
            "cirulla replay: give a RECORD (id or JSON file), --export ID or --list",
            file=sys.stderr,
        )
        return 2
    try:
        record = load_record(args.record, args.db)
    except (OSError, LookupError, ValueError) as exc:
        print(f"cirulla replay: {exc}", file=sys.stderr)
        return 2
    if args.show:
        try:
            games = public_records(record)
        except ValueError as exc:
            print(f"cirulla replay: {exc}", file=sys.stderr)
            return 2
        print("\n".join(records.record_text(game) for game in games), end="")
        return 0
    try:
        reports = replay_document(record)
    except ValueError as exc:
        print(f"cirulla replay: {exc}", file=sys.stderr)
        return 2
    for report in reports:
        print(report.summary())
        for problem in report.mismatches:
            print(f"  mismatch: {problem}")
    return 0 if all(report.ok for report in reports) else 1


def run_soak_command(args: argparse.Namespace) -> int:
    from cirulla.server.soak import run_soak  # the server extra (through its server)

    if args.concurrency < 1 or args.total < 1:
        print("cirulla bench soak: --concurrency and --total must be at least 1", file=sys.stderr)
        return 2
    result = run_soak(args.concurrency, args.total, args.target, args.processes)
    print(json.dumps(result, indent=1))
    return 0


def run_bench_command(args: argparse.Namespace) -> int:
    from cirulla.server.bench import LoadPlan, run_bench  # the server extra (its server)

    if min(args.matches, args.decisions, args.processes, args.total or 1, args.rounds) < 1:
        print(
            "cirulla bench server: --matches, --total, --decisions, --processes and --rounds "
            "must be at least 1",
            file=sys.stderr,
        )
        return 2
    plan = LoadPlan(
        matches=args.matches,
        total=args.total or args.matches,
        target=args.target,
        think_ms=args.think_ms,
        processes=args.processes,
        baseline_python=args.baseline_python,
        rounds=args.rounds,
    )
    result = run_bench(args.decisions, plan)
    print(json.dumps(result, indent=1))
    return 0

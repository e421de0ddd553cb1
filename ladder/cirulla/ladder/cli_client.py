"""What every ``cirulla ladder`` client command shares: finding the ladder (its state
file, ``--server``, TLS, the admin token), calling its LadderService (or reading its
database when it is not running), and the lines and tables the commands print.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from rich.console import Console, RenderableType
from rich.table import Table

from cirulla import ladder_words
from cirulla.clients.matches.outcome import Outcome
from cirulla.ladder import endings
from cirulla.ladder.defaults import DEFAULT_DB, STATE_FILE, LadderState
from cirulla.ladder.fields import plain
from cirulla.logs import quiet_grpc
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc


class CommandError(Exception):
    """One line for stderr."""


def ladder_address(args: argparse.Namespace) -> tuple[str, LadderState]:
    if args.server:
        return args.server, LadderState()
    path = Path(STATE_FILE)
    if not path.exists() and Path(DEFAULT_DB).exists():
        # the ladder of this folder, stopped: its state file goes with it
        raise CommandError(
            f"the ladder of this folder is not running (its database {DEFAULT_DB} is here, "
            f"no {STATE_FILE}): start it with `cirulla ladder serve`, or pass --server HOST:PORT"
        )
    if not path.exists():
        raise CommandError(
            f"no ladder in this folder (no {STATE_FILE}): start one with "
            "`cirulla ladder serve`, or pass --server HOST:PORT"
        )
    try:
        state: LadderState = json.loads(path.read_text())
        return str(state["address"]), state
    except (ValueError, KeyError) as exc:
        raise CommandError(f"{STATE_FILE} is not a ladder state file: {exc}") from None


def admin_metadata(args: argparse.Namespace, state: LadderState) -> tuple[tuple[str, str], ...]:
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


def tls_roots(args: argparse.Namespace, state: LadderState) -> bytes | None:
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


def open_channel(args: argparse.Namespace, address: str, state: LadderState) -> grpc.Channel:
    roots = tls_roots(args, state)
    if roots is None:
        return grpc.insecure_channel(address)
    return grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=roots))


#: The response message of an rpc the command calls.
Response = TypeVar("Response", bound=Message)

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

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise CommandError(f"{details} ({code.name})")


def database_of(args: argparse.Namespace, state: LadderState) -> str | None:
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


def read_database(db: str, method: str, request: Message, response: type[Response]) -> Response:
    """Serve a read rpc from the database itself (the same code the ladder runs), after
    one line on stderr saying so."""

    from cirulla.ladder.database import database_url, display_url, first_line, open_current
    from cirulla.ladder.service import LadderService
    from cirulla.ladder.store import LadderStore

    shown = display_url(database_url(db))
    if shown not in _READ_NOTICES:  # a command reading several pages says it once
        _READ_NOTICES.add(shown)
        print(f"ladder not running: read from the database at {shown}", file=sys.stderr)
    try:
        engine = open_current(db)  # a read never migrates (a ladder may be serving it)
    except Exception as exc:  # a database that is down or not a ladder's: one line
        raise CommandError(f"cannot read the database at {shown}: {first_line(exc)}") from None
    try:
        service = LadderService(LadderStore(engine))
        got = asyncio.run(getattr(service, method)(request, _LocalContext()))
    finally:
        engine.dispose()
    return answer(method, got, response)


def answer(method: str, got: object, response: type[Response]) -> Response:
    """``got``, the answer of the rpc ``method``, as its response message type."""
    if not isinstance(got, response):
        raise TypeError(f"{method} answered a {type(got).__name__}, not a {response.__name__}")
    return got


def call(
    args: argparse.Namespace,
    method: str,
    request: Message,
    response: type[Response],
    admin: bool = False,
    extra: tuple[tuple[str, str], ...] = (),
) -> Response:
    """The rpc ``method`` of the ladder with ``request``: its answer, a ``response``; a
    read served from the database when no ladder answers."""
    reads = method in READ_METHODS and not admin
    try:
        address, state = ladder_address(args)
    except CommandError:
        db = database_of(args, LadderState()) if reads else None
        if db is None:
            raise
        return read_database(db, method, request, response)
    metadata = (*(admin_metadata(args, state) if admin else ()), *extra)
    secure = tls_roots(args, state) is not None
    with open_channel(args, address, state) as channel:
        stub = ladder_pb2_grpc.LadderServiceStub(channel)
        try:
            got = getattr(stub, method)(request, timeout=30, metadata=metadata)
        except grpc.RpcError as exc:
            # a ladder named by --server is somewhere else: its database only with --db
            local = not args.server or getattr(args, "db", None)
            if exc.code() == grpc.StatusCode.UNAVAILABLE and reads and local:
                db = database_of(args, state)
                if db is not None:
                    return read_database(db, method, request, response)
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
    return answer(method, got, response)


def run_command(
    fn: Callable[[argparse.Namespace], int | None],
) -> Callable[[argparse.Namespace], int]:
    def wrapper(args: argparse.Namespace) -> int:
        quiet_grpc()  # read when grpc is first imported
        try:
            return int(fn(args) or 0)
        except CommandError as exc:
            print(f"cirulla ladder {args.ladder_command}: {exc}", file=sys.stderr)
            return 2

    return wrapper


def to_json(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def when(ts: Timestamp) -> str:
    if not ts.seconds:
        return "-"
    return datetime.datetime.fromtimestamp(ts.seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")


def queue_pb(name: str | None) -> ladder_pb2.LadderQueue:
    return ladder_words.QUEUES[name] if name else ladder_pb2.LADDER_QUEUE_UNSPECIFIED


def state_text(bot: ladder_pb2.LadderBot) -> str:
    state = ladder_pb2.BotState.Name(bot.state).removeprefix("BOT_STATE_").lower()
    if bot.state == ladder_pb2.BOT_STATE_ACTIVE and bot.offline:
        # not "validating": nothing is played until the bot connects in again
        state = "offline (not connected)"
        if bot.validation_games_left:
            state += f", {bot.validation_games_left} validation games left"
    elif bot.state == ladder_pb2.BOT_STATE_ACTIVE and bot.validation_games_left:
        state = f"validating ({bot.validation_games_left} left)"
    return f"{state}: {bot.state_reason}" if bot.state_reason else state


def match_line(m: ladder_pb2.LadderMatch) -> list[str]:
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


def say(console: Console, item: RenderableType) -> None:
    """Print a line of the ladder's data: never markup, never an escape sequence."""
    console.print(plain(item) if isinstance(item, str) else item)


def matches_table(matches: Iterable[ladder_pb2.LadderMatch], title: str | None = None) -> Table:
    table = Table(title=title)
    for column in ("match", "scheduled", "status", "seats", "result"):
        table.add_column(column)
    for m in matches:
        table.add_row(*(plain(cell) for cell in match_line(m)))
    return table

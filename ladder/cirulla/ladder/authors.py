"""The author rpcs (GetBotLogs, GetBotRecord, ListBotEvents) and the admin's RotateBotKey.

A bot's author holds its key (``AddBotResponse.bot_key``, once), not the admin token, and
should still see their bot's life, as aiarena and Kaggle show authors theirs: its own
output in its games, its games' records, why it was deactivated. The key comes as
``authorization: Bearer <bot key>`` metadata (never in a request field, so it is in no
log of a request) and opens that one bot's data and nothing more. The admin token opens
every bot's. Logs and records are files of the ladder process that played the game
(``--data``: ``logs/``, ``records/``); a game another process played is answered with a
note (logs) or NOT_FOUND (record).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import grpc

from cirulla.clients.matches.files import log_tail, printable, read_tail, safe_name
from cirulla.ladder.messages import Context, bot_pb, match_pb, timestamp
from cirulla.ladder.store_authors import OwnMatch, Withheld
from cirulla.ladder.store_rows import LadderError, NotFound, Refused
from cirulla.server.records import records_from_document
from cirulla.server.replay import read_record_file
from cirulla.v1 import ladder_pb2, match_pb2

if TYPE_CHECKING:
    from cirulla.ladder.service import LadderService

T = TypeVar("T")

#: characters of one game's log an author reads at most
LOG_CHARS = 64_000
EVENT_KINDS = {
    "registered": ladder_pb2.BOT_EVENT_KIND_REGISTERED,
    "new-version": ladder_pb2.BOT_EVENT_KIND_NEW_VERSION,
    "paused": ladder_pb2.BOT_EVENT_KIND_PAUSED,
    "active": ladder_pb2.BOT_EVENT_KIND_RESUMED,
    "deactivated": ladder_pb2.BOT_EVENT_KIND_DEACTIVATED,
    "removed": ladder_pb2.BOT_EVENT_KIND_REMOVED,
    "key-rotated": ladder_pb2.BOT_EVENT_KIND_KEY_ROTATED,
}


async def call_store(context: Context, fn: Callable[[], T]) -> T:
    """A store call in a thread; its refusal one gRPC error line (every rpc of the
    ladder's servicer goes through here, so a refusal maps to one status everywhere)."""
    try:
        return await asyncio.to_thread(fn)
    except NotFound as exc:
        await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
    except Refused as exc:
        await context.abort(grpc.StatusCode.PERMISSION_DENIED, str(exc))
    except Withheld as exc:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
    except LadderError as exc:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    raise AssertionError("unreachable")


async def check_author(service: LadderService, context: Context, bot_name: str) -> None:
    """The call carries ``bot_name``'s key, or the admin token; else one refusal line."""
    if not bot_name:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "bot_name: give the bot's name")
    metadata = dict(context.invocation_metadata() or ())
    auth = str(metadata.get("authorization", ""))
    if not auth:
        await context.abort(
            grpc.StatusCode.UNAUTHENTICATED,
            "this rpc needs the bot's key: send 'authorization: Bearer <bot key>' metadata",
        )
    if service._is_admin(context):
        return
    key = auth.removeprefix("Bearer ").strip()
    await call_store(context, lambda: service.store.authors.check_key(bot_name, key))


def _log_of(data: Path | None, own: OwnMatch, seat: int, rel: str) -> tuple[str, str]:
    """(text, note) of one seat's log, read from this process's data folder."""
    if data is None:
        return "", "no logs are kept by this ladder process"
    logs = (data / "logs").resolve()
    path = (
        (data / rel).resolve() if rel else logs / f"{safe_name(own['server_match_id'])}-{seat}.log"
    )
    if not path.is_relative_to(logs) or not path.is_file():
        where = own["match"]["server_address"] or "another ladder process"
        return "", f"log not kept here (the game was played by the ladder process at {where})"
    server_id = own["server_match_id"]
    if server_id and not path.name.startswith(f"{safe_name(server_id)}-"):
        # A kept-alive process's log spans its matches: only this game's part is the
        # author's to read here, never a later game's (which may be a withheld twin).
        # When that part has left the log's last window, nothing is shown.
        try:
            window = read_tail(path)
        except OSError:
            window = ""
        if f"assignment: match {server_id} " not in window:
            return "", "this game's part of the log is no longer kept (a long-lived process)"
    text = log_tail(path, chars=LOG_CHARS, match_id=server_id or None)
    return printable(text), ""


async def get_bot_logs(
    service: LadderService, request: ladder_pb2.GetBotLogsRequest, context: Context
) -> ladder_pb2.GetBotLogsResponse:
    await check_author(service, context, request.bot_name)
    authors = service.store.authors
    if request.match_id:
        games = [
            await call_store(context, lambda: authors.own_match(request.bot_name, request.match_id))
        ]
    else:
        size = min(request.page_size or 10, 100)
        games = await call_store(context, lambda: authors.own_matches(request.bot_name, size))
    out = ladder_pb2.GetBotLogsResponse()
    for own in games:
        for seat in own["seats"]:
            text, note = await asyncio.to_thread(
                _log_of, service.data, own, seat["seat"], seat["log"]
            )
            out.logs.add(
                match_id=own["match"]["id"],
                seat=seat["seat"],
                text=text,
                note=note,
                finish_time=timestamp(own["match"]["finished_at"]),
            )
    return out


def _records_of(data: Path | None, own: OwnMatch) -> list[match_pb2.Record] | None:
    """The game's records from this process's record file; None when it keeps none."""
    if data is None or not own["server_match_id"]:
        return None
    stem = data / "records" / safe_name(own["server_match_id"])
    # gzip'd by the ladder (docs/ladder.md, "Running it for months"), plain from an older one
    for path in (stem.with_name(stem.name + ".json.gz"), stem.with_name(stem.name + ".json")):
        try:
            doc = json.loads(read_record_file(path))
        except (OSError, ValueError):
            continue
        return records_from_document(doc)
    return None


async def get_bot_record(
    service: LadderService, request: ladder_pb2.GetBotRecordRequest, context: Context
) -> ladder_pb2.GetBotRecordResponse:
    await check_author(service, context, request.bot_name)
    if not request.match_id:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id: give a game of the bot")
    own = await call_store(
        context, lambda: service.store.authors.own_match(request.bot_name, request.match_id)
    )
    records = await asyncio.to_thread(_records_of, service.data, own)
    server = service.server_store
    if records is None and server is not None and own["server_match_id"]:
        pruned = server.pruned(f"{own['server_match_id']}-g1")
        if pruned:  # --keep-records: gone, said in one line
            await context.abort(grpc.StatusCode.NOT_FOUND, f"match_id: {pruned}")
    if records is None:
        where = own["match"]["server_address"] or "another ladder process"
        await context.abort(
            grpc.StatusCode.NOT_FOUND,
            f"match_id: no record of {own['match']['id']} here (a game never played, as a "
            f"forfeit before the first move, has none; one played by another ladder process "
            f"is kept there: {where})",
        )
    return ladder_pb2.GetBotRecordResponse(match=match_pb(own["match"]), records=records)


async def list_bot_events(
    service: LadderService, request: ladder_pb2.ListBotEventsRequest, context: Context
) -> ladder_pb2.ListBotEventsResponse:
    await check_author(service, context, request.bot_name)
    size = min(request.page_size or 100, 1000)
    bot, events = await call_store(
        context,
        lambda: (
            service.store.get_bot(request.bot_name),
            service.store.authors.events(request.bot_name, size),
        ),
    )
    return ladder_pb2.ListBotEventsResponse(
        bot=bot_pb(bot),
        events=[
            ladder_pb2.BotEvent(
                kind=EVENT_KINDS.get(e["state"], ladder_pb2.BOT_EVENT_KIND_UNSPECIFIED),
                version=e["version"],
                reason=e["reason"],
                time=timestamp(e["at"]),
            )
            for e in events
        ],
    )


async def rotate_bot_key(
    service: LadderService, request: ladder_pb2.RotateBotKeyRequest, context: Context
) -> ladder_pb2.RotateBotKeyResponse:
    await service._check_admin(context)
    key = await call_store(context, lambda: service.store.bots.rotate_author_key(request.bot_name))
    return ladder_pb2.RotateBotKeyResponse(bot_key=key)

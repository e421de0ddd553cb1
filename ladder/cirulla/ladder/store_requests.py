"""Requested matches: the only writer of ``match_requests``.

A request (``cirulla ladder request``, RequestMatch) queues a match or series between
named bots, claimed before any scheduled match; its games are ladder matches
(``store_matches``) that carry the request's id.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Connection, RowMapping, insert, select

from cirulla.ladder.defaults import MAX_REQUEST_GAMES, QUEUES
from cirulla.ladder.fields import FieldError, check_name, shown
from cirulla.ladder.matchmaking import SEED_BITS
from cirulla.ladder.schema import match_requests
from cirulla.ladder.store_bots import BotStore
from cirulla.ladder.store_rows import (
    OWNER_REQUEST_GAMES,
    LadderError,
    MatchConfig,
    MatchPlan,
    NotFound,
    Refused,
    RequestView,
    SeatPlan,
    hash_key,
    new_id,
)

if TYPE_CHECKING:
    from cirulla.ladder.store import LadderStore


class RequestStore:
    """Queuing requested matches and reading them back."""

    def __init__(self, ladder: LadderStore) -> None:
        self.ladder = ladder

    def request_matches(
        self,
        names: Sequence[str],
        games: int = 1,
        *,
        unrated: bool = False,
        config: MatchConfig | None = None,
        queues: Sequence[str] = QUEUES,
        owner_key: str | None = None,
    ) -> RequestView:
        """Queue a match or series between ``names`` (2-4 bots; their number is the
        queue), claimed before any scheduled match; the request as ``match_requests``
        shows it.

        ``owner_key``: the caller is not the operator but holds the bot key of one of the
        bots: only unrated games, against active bots, at most ``OWNER_REQUEST_GAMES``
        of its requests unplayed at once. Series of managed bots in ``2p``/``4p`` are
        duplicate pairs (an odd last game alone); with a connect-in bot, or in ``3p``,
        single games whose seats rotate.
        """
        names = [str(n) for n in names]
        for name in names:
            try:
                check_name("bot_names", name)
            except FieldError as exc:
                raise LadderError(str(exc)) from None
        if not 2 <= len(names) <= 4:
            raise LadderError(f"bot_names: name 2 to 4 bots, not {len(names)}")
        if len(set(names)) != len(names):
            raise LadderError("bot_names: a bot may take only one seat")
        games = games or 1
        if not 1 <= games <= MAX_REQUEST_GAMES:
            raise LadderError(f"games: 1 to {MAX_REQUEST_GAMES}, not {games}")
        queue = {2: "2p", 3: "3p", 4: "4p"}[len(names)]
        if queue not in queues:
            raise LadderError(f"bot_names: this ladder does not play the {queue} queue")
        now = self.ladder.now()
        bots = self.ladder.bots
        with self.ladder.engine.begin() as conn:
            infos = [bots.info(conn, BotStore.row(conn, n)["id"]) for n in names]
            requested_by = "admin"
            if owner_key is not None:
                owner = next(
                    (
                        b
                        for b in infos
                        if (row := BotStore.row(conn, b["name"]))["bot_key_hash"]
                        and secrets.compare_digest(row["bot_key_hash"], hash_key(owner_key))
                    ),
                    None,
                )
                if owner is None:
                    raise Refused("bot_key: not the key of any of the bots named")
                if not unrated:
                    raise Refused("unrated: a bot's owner may request only unrated games")
                for bot in infos:
                    if bot is not owner and bot["state"] != "active":
                        raise Refused(f"bot {shown(bot['name'])} is {bot['state']}")
                requested_by = f"owner of {owner['name']}"
                open_games = self.ladder.views.open_games_requested_by(conn, requested_by)
                if open_games + games > OWNER_REQUEST_GAMES:
                    raise Refused(
                        f"games: an owner may have {OWNER_REQUEST_GAMES} requested games "
                        f"waiting or playing; {open_games} are"
                    )
            for bot in infos:
                if bot["state"] == "removed":
                    raise LadderError(f"bot {shown(bot['name'])} was removed from the ladder")
                if bot["connect_in"] and bot["offline"]:
                    raise LadderError(
                        f"bot {shown(bot['name'])} is offline (a connect-in bot with no live "
                        "enrollment): its games could not be played"
                    )
                if not unrated and queue not in bot["queues"]:
                    raise LadderError(
                        f"bot {shown(bot['name'])} does not play the {queue} queue: request "
                        "it unrated, or register the bot for that queue"
                    )
            request_id = new_id("rq")
            conn.execute(
                insert(match_requests).values(
                    id=request_id,
                    queue=queue,
                    bots=json.dumps(names),
                    games=games,
                    unrated=unrated,
                    requested_by=requested_by,
                    created_at=now,
                )
            )
        versions = [b["version_id"] for b in infos]
        paired = queue != "3p" and not any(b["connect_in"] for b in infos)
        plans: list[MatchPlan] = []
        index = 0
        while index < games:
            seed = secrets.randbits(SEED_BITS)
            if paired and games - index >= 2:
                order = versions[:]
                swapped = (
                    [order[1], order[0]]
                    if queue == "2p"
                    else [order[1], order[0], order[3], order[2]]
                )
                pair = new_id("lp")
                for offset, seats in enumerate((order, swapped)):
                    # pair_index: the game's place in the series (claims go in that order)
                    plans.append(
                        _request_plan(
                            queue, seats, seed, config, request_id, unrated, pair, index + offset
                        )
                    )
                index += 2
            else:
                turn = index % len(versions)
                seats = versions[turn:] + versions[:turn]
                plans.append(
                    _request_plan(queue, seats, seed, config, request_id, unrated, pair_index=index)
                )
                index += 1
        self.ladder.matches.schedule(plans)
        return self.match_request(request_id)

    def match_request(self, request_id: str) -> RequestView:
        """One request with its games (public views: withheld twins stay withheld)."""
        with self.ladder.engine.connect() as conn:
            row = (
                conn.execute(select(match_requests).where(match_requests.c.id == request_id))
                .mappings()
                .first()
            )
            if row is None:
                raise NotFound(f"no match request {shown(request_id)}")
            return self._public_request(conn, row)

    def match_requests(self, bot: str | None = None, limit: int = 50) -> list[RequestView]:
        """Requests, newest first; with ``bot``, only those naming it."""
        with self.ladder.engine.connect() as conn:
            if bot is not None:
                BotStore.row(conn, bot)  # NotFound for an unknown name
            rows = (
                conn.execute(
                    select(match_requests).order_by(
                        match_requests.c.created_at.desc(), match_requests.c.id
                    )
                )
                .mappings()
                .all()
            )
            out = []
            for row in rows:
                if bot is not None and bot not in json.loads(row["bots"]):
                    continue
                out.append(self._public_request(conn, row))
                if len(out) >= limit:
                    break
            return out

    def _public_request(self, conn: Connection, row: RowMapping) -> RequestView:
        matches = self.ladder.views.of_request(conn, row["id"])
        return {
            "id": row["id"],
            "queue": row["queue"],
            "bots": json.loads(row["bots"]),
            "games": row["games"],
            "unrated": bool(row["unrated"]),
            "requested_by": row["requested_by"],
            "created_at": row["created_at"],
            "matches": matches,
            "finished": sum(1 for m in matches if m["status"] == "finished"),
            "cancelled": sum(1 for m in matches if m["status"] == "cancelled"),
        }


def _request_plan(
    queue: str,
    versions: Sequence[int | None],
    seed: int,
    config: MatchConfig | None,
    request_id: str,
    unrated: bool,
    pair_id: str | None = None,
    pair_index: int = 0,
) -> MatchPlan:
    seats = tuple(
        SeatPlan(i, i % 2 if queue == "4p" else i, int(v or 0)) for i, v in enumerate(versions)
    )
    return MatchPlan(
        queue,
        seats,
        seed,
        config or MatchConfig(),
        pair_id=pair_id,
        pair_index=pair_index,
        request_id=request_id,
        unrated=unrated,
    )

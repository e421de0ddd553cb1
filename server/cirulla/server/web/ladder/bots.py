"""A bot's page (``/ladder/bots/NAME``, ``templates/ladder/bot.html``): its state and its
limits in the sandbox, its ratings and their chart over time, its versions and its newest
matches, all from ``GetBotHistory``."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cirulla.server.web import templating
from cirulla.server.web.chart import Point, rating_chart
from cirulla.server.web.ladder import BOT_PAGE_MATCHES, QUEUE_NAMES
from cirulla.server.web.ladder.reader import LadderReader
from cirulla.server.web.ladder.views import (
    guarded,
    limits_text,
    match_row,
    seconds,
    state_text,
    when,
)
from cirulla.v1 import ladder_pb2


@dataclass(frozen=True)
class RatingRow:
    queue: str
    score: float
    mu: float
    sigma: float
    games: int
    wins: int
    draws: int
    provisional: bool


@dataclass(frozen=True)
class VersionRow:
    version: int
    spec: str
    queues: list[str]
    limits: str
    registered: str


def chart_points(h: ladder_pb2.GetBotHistoryResponse) -> list[Point]:
    return [
        Point(
            seconds(p.time) or 0.0,
            p.mu,
            p.sigma,
            p.version,
            p.match_id,
            QUEUE_NAMES.get(p.queue, "?"),
        )
        for p in h.rating_history
    ]


async def bot_page(reader: LadderReader, request: Request) -> Response:
    h = await reader.history(request.path_params["name"])
    bot = h.bot
    many = len(h.matches) > BOT_PAGE_MATCHES
    return templating.page(
        "ladder/bot.html",
        title=f"Ladder bot {bot.name}",
        bot=bot,
        state=state_text(bot),
        limits=limits_text(bot),
        ratings=[
            RatingRow(
                QUEUE_NAMES.get(r.queue, "?"),
                r.score,
                r.mu,
                r.sigma,
                r.games,
                r.wins,
                r.draws,
                r.provisional,
            )
            for r in h.ratings
        ],
        chart=rating_chart(chart_points(h), f"{bot.name}: rating over time"),
        versions=[
            VersionRow(
                v.version,
                v.spec,
                [QUEUE_NAMES.get(q, "?") for q in v.queues],
                limits_text(v),
                when(v.create_time),
            )
            for v in sorted(h.versions, key=lambda v: -v.version)
        ],
        every=f"/ladder/matches?{urlencode({'bot': bot.name})}" if many else "",
        shown=BOT_PAGE_MATCHES,
        total=len(h.matches),
        matches=[match_row(m) for m in list(h.matches)[:BOT_PAGE_MATCHES]],
    )


def routes(reader: LadderReader) -> list[Route]:
    async def page(request: Request) -> Response:
        return await bot_page(reader, request)

    return [Route("/ladder/bots/{name}", guarded("Ladder bot", page))]

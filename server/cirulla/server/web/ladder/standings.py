"""The ladder's standings, one queue at a time (``/ladder``, ``templates/ladder/
standings.html``), and the same as JSON (``/api/ladder``)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cirulla.server.web import templating
from cirulla.server.web.chart import utc
from cirulla.server.web.ladder import QUEUES
from cirulla.server.web.ladder.reader import LadderReader
from cirulla.server.web.ladder.views import guarded, queue_of, state_text
from cirulla.server.web.replay import message_page
from cirulla.v1 import ladder_pb2


@dataclass(frozen=True)
class StandingRow:
    rank: int
    name: str
    provisional: bool
    score: float
    mu: float
    sigma: float
    games: int
    wins: int
    draws: int
    state: str
    version: int


def standing_rows(got: ladder_pb2.GetStandingsResponse) -> list[StandingRow]:
    return [
        StandingRow(
            e.rank,
            e.bot.name,
            e.rating.provisional,
            e.rating.score,
            e.rating.mu,
            e.rating.sigma,
            e.rating.games,
            e.rating.wins,
            e.rating.draws,
            state_text(e.bot),
            e.bot.version,
        )
        for e in got.entries
    ]


def routes(reader: LadderReader) -> list[Route]:
    async def standings(request: Request) -> Response:
        queue = queue_of(request)
        if queue is None:
            return message_page("Ladder", "", "queue: one of 2p, 3p, 4p", 400, error=False)
        got = await reader.standings(queue)
        return templating.page(
            "ladder/standings.html",
            title="Cirulla ladder",
            queues=list(QUEUES),
            queue=queue,
            rows=standing_rows(got),
            rated_games=got.rated_games,
            read=utc(time.time()),
        )

    async def api_standings(request: Request) -> Response:
        queue = queue_of(request)
        if queue is None:
            return JSONResponse({"error": "queue: one of 2p, 3p, 4p"}, 400)
        got = await reader.standings(queue)
        return JSONResponse(
            {
                "queue": queue,
                "rated_games": got.rated_games,
                "standings": [
                    {
                        "rank": e.rank,
                        "bot": e.bot.name,
                        "version": e.bot.version,
                        "state": state_text(e.bot),
                        "score": round(e.rating.score, 2),
                        "mu": round(e.rating.mu, 2),
                        "sigma": round(e.rating.sigma, 2),
                        "games": e.rating.games,
                        "wins": e.rating.wins,
                        "provisional": e.rating.provisional,
                    }
                    for e in got.entries
                ],
            }
        )

    return [
        Route("/ladder", guarded("Ladder standings", standings)),
        Route("/api/ladder", guarded("Ladder standings", api_standings)),
    ]

"""Every route of the ladder's pages, each page family's from its own module."""

from __future__ import annotations

from starlette.routing import Route

from cirulla.server.web.ladder import author, bots, games, matches, standings
from cirulla.server.web.ladder.reader import LadderReader


def ladder_routes(reader: LadderReader) -> list[Route]:
    """The ladder's pages under /ladder (and its standings as JSON, /api/ladder), read
    through ``reader``."""
    return [
        *standings.routes(reader),
        *bots.routes(reader),
        *matches.routes(reader),
        *author.routes(reader),
        *games.routes(reader),
    ]

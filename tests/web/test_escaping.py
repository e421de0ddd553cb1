"""The ladder's pages escape every string a bot's author or the ladder put in them (a bot's
name, its state reason, last failure and log, a version's spec, a match's notes, a
cancel reason, a forfeit's kind, a filter typed in the query), and a withheld twin shows
nothing of its result: the templates' autoescape, checked on the pages themselves.

The pages are served by the real routes (``ladder_routes``) from a reader whose rpcs
answer fixed messages, called in-process over ASGI (no browser, no ladder)."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

from google.protobuf.timestamp_pb2 import Timestamp
from starlette.applications import Starlette

from cirulla.server.web.ladder.reader import LadderReader, Match
from cirulla.server.web.ladder.routes import ladder_routes
from cirulla.v1 import ladder_pb2 as lp

EVIL = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
#: an attribute breaker and a tag, as a note or a reason could carry them
MARKUP = "\"'><img src=x onerror=alert(2)>"


def stamp(seconds: int) -> Timestamp:
    return Timestamp(seconds=seconds)


BOT = lp.LadderBot(
    name=EVIL,
    version=2,
    spec=f"cmd:{MARKUP}",
    queues=[lp.LADDER_QUEUE_TWO_PLAYERS],
    state=lp.BOT_STATE_PAUSED,
    state_reason=MARKUP,
    last_failure=MARKUP,
    last_log=EVIL,
    create_time=stamp(1_700_000_000),
)
FINISHED = lp.LadderMatch(
    match_id="lm-1",
    server_match_id="m-1",
    queue=lp.LADDER_QUEUE_TWO_PLAYERS,
    status=lp.LADDER_MATCH_STATUS_FINISHED,
    seats=[
        lp.LadderSeat(seat=0, side=0, bot_name=EVIL, version=2, points=0, fault=MARKUP),
        lp.LadderSeat(seat=1, side=1, bot_name="rnd", version=1, points=0),
    ],
    end_reason=lp.LADDER_END_REASON_FORFEIT,
    forfeit_kind=MARKUP,
    notes=[MARKUP, EVIL],
    create_time=stamp(1_700_000_000),
)
CANCELLED = lp.LadderMatch(
    match_id="lm-2",
    queue=lp.LADDER_QUEUE_TWO_PLAYERS,
    status=lp.LADDER_MATCH_STATUS_CANCELLED,
    cancel_reason=MARKUP,
    seats=[lp.LadderSeat(seat=0, side=0, bot_name=EVIL, version=2)],
)
#: a withheld twin as a careless server might send it: the page must not read its result
WITHHELD = lp.LadderMatch(
    match_id="lm-3",
    server_match_id="m-3",
    pair_id="pair-1",
    queue=lp.LADDER_QUEUE_TWO_PLAYERS,
    status=lp.LADDER_MATCH_STATUS_FINISHED,
    withheld=True,
    winner_side=0,
    rated=True,
    seats=[
        lp.LadderSeat(seat=0, side=0, bot_name=EVIL, version=2),
        lp.LadderSeat(seat=1, side=1, bot_name="rnd", version=1),
    ],
    end_reason=lp.LADDER_END_REASON_CAPPOTTO,
)
MATCHES = {m.match_id: m for m in (FINISHED, CANCELLED, WITHHELD)}


class FixedReader(LadderReader):
    """The LadderService's answers, fixed: no channel is ever opened."""

    def __init__(self) -> None:
        super().__init__("127.0.0.1:1", "127.0.0.1:1")

    async def standings(
        self, queue: str, include_inactive: bool = False
    ) -> lp.GetStandingsResponse:
        rating = lp.Rating(mu=25.0, sigma=8.0, score=1.0, games=3, wins=1, provisional=True)
        return lp.GetStandingsResponse(
            rated_games=3, entries=[lp.StandingsEntry(rank=1, bot=BOT, rating=rating)]
        )

    async def history(self, name: str) -> lp.GetBotHistoryResponse:
        point = lp.RatingPoint(
            queue=lp.LADDER_QUEUE_TWO_PLAYERS,
            version=2,
            match_id="lm-1",
            mu=25.0,
            sigma=8.0,
            time=stamp(1_700_000_100),
        )
        return lp.GetBotHistoryResponse(
            bot=BOT,
            versions=[BOT],
            ratings=[lp.Rating(queue=lp.LADDER_QUEUE_TWO_PLAYERS, mu=25.0, sigma=8.0)],
            rating_history=[point],
            matches=list(MATCHES.values()),
        )

    async def match(self, match_id: str) -> Match:
        return MATCHES[match_id]

    async def list_matches(
        self, queue: str = "", status: str = "", bot: str = "", token: str = ""
    ) -> lp.ListLadderMatchesResponse:
        return lp.ListLadderMatchesResponse(matches=list(MATCHES.values()))

    async def records_of(self, m: Match) -> list[str]:
        return [f"{m.server_match_id}-g1"]


async def fetch(path: str, query: str = "") -> tuple[int, str]:
    """GET ``path`` from the ladder's routes, in-process over ASGI."""
    app = Starlette(routes=ladder_routes(FixedReader()))
    scope: dict[str, Any] = {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": quote(path).encode(),
        "query_string": query.encode(),
        "headers": [(b"host", b"test")],
        "http_version": "1.1",
        "scheme": "http",
        "server": ("test", 80),
        "client": ("test", 1),
        "root_path": "",
    }
    status = 0
    body = b""

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, body
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            body += message.get("body", b"")

    await app(scope, receive, send)
    return status, body.decode()


def page(path: str, query: str = "") -> str:
    status, html = asyncio.run(fetch(path, query))
    assert status == 200, html
    return html


def assert_escaped(html: str, *raw: str) -> None:
    for text in raw:
        assert text not in html, f"unescaped in the page: {text}"
    assert "<img" not in html and "<script>alert" not in html


def test_a_bot_name_of_markup_is_escaped_on_the_standings() -> None:
    html = page("/ladder")
    assert_escaped(html, EVIL)
    assert f'<tr class="bot" data-bot="{ESCAPED}">' in html
    assert f'href="/ladder/bots/{quote(EVIL, safe="")}">{ESCAPED}</a>' in html


def test_a_bot_name_of_markup_is_escaped_on_its_page() -> None:
    # (the route takes one path segment: the reader answers with the bot named EVIL)
    html = page("/ladder/bots/evil")
    assert_escaped(html, EVIL, MARKUP)
    assert f'<span id="botname">{ESCAPED}</span>' in html
    assert f"<title>Ladder bot {ESCAPED}</title>" in html
    assert f"<pre>{ESCAPED}</pre>" in html  # its last log
    assert "&lt;img src=x onerror=alert(2)&gt;" in html  # its reason, failure and spec


def test_notes_reasons_and_faults_are_escaped_on_a_match_page() -> None:
    for match_id in MATCHES:
        assert_escaped(page(f"/ladder/matches/{match_id}"), EVIL, MARKUP)
    html = page("/ladder/matches/lm-1")
    assert 'data-end="forfeit">forfeit (&#34;&#39;&gt;&lt;img' in html
    assert f"<li>{ESCAPED}</li>" in html


def test_the_list_of_matches_escapes_a_typed_filter() -> None:
    html = page("/ladder/matches", "bot=%3Cscript%3Ealert(1)%3C/script%3E")
    assert_escaped(html, EVIL, MARKUP)
    assert f'value="{ESCAPED}"' in html and f"(bot {ESCAPED})" in html


def test_a_withheld_twin_shows_nothing_of_its_result() -> None:
    """The rpc withholds the twin's result; the pages do not read it even when present."""
    on_its_page = page("/ladder/matches/lm-3").split('id="lresult"')[1].split("</p>")[0]
    in_a_list = page("/ladder/bots/evil").split('data-match="lm-3"')[1].split("</tr>")[0]
    for shown in (on_its_page, in_a_list):
        assert "withheld" in shown and "won" not in shown and "cappotto" not in shown
    html = page("/ladder/matches/lm-3")
    assert 'class="replay"' not in html and "watch live" not in html

"""Every ladder match, one page at a time (``ListLadderMatches``, ``cirulla ladder
matches``): newest first, keyset pages that a later match never shifts, filters by
queue, status and bot, a withheld duplicate twin shown exactly as GetLadderMatch shows
it, and bad filters or tokens refused with one line naming the field. On SQLite and on
the real PostgreSQL, through a real gRPC server and the real command."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from cirulla.ladder.db import open_database
from cirulla.ladder.messages import match_pb
from cirulla.ladder.service import LadderService
from cirulla.ladder.store import (
    LadderError,
    LadderStore,
    MatchConfig,
    MatchOutcome,
    MatchPlan,
    SeatOutcome,
    SeatPlan,
)
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc
from tests.ladder.test_store import Clock


def plan2(a: int, b: int, pair: str | None = None, index: int = 0) -> MatchPlan:
    return MatchPlan("2p", (SeatPlan(0, 0, a), SeatPlan(1, 1, b)), 7, MatchConfig(), pair, index)


def plan4(v: list[int]) -> MatchPlan:
    seats = tuple(SeatPlan(i, i % 2, v[i]) for i in range(4))
    return MatchPlan("4p", seats, 9, MatchConfig())


def win(side: int) -> MatchOutcome:
    return MatchOutcome(
        winner=side, totals=(51, 20), seats=(SeatOutcome(0), SeatOutcome(1)), deals=3
    )


def ladder_with_matches(db_url: str) -> tuple[LadderStore, dict[str, Any]]:
    """Bots a, b, c, d and matches scheduled over time (several at one instant, so the
    order falls back on the id): finished, cancelled, 4p, and a duplicate pair whose
    first game is over and second still running (the first is withheld)."""
    clock = Clock()
    store = LadderStore(open_database(db_url), clock=clock)
    for name in "abcd":
        store.add_bot(name, "random", ["2p", "4p"])
    a, b, c, d = (store.get_bot(n)["version_id"] for n in "abcd")
    made: dict[str, Any] = {}
    (made["pair_first"], made["pair_second"]) = store.schedule(
        [plan2(a, b, "lp-1", 0), plan2(b, a, "lp-1", 1)]
    )
    assert store.claim("w", "x:1").id == made["pair_first"]
    assert store.claim("w", "x:1").id == made["pair_second"]
    store.finish(made["pair_first"], win(0))
    clock.t += 10
    made["ac"] = store.schedule([plan2(a, c) for _ in range(4)])  # four at one instant
    clock.t += 10
    made["bc"] = store.schedule([plan2(b, c)])
    clock.t += 10
    (made["four"],) = store.schedule([plan4([a, b, c, d])])
    clock.t += 10
    (made["cancelled"],) = store.schedule([plan2(c, d)])
    assert store.cancel(made["cancelled"], "test")
    clock.t += 10
    made["clock"] = clock
    return store, made


def newest_first(store: LadderStore) -> list[str]:
    """Every match id, newest first, read straight from the table."""
    from sqlalchemy import select

    from cirulla.ladder.schema import ladder_matches

    with store.engine.connect() as conn:
        rows = conn.execute(
            select(ladder_matches.c.id, ladder_matches.c.created_at).order_by(
                ladder_matches.c.created_at.desc(), ladder_matches.c.id.desc()
            )
        ).all()
    return [r.id for r in rows]


def test_pages_filters_and_a_withheld_twin(db_url: str) -> None:
    store, made = ladder_with_matches(db_url)
    everything = newest_first(store)
    assert len(everything) == 9
    # page by 3: every match once, newest first
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = store.views.every_match(limit=3, token=token)
        assert len(page.matches) <= 3
        seen += [m["id"] for m in page.matches]
        pages += 1
        token = page.next_token
        if not token:
            break
    assert seen == everything and pages == 3  # the last page full, no empty one after it
    # stable under inserts: a match scheduled after the first page shifts nothing
    first = store.views.every_match(limit=4)
    a, c = store.get_bot("a")["version_id"], store.get_bot("c")["version_id"]
    (late,) = store.schedule([plan2(a, c)])
    second = store.views.every_match(limit=4, token=first.next_token)
    assert [m["id"] for m in second.matches] == everything[4:8]
    assert store.views.every_match(limit=1).matches[0]["id"] == late  # newest first
    # filters
    four = store.views.every_match(queue="4p")
    assert [m["id"] for m in four.matches] == [made["four"]] and not four.next_token
    cancelled = store.views.every_match(status="cancelled")
    assert [m["id"] for m in cancelled.matches] == [made["cancelled"]]
    assert cancelled.matches[0]["cancel_reason"] == "test"
    d_only = store.views.every_match(bot="d")
    assert {m["id"] for m in d_only.matches} == {made["four"], made["cancelled"]}
    with_b = [m["id"] for m in store.views.every_match(bot="b", queue="2p").matches]
    assert with_b == [i for i in everything if i in {*made["bc"], *pairs(made)}]
    # filters page too, and a token must come with its own filters
    by_a = store.views.every_match(bot="a", queue="2p", limit=2)
    rest = store.views.every_match(bot="a", queue="2p", limit=50, token=by_a.next_token)
    a_ids = [m["id"] for m in by_a.matches + rest.matches]
    assert a_ids == [i for i in newest_first(store) if i in {late, *made["ac"], *pairs(made)}]
    with pytest.raises(LadderError, match=r"^page_token: it was returned for other filters"):
        store.views.every_match(bot="b", queue="2p", token=by_a.next_token)
    # the withheld twin: exactly what GetLadderMatch and the bot's history show
    listed = {m["id"]: m for m in store.views.every_match(limit=50).matches}
    twin = listed[made["pair_first"]]
    assert twin["status"] == "finished" and twin["withheld"] and twin["winner"] is None
    assert all(s["points"] is None and s["outcome"] == "" for s in twin["seats"])
    assert twin == store.views.match(made["pair_first"])
    assert twin == next(m for m in store.views.bot_matches("a") if m["id"] == twin["id"])
    assert listed[made["pair_second"]]["status"] == "claimed"
    store.finish(made["pair_second"], win(1))
    shown = store.views.every_match(status="finished").matches
    over = next(m for m in shown if m["id"] == made["pair_first"])
    assert not over["withheld"] and over["winner"] == 0


def pairs(made: dict[str, Any]) -> set[str]:
    return {made["pair_first"], made["pair_second"]}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"token": "not-a-token"}, "page_token"),
        ({"token": "WzEsMSwiIiwiIl0"}, "page_token"),  # base64 JSON of the wrong shape
        ({"queue": "5p"}, "queue"),
        ({"status": "lost"}, "status"),
        ({"bot": "nobody"}, "bot_name"),
    ],
)
def test_bad_filters_name_the_field(tmp_path: Path, kwargs: dict[str, str], field: str) -> None:
    store = LadderStore(open_database(f"sqlite:///{tmp_path / 'ladder.sqlite3'}"))
    store.add_bot("a", "random")
    with pytest.raises(LadderError) as refused:
        store.views.every_match(**kwargs)  # type: ignore[arg-type]
    assert str(refused.value).startswith(f"{field}: ") and "\n" not in str(refused.value)


@pytest.mark.slow
def test_the_rpc_and_the_command(db_url: str, tmp_path: Path) -> None:
    store, made = ladder_with_matches(db_url)
    everything = newest_first(store)

    async def over_grpc() -> None:
        server = grpc.aio.server()
        ladder_pb2_grpc.add_LadderServiceServicer_to_server(LadderService(store), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = ladder_pb2_grpc.LadderServiceStub(channel)
                seen: list[str] = []
                token = ""
                while True:
                    got = await stub.ListLadderMatches(
                        ladder_pb2.ListLadderMatchesRequest(page_size=4, page_token=token)
                    )
                    seen += [m.match_id for m in got.matches]
                    token = got.next_page_token
                    if not token:
                        break
                assert seen == everything
                # the same messages GetLadderMatch answers (withheld twin included)
                got = await stub.ListLadderMatches(
                    ladder_pb2.ListLadderMatchesRequest(
                        status=ladder_pb2.LADDER_MATCH_STATUS_FINISHED
                    )
                )
                (twin,) = got.matches
                assert twin.withheld and not twin.HasField("winner_side")
                one = await stub.GetLadderMatch(
                    ladder_pb2.GetLadderMatchRequest(match_id=twin.match_id)
                )
                assert twin == one.match == match_pb(store.views.match(twin.match_id))
                got = await stub.ListLadderMatches(
                    ladder_pb2.ListLadderMatchesRequest(
                        queue=ladder_pb2.LADDER_QUEUE_FOUR_PLAYERS, bot_name="d"
                    )
                )
                assert [m.match_id for m in got.matches] == [made["four"]]
                for bad, field in (
                    (ladder_pb2.ListLadderMatchesRequest(page_token="%%%"), "page_token"),
                    (ladder_pb2.ListLadderMatchesRequest(bot_name="nobody"), "bot_name"),
                    (ladder_pb2.ListLadderMatchesRequest(status=99), "status"),  # type: ignore[arg-type]
                    (ladder_pb2.ListLadderMatchesRequest(queue=42), "queue"),  # type: ignore[arg-type]
                ):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await stub.ListLadderMatches(bad)
                    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                    assert (refused.value.details() or "").startswith(f"{field}: ")
        finally:
            await server.stop(None)

    asyncio.run(over_grpc())

    # the command, with no ladder running: it reads the database and says so, once
    def cirulla(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cirulla", "ladder", "matches", "--db", db_url, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )

    out = cirulla("--json", "--limit", "3")
    assert out.returncode == 0, out.stderr
    (line,) = out.stderr.splitlines()
    assert line.startswith("ladder not running: read from the database at ")
    listed = json.loads(out.stdout)
    assert [m["match_id"] for m in listed["matches"]] == everything[:3] and listed["more"]
    out = cirulla("--bot", "d", "--queue", "2p", "--status", "cancelled")
    assert out.returncode == 0, out.stderr
    assert made["cancelled"] in out.stdout and "test" in out.stdout
    assert made["four"] not in out.stdout
    out = cirulla("--status", "finished", "--limit", "50")
    assert made["pair_first"] in out.stdout and "withheld" in out.stdout
    for bad, field in ((("--bot", "nobody"), "bot_name"), (("--limit", "0"), "--limit")):
        refused = cirulla(*bad)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        assert refused.stderr.splitlines()[-1].startswith(f"cirulla ladder matches: {field}")


def test_the_web_page_of_every_match_pages_without_script(tmp_path: Path) -> None:
    """/ladder/matches: 100 a page from ListLadderMatches, an "older matches" link to the
    next page (and "newest" back), filters as a plain form's query; all in the HTML."""
    import re
    import urllib.error
    import urllib.request

    from cirulla.server.app import start_server
    from cirulla.server.web.app import start_web
    from cirulla.server.web.ladder import LIST_MATCHES

    clock = Clock()
    store = LadderStore(open_database(f"sqlite:///{tmp_path / 'ladder.sqlite3'}"), clock=clock)
    for name in "ab":
        store.add_bot(name, "random")
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    for _ in range(LIST_MATCHES + 5):
        store.schedule([plan2(a, b)])
        clock.t += 1
    everything = newest_first(store)

    async def run() -> None:
        def add(server: Any) -> None:
            ladder_pb2_grpc.add_LadderServiceServicer_to_server(LadderService(store), server)

        running = await start_server(
            "127.0.0.1:0",
            tmp_path / "match.sqlite3",
            services=[("cirulla.v1.LadderService", add)],
        )
        address = f"127.0.0.1:{running.port}"
        web = await start_web("127.0.0.1:0", address, ladder=address)
        base = f"http://127.0.0.1:{web.port}"

        def get(path: str) -> tuple[int, str]:
            try:
                with urllib.request.urlopen(base + path, timeout=30) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read().decode()

        def ids(html: str) -> list[str]:
            return re.findall(r'<tr class="lmatch" data-match="([^"]+)"', html)

        def link(html: str, name: str) -> str:
            return html.split(f'id="{name}" href="')[1].split('"')[0].replace("&amp;", "&")

        try:
            status, first = await asyncio.to_thread(get, "/ladder/matches")
            assert status == 200 and ids(first) == everything[:LIST_MATCHES]
            assert 'id="newest"' not in first and "<script" not in first
            status, second = await asyncio.to_thread(get, link(first, "older"))
            assert status == 200 and ids(second) == everything[LIST_MATCHES:]
            assert 'id="older"' not in second and link(second, "newest") == "/ladder/matches"
            status, filtered = await asyncio.to_thread(
                get, "/ladder/matches?queue=2p&status=scheduled&bot=a"
            )
            assert ids(filtered) == everything[:LIST_MATCHES]
            older = link(filtered, "older")
            assert "bot=a" in older and "status=scheduled" in older and "page_token=" in older
            assert "<option selected>scheduled</option>" in filtered
            assert ids((await asyncio.to_thread(get, older))[1]) == everything[LIST_MATCHES:]
            assert ids((await asyncio.to_thread(get, "/ladder/matches?status=finished"))[1]) == []
            for bad in ("?status=lost", "?queue=9p", "?page_token=%25%25", "?bot=nobody"):
                assert (await asyncio.to_thread(get, "/ladder/matches" + bad))[0] == 400
        finally:
            await web.stop()
            await running.stop()

    asyncio.run(run())

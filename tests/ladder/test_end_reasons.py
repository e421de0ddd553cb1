"""Why a ladder game ended is shown wherever its result is (issue 40, item 4).

A game won 7 to 27 is a cappotto, one won 0 to 0 a forfeit: the score alone misleads. A
real ``cirulla ladder serve`` on SQLite and on PostgreSQL, whose database holds a
cappotto stored with its reason and one stored before the reason existed (a winner below
the target), and plays a bot that exits before joining (a forfeit, kind never-joined):
``GetLadderMatch``, ``cirulla ladder match``, ``matches`` and ``history``, and the web
list and match page all say why.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from cirulla.clients.matches.journal import GameResult
from cirulla.ladder.db import open_database
from cirulla.ladder.runner import outcome_of
from cirulla.ladder.schema import ladder_matches
from cirulla.ladder.store import (
    LadderStore,
    MatchConfig,
    MatchOutcome,
    MatchPlan,
    SeatOutcome,
    SeatPlan,
)
from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, wait_for


def cappotto(winner_total: int = 7, end: str = "cappotto") -> MatchOutcome:
    return MatchOutcome(
        winner=0,
        totals=(winner_total, 27),
        seats=(SeatOutcome(0), SeatOutcome(1)),
        deals=3,
        end=end,
    )


def stored_results(db: str) -> tuple[str, str]:
    """Two finished games of bots a and b (then paused): a cappotto stored with its
    reason, and one stored as results were before the reason existed."""
    store = LadderStore(open_database(db))
    for name in "ab":
        store.add_bot(name, "random", ["2p"])
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    plans = [MatchPlan("2p", (SeatPlan(0, 0, a), SeatPlan(1, 1, b)), 7, MatchConfig())] * 2
    new, old = store.schedule(plans)
    for match_id in (new, old):
        assert store.claim("w", "x:1").id == match_id
        store.finish(match_id, cappotto())
    legacy = {"winner": 0, "totals": [7, 27], "deals": 3, "forfeit_sides": [], "void": False}
    with store.engine.begin() as conn:
        conn.execute(
            update(ladder_matches)
            .where(ladder_matches.c.id == old)
            .values(result=json.dumps(legacy))
        )
    for name in "ab":
        store.bots.set_state(name, "paused", "test: played by hand")
    store.engine.dispose()
    return new, old


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode())


def game(**fields: Any) -> GameResult:
    """A referee's GameResult of a two-player game (match ``m``, bots a and b)."""
    base: dict[str, Any] = dict(index=0, match_id="m", seats=("a", "b"), seed=1, deal_set=0)
    return GameResult(**base, group=(), **fields)


def test_outcome_keeps_the_referees_reason(tmp_path: Path) -> None:
    """The worker's report carries the referee's reason into the stored result."""
    ok = ("ok", "ok")
    got = outcome_of(
        game(winner=0, totals=(7, 27), deals=2, seat_outcomes=ok, end="cappotto"), tmp_path
    )
    assert (got.end, got.forfeit_kind) == ("cappotto", "")
    assert json.loads(got.result_json())["end"] == "cappotto"
    timed = outcome_of(
        game(winner=None, totals=(0, 0), deals=0, seat_outcomes=ok, end="time-limit"), tmp_path
    )
    assert (timed.end, timed.void) == ("time-limit", True)
    limit = game(
        winner=1,
        totals=(0, 0),
        deals=1,
        seat_outcomes=("crash", "ok"),
        forfeit_sides=(0,),
        end="forfeit",
        notes=("seat 0 (a) forfeited: crash; killed: memory limit 2 GiB",),
    )
    got = outcome_of(limit, tmp_path)
    assert (got.end, got.forfeit_kind) == ("forfeit", "limit")


@pytest.mark.slow
def test_every_result_says_why_the_game_ended(
    tmp_path: Path, db_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if db_url.startswith("sqlite"):
        db_url = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    new, old = stored_results(db_url)
    crash = tmp_path_factory.mktemp("bots") / "crash.py"  # not beside the database
    crash.write_text("import sys\nsys.exit(3)\n")
    ladder = LadderProcess(tmp_path / "ladder", db_url, "--http", "127.0.0.1:0")
    ladder.start()
    try:
        # by rpc: the commands checked here are the ones that show results
        ladder.add("crasher", f"cmd:{sys.executable} {crash}")
        ladder.add("rnd", "random")
        stub = ladder.stub()

        def forfeited() -> ladder_pb2.LadderMatch | None:
            page = stub.ListLadderMatches(
                ladder_pb2.ListLadderMatchesRequest(
                    bot_name="crasher", status=ladder_pb2.LADDER_MATCH_STATUS_FINISHED
                ),
                timeout=10,
            )
            return next((m for m in page.matches if not m.withheld), None)

        lost = wait_for(forfeited, 240, "a finished game of the crashing bot", every=0.2)
        assert lost.end_reason == ladder_pb2.LADDER_END_REASON_FORFEIT
        assert lost.forfeit_kind == "never-joined"
        for match_id in (new, old):
            m = stub.GetLadderMatch(ladder_pb2.GetLadderMatchRequest(match_id=match_id)).match
            assert m.end_reason == ladder_pb2.LADDER_END_REASON_CAPPOTTO, match_id
            assert m.forfeit_kind == ""
            shown = ladder.cli("match", match_id).stdout
            assert "won 7-27 — cappotto" in shown, shown
        assert "forfeit (never joined)" in ladder.cli("match", lost.match_id).stdout
        listed = ladder.cli("matches", "--limit", "200").stdout
        assert listed.count("cappotto") >= 2 and "forfeit (never" in listed, listed
        assert "cappotto" in ladder.cli("history", "a").stdout
        as_json = json.loads(ladder.cli("match", new, "--json").stdout)
        assert as_json["end_reason"] == "LADDER_END_REASON_CAPPOTTO"
        # the web list and each match's page
        state = json.loads((ladder.folder / "cirulla-ladder.json").read_text())
        base = f"http://{state['http']}"
        every = get(f"{base}/ladder/matches?bot=a")
        assert every.count('data-end="cappotto">cappotto</span>') == 2, every
        page = get(f"{base}/ladder/matches/{old}")
        result = page.split('id="lresult"')[1].split("</p>")[0]
        assert "won 7-27" in result and 'data-end="cappotto"' in result
        page = get(f"{base}/ladder/matches/{lost.match_id}")
        assert 'data-end="forfeit">forfeit (never joined)</span>' in page
    finally:
        ladder.stop()

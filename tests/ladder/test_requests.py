"""Requested and unrated matches: ``cirulla ladder request A B --games N [--unrated]``
queues games claimed before scheduled play; unrated games never change a rating; a bot's
owner may request unrated games of its own bot with its key; ``requests`` and ``match``
follow them. The store on SQLite and PostgreSQL, then a real ladder on both, and the
migration from the previous revision."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy import insert, select

from cirulla.ladder.db import MIGRATIONS, create, open_database
from cirulla.ladder.schema import (
    enrollments,
    ladder_matches,
    rating_history,
)
from cirulla.ladder.store import (
    LadderError,
    LadderStore,
    MatchConfig,
    MatchOutcome,
    MatchPlan,
    NotFound,
    Refused,
    SeatOutcome,
    SeatPlan,
)
from tests.ladder_harness import LadderProcess, open_store, settled, wait_for
from tests.server_harness import tied_to_this_process

WIN_0 = MatchOutcome(winner=0, totals=(11, 3), seats=(SeatOutcome(0), SeatOutcome(1)), deals=2)

#: A built-in bot, connect-in.
BOT = [sys.executable, "-m", "cirulla", "bot", "random"]


def test_requested_games_come_first_and_unrated_ones_rate_nothing(db_url: str) -> None:
    store = LadderStore(open_database(db_url))
    a, _, _ = store.add_bot("a", "random")
    b, _, _ = store.add_bot("b", "greedy")
    store.add_bot("c", "random")
    settled(store)
    # a scheduled match, older than the request
    seats = (SeatPlan(0, 0, a["version_id"]), SeatPlan(1, 1, b["version_id"]))
    (older,) = store.schedule([MatchPlan("2p", seats, 5, config=MatchConfig())])
    request = store.request_matches(["a", "b"], 3, unrated=True)
    assert request["queue"] == "2p" and request["games"] == 3 and request["unrated"]
    assert request["requested_by"] == "admin"
    games = request["matches"]
    assert len(games) == 3
    # a duplicate pair (same deal group, seats swapped), then a game alone
    assert games[0]["pair_id"] and games[0]["pair_id"] == games[1]["pair_id"]
    assert [s["bot"] for s in games[0]["seats"]] == ["a", "b"]
    assert [s["bot"] for s in games[1]["seats"]] == ["b", "a"]
    assert not games[2]["pair_id"]
    assert {g["request_id"] for g in games} == {request["id"]}
    claimed = store.claim("w1", "127.0.0.1:1")
    assert claimed is not None and claimed.id == games[0]["id"]  # before the older match
    before = {e["bot"]["name"]: (e["mu"], e["games"]) for e in store.standings("2p")}
    # the lone game: unrated, its result changes no rating and counts no validation
    lone = store.claim("w1", "127.0.0.1:1")
    while lone is not None and lone.id != games[2]["id"]:
        lone = store.claim("w1", "127.0.0.1:1")
    assert lone is not None
    assert store.finish(lone.id, WIN_0)
    after = {e["bot"]["name"]: (e["mu"], e["games"]) for e in store.standings("2p")}
    assert after == before
    shown = store.match(lone.id)
    assert shown["status"] == "finished" and not shown["rated"]
    assert any("requested as an unrated game" in n for n in shown["notes"])
    with store.engine.connect() as conn:
        assert not conn.execute(
            select(rating_history).where(rating_history.c.match_id == lone.id)
        ).first()
    # the older scheduled match waited while the requested games were claimed; it is next
    with store.engine.connect() as conn:
        status = conn.execute(
            select(ladder_matches.c.status).where(ladder_matches.c.id == older)
        ).scalar_one()
    assert status == "scheduled"
    following = store.claim("w1", "127.0.0.1:1")
    assert following is not None and following.id == older
    store.cancel(older, "test")
    # a rated request rates as any game
    rated = store.request_matches(["a", "c"], 1)
    assert not rated["unrated"]
    game = store.claim("w1", "127.0.0.1:1")
    assert game is not None and game.id == rated["matches"][0]["id"]
    assert store.finish(game.id, WIN_0)
    assert store.match(game.id)["rated"]
    listed = store.match_requests()
    assert [r["id"] for r in listed] == [rated["id"], request["id"]]
    assert listed[1]["finished"] == 1
    assert [r["id"] for r in store.match_requests("c")] == [rated["id"]]


def test_request_fields_and_owners(db_url: str) -> None:
    store = LadderStore(open_database(db_url))
    store.add_bot("a", "random")
    store.add_bot("b", "random", queues=["2p", "3p"])
    store.add_bot("c", "random", queues=["3p"])
    remote, _, key = store.add_bot("remote", "connect")
    settled(store)
    for names, games, match in (
        (["a"], 1, "name 2 to 4 bots"),
        (["a", "a"], 1, "only one seat"),
        (["a", "b"], 101, "games: 1 to 100"),
        (["a", "nobody"], 1, "no bot named"),
        (["a", "b", "c"], 1, "does not play the 3p queue"),
        (["a", "remote"], 1, "offline"),
    ):
        with pytest.raises(LadderError, match=match):
            store.request_matches(names, games)
    three = store.request_matches(["a", "b", "c"], 3, unrated=True)  # unrated: any queue
    assert three["queue"] == "3p" and len(three["matches"]) == 3
    # three single games whose seats rotate
    assert [m["seats"][0]["bot"] for m in three["matches"]] == ["a", "b", "c"]
    assert not any(m["pair_id"] for m in three["matches"])
    with pytest.raises(LadderError, match="does not play the 4p"):
        store.request_matches(["a", "b", "c", "remote"], 1, queues=("2p", "3p"))
    with pytest.raises(NotFound):
        store.match_request("rq-nope")

    # the owner of a connect-in bot, enrolled (online)
    with store.engine.begin() as conn:
        conn.execute(
            insert(enrollments).values(
                id="en-1", bot_id=remote["id"], served_by="w", capacity=2,
                connected_at=time.time(), heartbeat_at=time.time() + 3600,
            )
        )  # fmt: skip
    with pytest.raises(Refused, match="only unrated"):
        store.request_matches(["remote", "a"], 1, owner_key=key)
    with pytest.raises(Refused, match="not the key"):
        store.request_matches(["remote", "a"], 1, unrated=True, owner_key="wrong")
    mine = store.request_matches(["remote", "a"], 4, unrated=True, owner_key=key)
    assert mine["requested_by"] == "owner of remote"
    assert not any(m["pair_id"] for m in mine["matches"])  # a connect-in bot: single games
    with pytest.raises(Refused, match="waiting or playing; 4 are"):
        store.request_matches(["remote", "b"], 7, unrated=True, owner_key=key)
    store.set_state("a", "paused", "resting")
    with pytest.raises(Refused, match="paused"):
        store.request_matches(["remote", "a"], 1, unrated=True, owner_key=key)
    assert len(store.request_matches(["a", "b"], 1)["matches"]) == 1  # the operator may


def test_migration_0005_from_0004(db_url: str) -> None:
    """A database at 0004 with a match in it upgrades: the match is a scheduled one."""
    engine = create(db_url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0004")
        conn.execute(
            sa.text(
                "INSERT INTO ladder_matches (id, queue, seed, settings, status, created_at, "
                "cancel_reason, rated, server_address, notes, attempts, pair_index) VALUES "
                "('lm-old', '2p', 7, '{}', 'scheduled', 1.0, '', false, '', '[]', 0, 0)"
            )
        )
    engine.dispose()
    store = LadderStore(open_database(db_url))
    with store.engine.connect() as conn:
        row = conn.execute(
            select(
                ladder_matches.c.request_id, ladder_matches.c.priority, ladder_matches.c.unrated
            ).where(ladder_matches.c.id == "lm-old")
        ).one()
        assert tuple(row) == (None, 0, False)
        version = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar_one()
    from alembic.script import ScriptDirectory

    assert version == ScriptDirectory.from_config(config).get_current_head()  # the chain's head
    assert store.match_requests() == []


@pytest.mark.slow
def test_request_on_a_real_ladder(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "220")  # one table row per request
    ladder = LadderProcess(tmp_path / "ladder", db_url, "--concurrency", "1")
    ladder.start()
    store = open_store(db_url)
    try:
        for name, spec in (("rnd", "random"), ("grd", "greedy"), ("rnd2", "random")):
            ladder.add(name, spec)  # over the rpc: the commands under test are the requests
        settled(store)
        wait_for(lambda: store.rated_games("2p") >= 1, 240, "scheduled play", every=0.2)
        out = ladder.cli("request", "grd", "rnd", "--games", "2", "--unrated").stdout
        # the request is committed now: a claim that starts from here on sees it (one
        # that started earlier, its time taken before the request's rows were visible,
        # may still carry a later time than their created_at and take a scheduled match;
        # and the ladder may have played the requested games before the command returned)
        visible_at = time.time()
        assert "request rq-" in out and "2 games" in out and "unrated" in out
        request_id = out.split()[1]
        requested = store.match_request(request_id)
        ids = {m["id"] for m in requested["matches"]}
        # waited for in the store, then said by the command (one interpreter, not a poll's)
        wait_for(
            lambda: store.match_request(request_id)["finished"] == 2,
            240,
            "the requested games",
            every=0.2,
        )
        assert json.loads(ladder.cli("requests", "--json").stdout)["requests"][0]["finished"] == 2
        with store.engine.connect() as conn:
            claims = conn.execute(
                select(ladder_matches.c.id, ladder_matches.c.claimed_at).where(
                    ladder_matches.c.claimed_at.is_not(None)
                )
            ).all()
            rated = conn.execute(
                select(rating_history.c.match_id).where(rating_history.c.match_id.in_(ids))
            ).all()
        # claimed before every match scheduled earlier whose claim saw the request
        requested_last = max(at for match_id, at in claims if match_id in ids)
        scheduled_after = [
            at for match_id, at in claims if match_id not in ids and at >= visible_at
        ]
        assert requested_last < min(scheduled_after, default=float("inf")), claims
        assert rated == []  # unrated: no rating moved
        listing = ladder.cli("requests").stdout
        assert request_id in listing and "2/2 played" in listing
        one = sorted(ids)[0]
        shown = ladder.cli("match", one).stdout
        assert f"requested: {request_id}" in shown and "(unrated)" in shown
        # a rated request counts like any game
        out = ladder.cli("request", "grd", "rnd2").stdout
        rated_id = out.split()[1]
        wait_for(
            lambda: store.match_request(rated_id)["finished"] == 1, 240, "the rated game", every=0.2
        )
        (game,) = store.match_request(rated_id)["matches"]
        assert game["rated"] and game["seats"][0]["mu_after"] is not None
        # bad input: one line, exit 2, nothing queued
        before = len(store.match_requests())
        for argv, says in (
            (["request", "grd", "nobody"], "no bot named"),
            (["request", "grd", "rnd", "--games", "0"], "--games: 1 to 100"),
            (["request", "grd", "rnd", "--games", "101"], "games: 1 to 100"),
        ):
            res = ladder.cli(*argv, check=False)
            assert res.returncode == 2 and says in res.stderr, res.stderr
            assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
        assert len(store.match_requests()) == before
        # without the admin token (and no bot key): refused
        res = ladder.cli("request", "grd", "rnd", "--admin-token-file", "/dev/null", check=False)
        assert res.returncode == 2 and "UNAUTHENTICATED" in res.stderr, res.stderr

        # the owner of a connect-in bot, with its key: unrated games of its own bot
        key = ladder.add("remote", "connect").bot_key
        key_file = tmp_path / "remote.key"
        key_file.write_text(key)
        with (tmp_path / "remote.log").open("ab") as log:
            remote = subprocess.Popen(
                tied_to_this_process([*BOT, "--ladder", ladder.address, "--bot-name", "remote"]),
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "CIRULLA_BOT_KEY": key},
            )
        try:
            wait_for(
                lambda: not store.get_bot("remote")["offline"], 60, "the bot enrolled", every=0.2
            )
            owner = ["request", "remote", "rnd", "--bot-key-file", str(key_file)]
            res = ladder.cli(*owner, check=False)
            assert res.returncode == 2 and "only unrated" in res.stderr, res.stderr
            out = ladder.cli(*owner, "--unrated").stdout
            assert "by owner of remote" in out
            owned = out.split()[1]
            wait_for(
                lambda: store.match_request(owned)["finished"] == 1,
                240,
                "the owner's game",
                every=0.2,
            )
            (game,) = store.match_request(owned)["matches"]
            assert {s["outcome"] for s in game["seats"]} == {"ok"} and not game["rated"]
        finally:
            remote.terminate()
            remote.wait(30)
    finally:
        ladder.stop()

"""The ladder end to end: a real ``cirulla ladder serve`` process with its match server,
real bot processes, the command line and the LadderService, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from sqlalchemy import func, select

from cirulla.ladder.rating import PROVISIONAL_GAMES
from cirulla.ladder.schema import ladder_matches, ladder_seats, rating_history, ratings
from cirulla.ladder.serve import CRASH_REASON
from cirulla.ladder.store import FAILURES_TO_DEACTIVATE
from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, count_status, open_store, settled, wait_for

CRASHER = "cmd:{python} -c \"print('boom: no engine here'); raise SystemExit(3)\""
#: A kept-alive (``serve:``) bot that says it is ready, takes its first assignment and
#: dies: the ladder must restart it for its next match and still blame each crash on it.
SERVED_CRASHER = (
    'serve:{python} -c "import sys; print(\'{\\"ready\\": true}\', flush=True); '
    "sys.stdin.readline(); print('kaboom: served bot died', file=sys.stderr); "
    'raise SystemExit(4)"'
)


def crasher_spec(spec: str = CRASHER) -> str:
    import sys

    return spec.replace("{python}", sys.executable)


def assert_counted_once(db: str) -> None:
    """Every rated result is in the ratings exactly once, and nothing else is.

    A finished twin of a duplicate pair whose other game is still in flight (scheduled,
    claimed or running: a SIGKILL or a shutdown often lands between the two) is rated
    only when its pair is over, so it counts zero times until then, and must."""
    from cirulla.ladder.store import IN_FLIGHT

    store = open_store(db)
    with store.engine.connect() as conn:
        open_pairs = (
            select(ladder_matches.c.pair_id)
            .where(ladder_matches.c.pair_id.is_not(None), ladder_matches.c.status.in_(IN_FLIGHT))
            .scalar_subquery()
        )
        finished_rated = (
            select(ladder_seats.c.version_id, func.count(func.distinct(ladder_seats.c.match_id)))
            .join(ladder_matches, ladder_matches.c.id == ladder_seats.c.match_id)
            .where(ladder_matches.c.rated.is_(True), ladder_matches.c.status == "finished")
            .group_by(ladder_seats.c.version_id)
        )
        rated = conn.execute(
            finished_rated.where(
                ladder_matches.c.pair_id.is_(None) | ladder_matches.c.pair_id.not_in(open_pairs)
            )
        ).all()
        withheld = conn.execute(
            select(func.count())
            .select_from(rating_history)
            .join(ladder_matches, ladder_matches.c.id == rating_history.c.match_id)
            .where(ladder_matches.c.pair_id.in_(open_pairs))
        ).scalar_one()
        games = dict(
            conn.execute(
                select(ratings.c.version_id, func.sum(ratings.c.games)).group_by(
                    ratings.c.version_id
                )
            ).all()
        )
        history = dict(
            conn.execute(
                select(rating_history.c.version_id, func.count()).group_by(
                    rating_history.c.version_id
                )
            ).all()
        )
    assert withheld == 0, "a twin was rated while its pair is still being played"
    for version_id, n in rated:
        assert games[version_id] == n, (version_id, games[version_id], n)
        assert history.get(version_id, 0) == n
    assert sum(games.values()) == sum(n for _, n in rated), (games, rated)
    store.engine.dispose()


@pytest.mark.slow
def test_ladder_serves_rates_and_deactivates(tmp_path: Path) -> None:
    """On SQLite only (the slowest test of the ladder); the store's tests cover the same
    rules on PostgreSQL, and the SIGKILL test runs the whole ladder on both."""
    db_url = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    token = tmp_path / "admin.token"
    token.write_text("s3cret\n")
    # the ladder migrates its empty database itself here (the other tests migrate first)
    ladder = LadderProcess(
        tmp_path / "ladder", db_url, "--admin-token-file", str(token), migrate_first=False
    )
    ladder.start()
    try:
        stub = ladder.stub()
        # admin rpcs need the token; the command line finds it through the state file
        with pytest.raises(grpc.RpcError) as info:
            stub.AddBot(ladder_pb2.AddBotRequest(bot_name="x", spec="random"))
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "random version 1" in ladder.cli("add", "random", "random").stdout
        bad = ladder.cli("add", "nope", "nosuchkind", check=False)
        assert bad.returncode == 2 and "unknown bot kind" in bad.stderr
        assert "Traceback" not in bad.stderr
        auth = (("authorization", "Bearer s3cret"),)
        stub.AddBot(ladder_pb2.AddBotRequest(bot_name="greedy", spec="greedy"), metadata=auth)
        stub.AddBot(
            ladder_pb2.AddBotRequest(bot_name="crasher", spec=crasher_spec()), metadata=auth
        )
        stub.AddBot(
            ladder_pb2.AddBotRequest(bot_name="served", spec=crasher_spec(SERVED_CRASHER)),
            metadata=auth,
        )

        def deactivated(name: str) -> ladder_pb2.LadderBot | None:
            entries = stub.GetStandings(
                ladder_pb2.GetStandingsRequest(include_inactive=True)
            ).entries
            bot = next(e.bot for e in entries if e.bot.name == name)
            # its last log is withheld until the twin of its last crash is over too
            done = bot.state == ladder_pb2.BOT_STATE_DEACTIVATED and "withheld" not in bot.last_log
            return bot if done else None

        crasher = wait_for(
            lambda: deactivated("crasher"), 240, "the crasher's deactivation", every=0.2
        )
        assert f"{FAILURES_TO_DEACTIVATE} failures in a row" in crasher.state_reason
        assert "crash" in crasher.state_reason
        assert "boom: no engine here" in crasher.last_log
        served = wait_for(lambda: deactivated("served"), 240, "the served bot's deactivation")
        assert f"{FAILURES_TO_DEACTIVATE} failures in a row" in served.state_reason
        assert "crash" in served.state_reason and "kaboom: served bot died" in served.last_log
        # restarted after each crash: one process per failed match, none reused
        served_logs = list((ladder.folder / "cirulla-ladder-data" / "logs").glob("served-*.log"))
        # (failed once in about nine runs, cause unknown: what the next failure should show)
        assert len(served_logs) >= FAILURES_TO_DEACTIVATE, (
            sorted(p.name for p in served_logs),
            served.state_reason,
            [
                (m.match_id, [(s.bot_name, s.outcome) for s in m.seats], list(m.notes))
                for m in stub.GetBotHistory(
                    ladder_pb2.GetBotHistoryRequest(bot_name="served", page_size=50)
                ).matches
            ],
            ladder.log.read_text()[-4000:],
        )

        def rated_games() -> int:
            response = stub.GetStandings(ladder_pb2.GetStandingsRequest())
            return response.rated_games if response.rated_games >= 4 else 0

        wait_for(rated_games, 240, "four rated games")
        standings = json.loads(ladder.cli("standings", "--json", "--all").stdout)
        names = [e["bot"]["name"] for e in standings["entries"]]
        assert set(names) == {"random", "greedy", "crasher", "served"}
        assert set(names[-2:]) == {"crasher", "served"}
        for entry in standings["entries"][:2]:
            assert entry["rating"]["games"] >= 1
            assert entry["rating"]["provisional"] == (entry["rating"]["games"] < PROVISIONAL_GAMES)
        table = ladder.cli("standings", "--all").stdout
        assert "deactivated" in table and "boom" in table

        history = stub.GetBotHistory(ladder_pb2.GetBotHistoryRequest(bot_name="greedy"))
        finished = [
            m
            for m in history.matches
            if m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED and not m.withheld
        ]
        assert finished and history.rating_history
        match = finished[0]
        assert match.server_match_id and match.server_address == ladder.address
        shown = ladder.cli("match", match.server_match_id).stdout
        assert match.match_id in shown and "token" not in shown.lower()
        h2h = stub.GetHeadToHead(ladder_pb2.GetHeadToHeadRequest(bot_a="greedy", bot_b="random"))
        assert h2h.games == h2h.a_wins + h2h.b_wins + h2h.draws >= 1

        assert "paused: holiday" in ladder.cli("pause", "random", "--reason", "holiday").stdout
        assert "active" in ladder.cli("resume", "random").stdout
        ladder.cli("remove", "crasher")

        # random and greedy are kept alive between matches: far fewer processes than games
        def greedy_games() -> int:
            entries = stub.GetStandings(ladder_pb2.GetStandingsRequest()).entries
            games = next(e.rating.games for e in entries if e.bot.name == "greedy")
            return games if games >= 10 else 0

        played = wait_for(greedy_games, 240, "ten rated games of greedy")
        greedy_logs = list((ladder.folder / "cirulla-ladder-data" / "logs").glob("greedy-*.log"))
        assert 1 <= len(greedy_logs) < played, (len(greedy_logs), played)
        listed = stub.GetStandings(ladder_pb2.GetStandingsRequest(include_inactive=True))
        assert "crasher" not in [e.bot.name for e in listed.entries]
        missing = ladder.cli("history", "nobody", check=False)
        assert missing.returncode == 2 and "no bot named 'nobody'" in missing.stderr
    finally:
        assert ladder.stop() == 0, ladder.log.read_text()[-3000:]
    assert not (ladder.folder / "cirulla-ladder.json").exists()
    assert_counted_once(db_url)


@pytest.mark.slow
def test_sigkill_mid_match_then_restart_loses_and_doubles_nothing(
    tmp_path: Path, db_url: str
) -> None:
    ladder = LadderProcess(tmp_path / "ladder", db_url, "--concurrency", "2")
    ladder.start()
    store = open_store(db_url)
    try:
        ladder.add("random", "random", max_concurrency=4)
        ladder.add("greedy", "greedy", max_concurrency=4)
        wait_for(
            lambda: (
                count_status(store).get("finished", 0) >= 2
                and count_status(store).get("running", 0) >= 1
            ),
            240,
            "a finished match and one being played",
            every=0.2,
        )
    finally:
        ladder.kill()
    before = count_status(store)
    assert before.get("running", 0) + before.get("claimed", 0) >= 1
    with store.engine.connect() as conn:
        interrupted = dict(
            conn.execute(
                select(ladder_matches.c.id, ladder_matches.c.status).where(
                    ladder_matches.c.status.in_(("running", "claimed"))
                )
            ).all()
        )
    assert_counted_once(db_url)

    ladder.start()
    try:
        wait_for(
            lambda: count_status(store).get("finished", 0) >= before.get("finished", 0) + 2,
            240,
            "scheduling to resume after the restart",
            every=0.2,
        )
    finally:
        assert ladder.stop() == 0
    with store.engine.connect() as conn:
        rows = conn.execute(
            select(
                ladder_matches.c.id, ladder_matches.c.status, ladder_matches.c.cancel_reason
            ).where(ladder_matches.c.id.in_(interrupted))
        ).all()
    for row in rows:
        if interrupted[row.id] == "running":
            # finished from the match server's record, or cancelled with the reason
            assert row.status == "finished" or (
                row.status == "cancelled" and row.cancel_reason == CRASH_REASON
            ), row
        else:  # claimed but not started: back in the queue, then played or shut down
            assert row.status in ("finished", "cancelled", "scheduled"), row
    # nothing left claimed or running by a ladder that is gone
    after = count_status(store)
    assert after.get("running", 0) == 0 and after.get("claimed", 0) == 0
    assert_counted_once(db_url)
    store.engine.dispose()


@pytest.mark.slow
def test_ranking_random_greedy_mcts(tmp_path: Path) -> None:
    """After a bounded number of rated games the ladder ranks mcts > greedy > random.

    Duplicate pairs cancel the luck of the deal; a small mcts budget keeps it to a few
    minutes. With 18 games to 21 and mcts:300 the order failed about one run in five
    (greedy above mcts: some six head-to-head games at ~70% leave that to chance), with
    36 games and mcts:1000 one run in ten, and with 60 games to 21 CI still saw it once:
    short games leave too much to the deal. Games to 51 (where mcts:1000 wins 75-79%
    against greedy, docs/bots-research.md) make each head-to-head game count for more.

    The same claim with less waiting (the games are mostly latency: about 0.3 CPU seconds
    each). With three slots and three matches a bot, a pair ran alone: a bot playing a
    pair had room for one more game, a pair needs two. ``--concurrency 4`` and four games
    a bot let two pairs run at once. That shares the games out more evenly, where one
    pair at a time gave mcts and greedy, the two closest, more of them (the matchmaker's
    window favours the closest: 26 of 60 in the run measured): so the test waits for 60
    rated games and 24 head-to-head games of mcts and greedy (two in five of 60), which
    decide the claim (75 games, 24 of them mcts-greedy, in the run measured: half the
    time of one pair at a time, the same CPU). The versions' validation games (unrated:
    not among the 60) are waived, as no new version is the subject here.
    """
    ladder = LadderProcess(
        tmp_path / "ladder",
        f"sqlite:///{tmp_path / 'ladder.sqlite3'}",
        "--rule",
        "target=51",
        "--concurrency",
        "4",
    )
    ladder.start()
    stub = ladder.stub()
    try:
        for name, spec in (
            ("random", "random"),
            ("greedy", "greedy"),
            ("mcts", "mcts:iterations=1000"),
        ):
            ladder.add(name, spec, max_concurrency=4)
        settled(open_store(ladder.db))

        def enough() -> ladder_pb2.GetStandingsResponse | None:
            h2h = stub.GetHeadToHead(ladder_pb2.GetHeadToHeadRequest(bot_a="mcts", bot_b="greedy"))
            if h2h.games < 24:
                return None
            response = stub.GetStandings(ladder_pb2.GetStandingsRequest())
            return response if response.rated_games >= 60 else None

        standings = wait_for(enough, 900, "60 rated games, 24 of them mcts against greedy")
    finally:
        ladder.stop()
    by_mu = sorted(standings.entries, key=lambda e: -e.rating.mu)
    assert [e.bot.name for e in by_mu] == ["mcts", "greedy", "random"], standings


def test_counted_once_holds_while_a_pair_is_half_played(db_url: str) -> None:
    """The SIGKILL test's check at the moment it kills: a pair's first twin finished, its
    second still running. (The check counted that twin as rated, while the store rightly
    rates it only with its pair: the SIGKILL test failed whenever the kill came between
    the two games, 2 runs in 12.)"""
    from sqlalchemy import update

    from cirulla.ladder.schema import bot_versions
    from cirulla.ladder.store import (
        MatchConfig,
        MatchOutcome,
        MatchPlan,
        SeatOutcome,
        SeatPlan,
    )

    store = open_store(db_url)
    try:
        store.add_bot("a", "random")
        store.add_bot("b", "random")
        with store.engine.begin() as conn:
            conn.execute(update(bot_versions).values(validation_games_left=0))
        a, b = (store.get_bot(n)["version_id"] for n in "ab")
        plans = [
            MatchPlan("2p", (SeatPlan(0, 0, x), SeatPlan(1, 1, y)), 7, MatchConfig(), "p-1", i)
            for i, (x, y) in enumerate(((a, b), (b, a)))
        ]
        first, second = store.schedule(plans)
        store.claim("w", "x:1")
        store.claim("w", "x:1")
        win = MatchOutcome(0, (51, 20), (SeatOutcome(0), SeatOutcome(1)), 3)
        assert store.finish(first, win)
        assert_counted_once(db_url)
        assert store.finish(second, win)
        assert_counted_once(db_url)
        assert store.rated_games("2p") == 2
    finally:
        store.engine.dispose()

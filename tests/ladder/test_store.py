"""The ladder store on a real database: migrations, bots and versions, claiming, results
and ratings recorded exactly once, withheld duplicate twins."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from cirulla.ladder import rating
from cirulla.ladder.db import database_url, open_database
from cirulla.ladder.store import (
    FAILURES_TO_DEACTIVATE,
    VALIDATION_GAMES,
    LadderError,
    LadderStore,
    MatchConfig,
    MatchOutcome,
    MatchPlan,
    NotFound,
    SeatOutcome,
    SeatPlan,
)


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(db_url: str, clock: Clock) -> LadderStore:
    """On SQLite and on the real PostgreSQL (``db_url`` of tests/postgres.py)."""
    return LadderStore(open_database(db_url), clock=clock)


def plan2(a: int, b: int, pair: str | None = None, index: int = 0) -> MatchPlan:
    return MatchPlan("2p", (SeatPlan(0, 0, a), SeatPlan(1, 1, b)), 7, MatchConfig(), pair, index)


def win(side: int, totals: tuple[int, ...] = (51, 20)) -> MatchOutcome:
    return MatchOutcome(winner=side, totals=totals, seats=(SeatOutcome(0), SeatOutcome(1)), deals=3)


def validated(store: LadderStore, *names: str) -> None:
    from sqlalchemy import update

    from cirulla.ladder.schema import bot_versions

    with store.engine.begin() as conn:
        conn.execute(update(bot_versions).values(validation_games_left=0))


def test_migrations_create_every_table_and_run_twice(db_url: str) -> None:
    open_database(db_url)
    engine = open_database(db_url)
    names = set(inspect(engine).get_table_names())
    assert {
        "bots",
        "bot_versions",
        "ratings",
        "rating_history",
        "ladder_matches",
        "ladder_seats",
        "workers",
        "enrollments",
        "alembic_version",
    } <= names


def test_database_urls() -> None:
    assert database_url("x.sqlite3") == "sqlite:///x.sqlite3"
    assert database_url("postgresql://u@h:5/d") == "postgresql+psycopg://u@h:5/d"
    assert database_url("postgres://u@h/d") == "postgresql+psycopg://u@h/d"
    with pytest.raises(ValueError, match="--db"):
        database_url("mysql://x")


def test_versions_and_bad_input(store: LadderStore) -> None:
    bot, new, key = store.add_bot("greedy", "greedy", ["2p"])
    assert (bot["version"], new) == (1, True)
    assert key and len(key) >= 24  # every bot's author key, returned once
    assert bot["validation_games_left"] == VALIDATION_GAMES
    _, new, _ = store.add_bot("greedy", "greedy", ["2p"])
    assert not new
    bot, new, _ = store.add_bot("greedy", "mcts:iterations=50", ["2p", "3p"])
    assert (bot["version"], new, bot["queues"]) == (2, True, ["2p", "3p"])
    with pytest.raises(LadderError, match="queue '5p'"):
        store.add_bot("x", "random", ["5p"])
    with pytest.raises(LadderError, match="bot_name"):
        store.add_bot("bad name!", "random")
    with pytest.raises(LadderError, match="spec"):
        store.add_bot("x", "nosuchkind")
    with pytest.raises(NotFound):
        store.get_bot("nobody")
    _, _, key = store.add_bot("remote", "connect")
    assert key and store.check_bot_key("remote", key) and not store.check_bot_key("remote", "x")


def test_new_version_keeps_mu_with_wide_sigma(store: LadderStore) -> None:
    store.add_bot("a", "random")
    store.add_bot("b", "random")
    validated(store)
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    for _ in range(5):
        (mid,) = store.schedule([plan2(a, b)])
        assert store.claim("w", "x:1") is not None
        assert store.finish(mid, win(0))
    old = store.standings("2p")[0]
    assert old["bot"]["name"] == "a" and old["sigma"] < rating.SIGMA0
    store.add_bot("a", "greedy")
    fresh = next(e for e in store.standings("2p") if e["bot"]["name"] == "a")
    assert fresh["mu"] == pytest.approx(old["mu"]) and fresh["sigma"] == rating.SIGMA0
    assert fresh["games"] == 0 and fresh["bot"]["version"] == 2


def test_claim_is_exclusive_and_finish_counts_once(store: LadderStore) -> None:
    store.add_bot("a", "random")
    store.add_bot("b", "greedy")
    validated(store)
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    (mid,) = store.schedule([plan2(a, b)])
    claimed = store.claim("w1", "127.0.0.1:1")
    assert claimed is not None and claimed.id == mid
    assert [s.bot_name for s in claimed.seats] == ["a", "b"]
    assert store.claim("w2", "127.0.0.1:2") is None
    assert store.mark_running(mid, "w1", "m-1", {0: "t0", 1: "t1"})
    assert store.seat_tokens(mid) == {0: "t0", 1: "t1"}
    assert store.finish(mid, win(1, (20, 51)))
    assert not store.finish(mid, win(0))  # a second report changes nothing
    st = {e["bot"]["name"]: e for e in store.standings("2p")}
    assert st["b"]["games"] == 1 and st["b"]["wins"] == 1 and st["a"]["wins"] == 0
    assert st["b"]["mu"] > rating.MU0 > st["a"]["mu"]
    assert st["b"]["rank"] == 1 and st["b"]["provisional"]
    shown = store.match(mid)
    assert shown["winner"] == 1 and shown["rated"]
    assert "token" not in str(shown) and "t0" not in str(shown)
    assert store.match("m-1")["id"] == mid
    history = store.bot_history("b")
    assert [p["match_id"] for p in history["rating_history"]] == [mid]


def test_validation_games_are_unrated(store: LadderStore) -> None:
    store.add_bot("a", "random")
    store.add_bot("b", "random")
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    for _ in range(VALIDATION_GAMES):
        (mid,) = store.schedule([plan2(a, b)])
        store.claim("w", "x:1")
        store.finish(mid, win(0))
        assert not store.match(mid)["rated"]
    assert store.get_bot("a")["validation_games_left"] == 0
    (mid,) = store.schedule([plan2(a, b)])
    store.claim("w", "x:1")
    store.finish(mid, win(0))
    assert store.match(mid)["rated"]
    assert store.standings("2p")[0]["games"] == 1


def test_repeated_failures_deactivate_with_reason_and_log(store: LadderStore) -> None:
    store.add_bot("a", "random")
    store.add_bot("b", "random")
    validated(store)
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    for i in range(FAILURES_TO_DEACTIVATE):
        (mid,) = store.schedule([plan2(a, b)])
        store.claim("w", "x:1")
        crash = SeatOutcome(1, "crash", "exit code 3", f"Traceback {i}\nboom")
        store.finish(mid, MatchOutcome(0, (0, 0), (SeatOutcome(0), crash), forfeit_sides=(1,)))
    bot = store.get_bot("b")
    assert bot["state"] == "deactivated"
    assert "3 failures in a row" in bot["state_reason"] and "crash" in bot["state_reason"]
    assert bot["last_log"].endswith("boom")
    assert [c.bot_name for c in store.candidates("2p")] == ["a"]
    assert store.set_state("b", "active")["consecutive_failures"] == 0
    assert len(store.candidates("2p")) == 2


def test_duplicate_twin_is_withheld_until_both_end(store: LadderStore) -> None:
    store.add_bot("a", "random")
    store.add_bot("b", "random")
    validated(store)
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    first, second = store.schedule([plan2(a, b, "lp-1", 0), plan2(b, a, "lp-1", 1)])
    assert store.claim("w", "x:1").id == first
    assert store.claim("w", "x:1").id == second
    store.finish(first, win(0))
    shown = store.match(first)
    assert shown["withheld"] and shown["winner"] is None
    assert all(s["points"] is None and s["mu_after"] is None for s in shown["seats"])
    assert store.bot_history("a")["rating_history"] == []
    assert store.head_to_head("a", "b")["games"] == 0
    store.finish(second, win(1))
    assert not store.match(first)["withheld"] and store.match(first)["winner"] == 0
    h2h = store.head_to_head("a", "b")
    assert (h2h["games"], h2h["a_wins"], h2h["b_wins"]) == (2, 2, 0)


def test_concurrency_limit_and_cancel(store: LadderStore) -> None:
    store.add_bot("a", "random", max_concurrency=1)
    store.add_bot("b", "random")
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    (mid,) = store.schedule([plan2(a, b)])
    assert [c.bot_name for c in store.candidates("2p")] == ["b"]
    assert store.cancel(mid, "test")
    assert not store.cancel(mid, "again")
    assert store.match(mid)["cancel_reason"] == "test"
    assert len(store.candidates("2p")) == 2


def test_inactivity_grows_sigma(store: LadderStore, clock: Clock) -> None:
    store.add_bot("a", "random")
    store.add_bot("b", "random")
    validated(store)
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    for _ in range(8):
        (mid,) = store.schedule([plan2(a, b)])
        store.claim("w", "x:1")
        store.finish(mid, win(0))
    before = store.standings("2p")[0]["sigma"]
    clock.t += 60 * rating.DAY
    after = store.standings("2p")[0]["sigma"]
    assert before < after <= rating.SIGMA0


def test_four_players_rate_partnerships(store: LadderStore) -> None:
    for name in "abcd":
        store.add_bot(name, "random", ["4p"])
    validated(store)
    v = [store.get_bot(n)["version_id"] for n in "abcd"]
    seats = tuple(SeatPlan(i, i % 2, v[i]) for i in range(4))
    (mid,) = store.schedule([MatchPlan("4p", seats, 1, MatchConfig())])
    store.claim("w", "x:1")
    outcome = MatchOutcome(0, (51, 30), tuple(SeatOutcome(i) for i in range(4)), deals=4)
    assert store.finish(mid, outcome)
    st = {e["bot"]["name"]: e for e in store.standings("4p")}
    assert st["a"]["wins"] == st["c"]["wins"] == 1 and st["b"]["wins"] == 0
    assert st["a"]["mu"] > rating.MU0 > st["b"]["mu"]


def test_backlog_follows_the_live_workers_capacity(store: LadderStore, clock: Clock) -> None:
    """``serve --concurrency 0``: the scheduler keeps as many matches waiting as the
    heartbeating workers play at once (their slots), never fewer than 2."""
    from cirulla.ladder.scheduler import Scheduler

    for i in range(12):
        store.add_bot(f"r{i}", "random", max_concurrency=8)
    scheduler = Scheduler(store, MatchConfig(), queues=("2p",), live_within=60.0)

    def fill() -> int:
        scheduler._capacity_at = -1e9  # read the capacity again now
        while scheduler.tick():
            pass
        return store.waiting()

    assert 2 <= fill() <= 3  # no worker yet: the smallest backlog (pairs come two at once)
    store.register_worker("dead", "127.0.0.1:3", slots=10)
    clock.t += 61  # its heartbeat is older than a lease: it does not count
    store.register_worker("one", "127.0.0.1:1", slots=3)
    store.register_worker("two", "127.0.0.1:2", slots=4)
    store.register_worker("serve", "127.0.0.1:4", slots=0)  # serve --concurrency 0
    assert store.live_slots(60.0) == 7
    assert 7 <= fill() <= 8

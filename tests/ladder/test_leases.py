"""Leases: a worker that stops heartbeating loses its matches, each exactly once: a
claimed one goes back to the queue, a running one is cancelled with the reason, and a
late result of a reaped match changes nothing. On SQLite and PostgreSQL."""

from __future__ import annotations

from cirulla.ladder.db import open_database
from cirulla.ladder.leases import lost, reap
from cirulla.ladder.runner import LEASE_SECONDS
from cirulla.ladder.store import (
    LadderStore,
    MatchConfig,
    MatchOutcome,
    MatchPlan,
    SeatOutcome,
    SeatPlan,
)


class Clock:
    def __init__(self) -> None:
        self.t = 2_000_000.0

    def __call__(self) -> float:
        return self.t


def test_expired_leases_requeue_claimed_and_cancel_running(db_url: str) -> None:
    clock = Clock()
    store = LadderStore(open_database(db_url), clock=clock)
    a, _, _ = store.add_bot("a", "random")
    b, _, _ = store.add_bot("b", "greedy")
    plan = MatchPlan(
        "2p", (SeatPlan(0, 0, a["version_id"]), SeatPlan(1, 1, b["version_id"])), 3, MatchConfig()
    )
    first, second = store.schedule([plan, plan])
    w1 = store.register_worker("one", "127.0.0.1:1")
    running = store.claim(w1, "127.0.0.1:1", LEASE_SECONDS)
    claimed = store.claim(w1, "127.0.0.1:1", LEASE_SECONDS)
    assert running is not None and claimed is not None
    assert store.mark_running(running.id, w1, "srv-1", {0: "t0", 1: "t1"})

    clock.t += LEASE_SECONDS / 2
    store.heartbeat(w1, LEASE_SECONDS)  # renewed: good for another full lease
    clock.t += LEASE_SECONDS * 0.9
    assert reap(store) == []
    assert lost(store, w1, {running.id, claimed.id}) == set()

    clock.t += LEASE_SECONDS  # w1 went silent
    reaped = reap(store)
    assert sorted((r.match_id, r.action) for r in reaped) == sorted(
        [(running.id, "cancelled"), (claimed.id, "requeued")]
    )
    assert reap(store) == []  # once only
    assert lost(store, w1, {running.id, claimed.id}) == {running.id, claimed.id}

    cancelled = store.match(running.id)
    assert cancelled["status"] == "cancelled"
    assert "stopped renewing its lease" in cancelled["cancel_reason"]
    late = MatchOutcome(winner=0, totals=(51, 3), seats=(SeatOutcome(0), SeatOutcome(1)))
    assert store.finish(running.id, late) is False  # the dead worker's late report
    assert store.rated_games("2p") == 0

    w2 = store.register_worker("two", "127.0.0.1:2")
    again = store.claim(w2, "127.0.0.1:2", LEASE_SECONDS)
    assert again is not None and again.id == claimed.id
    assert any("re-queued" in note for note in store.match(claimed.id)["notes"])
    assert {first, second} == {running.id, claimed.id}


def test_a_dead_workers_twin_does_not_hold_the_other_twin(db_url: str) -> None:
    """Twins share a worker (its match server withholds the first game's record until the
    second is over), but not a dead one: the other twin would wait forever, and enough
    such twins fill the backlog and stop the scheduler (seen in CI: a connect-in bot never
    got a match again after its worker was SIGKILLed)."""
    clock = Clock()
    store = LadderStore(open_database(db_url), clock=clock)
    a, _, _ = store.add_bot("a", "random")
    b, _, _ = store.add_bot("b", "greedy")
    seats = (SeatPlan(0, 0, a["version_id"]), SeatPlan(1, 1, b["version_id"]))
    cancelled_pair = [MatchPlan("2p", seats, 3, MatchConfig(), "p1", i) for i in (0, 1)]
    store.schedule(cancelled_pair)
    dying = store.register_worker("dying", "127.0.0.1:1")
    live = store.register_worker("live", "127.0.0.1:2")
    first = store.claim(dying, "127.0.0.1:1", LEASE_SECONDS)
    assert first is not None and first.pair_id == "p1"
    assert store.mark_running(first.id, dying, "srv-1", {0: "t0", 1: "t1"})
    # while the dying worker lives, the twin waits for it
    assert store.claim(live, "127.0.0.1:2", LEASE_SECONDS) is None
    clock.t += LEASE_SECONDS * 2  # the dying worker went silent
    store.heartbeat(live, LEASE_SECONDS)
    assert [r.action for r in reap(store)] == ["cancelled"]
    twin = store.claim(live, "127.0.0.1:2", LEASE_SECONDS)
    assert twin is not None and twin.pair_id == "p1" and twin.id != first.id


def test_a_twin_finished_on_a_worker_that_died_binds_nothing(db_url: str) -> None:
    clock = Clock()
    store = LadderStore(open_database(db_url), clock=clock)
    a, _, _ = store.add_bot("a", "random")
    b, _, _ = store.add_bot("b", "greedy")
    seats = (SeatPlan(0, 0, a["version_id"]), SeatPlan(1, 1, b["version_id"]))
    store.schedule([MatchPlan("2p", seats, 4, MatchConfig(), "p2", i) for i in (0, 1)])
    other = store.register_worker("other", "127.0.0.1:3")
    live = store.register_worker("live", "127.0.0.1:2")
    done = store.claim(other, "127.0.0.1:3", LEASE_SECONDS)
    assert done is not None and store.mark_running(done.id, other, "srv-3", {0: "t0", 1: "t1"})
    outcome = MatchOutcome(winner=0, totals=(51, 3), seats=(SeatOutcome(0), SeatOutcome(1)))
    assert store.finish(done.id, outcome)
    assert store.claim(live, "127.0.0.1:2", LEASE_SECONDS) is None  # "other" still lives
    clock.t += LEASE_SECONDS * 2  # "other" went silent
    store.heartbeat(live, LEASE_SECONDS)
    last = store.claim(live, "127.0.0.1:2", LEASE_SECONDS)
    assert last is not None and last.pair_id == "p2" and last.id != done.id

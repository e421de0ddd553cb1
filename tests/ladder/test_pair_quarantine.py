"""The ladder's kept-alive bots and duplicate pairs: a process that played a game of a pair
plays nothing else until the pair is over, as the ladder's own database says (a twin
cancelled by a reaper, or played by another worker, ends it too), and on a real match
server with two matches at a time no process plays a match that starts before the pair
it played has ended (tests/confinement/test_pair_quarantine.py: the pool on its own)."""

from __future__ import annotations

import asyncio
import collections
import datetime
import gzip
import json
import threading
from collections.abc import Callable
from pathlib import Path

from cirulla.bots.botspec import BotSpec
from cirulla.ladder.db import open_database
from cirulla.ladder.runner import MatchRunner
from cirulla.ladder.store import (
    LadderStore,
    MatchConfig,
    MatchOutcome,
    MatchPlan,
    SeatOutcome,
    SeatPlan,
)
from cirulla.server.app import start_server

RANDOM = BotSpec.parse("random")
ADMIN = "pair-quarantine-admin"


def serve_in_thread() -> tuple[str, Callable[[], None]]:
    """A match server with an admin token (the worker's: it reads its matches' records
    while their twins are in play, as a ladder's does)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    serving = start_server("127.0.0.1:0", admin_token=ADMIN)
    running = asyncio.run_coroutine_threadsafe(serving, loop).result(30)

    def stop() -> None:
        asyncio.run_coroutine_threadsafe(running.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    return f"127.0.0.1:{running.port}", stop


def plan2(a: int, b: int, pair: str | None = None, index: int = 0, seed: int = 7) -> MatchPlan:
    config = MatchConfig(rules={"target": 11})
    return MatchPlan("2p", (SeatPlan(0, 0, a), SeatPlan(1, 1, b)), seed, config, pair, index)


def ladder(tmp_path: Path) -> tuple[LadderStore, int, int]:
    store = LadderStore(open_database(f"sqlite:///{tmp_path / 'ladder.sqlite3'}"))
    store.add_bot("a", "random", max_concurrency=4)
    store.add_bot("b", "greedy", max_concurrency=4)
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    return store, a, b


def test_a_pair_process_plays_again_once_the_ladder_says_the_pair_is_over(
    tmp_path: Path,
) -> None:
    store, a, b = ladder(tmp_path)
    first, second = store.schedule([plan2(a, b, "lp-1", 0), plan2(b, a, "lp-1", 1)])
    (tmp_path / "out" / "logs").mkdir(parents=True)
    runner = MatchRunner(store, "127.0.0.1:1", tmp_path / "out", "w")
    pool = runner.bots
    try:
        played = pool.acquire("a", spec=RANDOM, pair_id="lp-1")
        pool.release("a", played)
        assert not runner.pair_over("lp-1")
        single = pool.acquire("a", spec=RANDOM)  # the pair is open: another process
        assert single.pid != played.pid
        pool.release("a", single)
        assert store.claim("w", "x:1").id == first
        assert store.claim("w", "x:1").id == second
        store.finish(first, MatchOutcome(0, (51, 20), (SeatOutcome(0), SeatOutcome(1)), 3))
        # its twin still running: the process that played it stays out
        single, held = pool.acquire("a", spec=RANDOM), pool.acquire("a", spec=RANDOM)
        assert held.pid not in {played.pid, single.pid}
        pool.release("a", single)
        pool.release("a", held)
        # the twin is cancelled where this pool does not see it (a reaper, a stop)
        assert store.cancel(second, "its worker's lease expired")
        assert runner.pair_over("lp-1")
        taken = {pool.acquire("a", spec=RANDOM).pid for _ in range(3)}
        assert taken == {played.pid, single.pid, held.pid}
        assert pool.started("a") == 3
    finally:
        runner.close()


def _when(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_two_slots_no_process_plays_while_its_pair_is_open(tmp_path: Path) -> None:
    """Five pairs, two matches at a time on one worker: twins start together and end
    apart, the next pair's first match starts when one of them ends."""
    store, a, b = ladder(tmp_path)
    for k in range(5):
        store.schedule([plan2(a, b, f"lp-{k}", 0, 100 + k), plan2(b, a, f"lp-{k}", 1, 100 + k)])
    address, stop_server = serve_in_thread()
    out = tmp_path / "out"
    outcomes: dict[str, MatchOutcome] = {}
    runner = MatchRunner(
        store, address, out, "w", ADMIN, on_done=lambda mid, o: outcomes.__setitem__(mid, o)
    )
    threads = [threading.Thread(target=runner.loop) for _ in range(2)]
    try:
        for thread in threads:
            thread.start()
        deadline = threading.Event()
        for _ in range(600):
            if len([o for o in outcomes.values() if o is not None]) >= 10:
                break
            deadline.wait(0.2)
    finally:
        runner.stop.set()
        for thread in threads:
            thread.join(60)
        runner.close()
        stop_server()
    assert len(outcomes) == 10 and all(o is not None for o in outcomes.values()), outcomes
    times: dict[str, tuple[datetime.datetime, datetime.datetime]] = {}
    pair_of: dict[str, str] = {}
    for match_id in outcomes:
        shown = store.match(match_id)
        pair_of[match_id] = str(shown["pair_id"])
        path = out / "records" / f"{shown['server_match_id']}.json.gz"
        record = json.loads(gzip.decompress(path.read_bytes()))
        times[match_id] = (_when(record["start_time"]), _when(record["finish_time"]))
    pair_end: dict[str, datetime.datetime] = {}
    for match_id, pair in pair_of.items():
        pair_end[pair] = max(pair_end.get(pair, times[match_id][1]), times[match_id][1])
    played: dict[str, list[str]] = collections.defaultdict(list)
    for match_id, outcome in outcomes.items():
        for log in outcome.logs:
            played[log].append(match_id)
    early = [
        (log, match_id, later)
        for log, its in played.items()
        for match_id in its
        for later in its
        if pair_of[later] != pair_of[match_id]
        and times[match_id][0] < times[later][0] < pair_end[pair_of[match_id]]
    ]
    assert not early, f"(process log, its pair's match, a match it started meanwhile): {early}"
    # the cost: a bot's processes, at most twice its slots (2): those playing, and those
    # of a pair whose twin is still in play
    per_bot = collections.Counter(Path(log).name.split("-")[0] for log in played)
    assert all(n <= 4 for n in per_bot.values()), per_bot
    print("processes per bot:", dict(per_bot), "matches:", len(outcomes))

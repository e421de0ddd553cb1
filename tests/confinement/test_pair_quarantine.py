"""A kept-alive bot process that played a game of a duplicate pair plays nothing else
until the pair is over (docs/ladder.md, "No process plays both twins"): whatever it showed
in another match meanwhile (its first ``Hello``'s name, its moves, which anyone may
spectate live) could be read by the process playing the twin, whose opponent's hand is
the hand this process held. Real bot processes, a real tournament; no mocks."""

from __future__ import annotations

import collections
import datetime
import json
import subprocess
import sys
from pathlib import Path

from cirulla.bots.botspec import BotSpec
from cirulla.clients.matches.bot_pool import MAX_UNWAITED_GROUPS, BotPool

RANDOM = BotSpec.parse("random")


def test_a_process_of_an_open_pair_plays_nothing_until_the_pair_is_over(
    tmp_path: Path,
) -> None:
    (tmp_path / "logs").mkdir()
    pool = BotPool({"r": RANDOM}, tmp_path / "logs")
    try:
        first = pool.acquire("r", deal_group="g")  # its size comes with its games' ends
        pool.release("r", first)
        # another pair's game, and a single game: other processes, never the first
        other = pool.acquire("r", deal_group="h")
        assert other.pid != first.pid
        pool.release("r", other)
        single = pool.acquire("r")
        assert single.pid not in {first.pid, other.pid}
        pool.release("r", single)
        assert pool.quarantined(first) == {"g"}
        # the twin of g: any process that played no game of g or of an open group
        twin = pool.acquire("r", deal_group="g", group_size=2)
        assert twin.pid == single.pid
        pool.game_over("g", "first game", 2)
        pool.game_over("g", "first game", 2)  # the same game again counts once
        assert pool.quarantined(first) == {"g"}
        pool.release("r", twin)
        pool.game_over("g", "twin", 2)  # both games of g over: its processes play again
        assert pool.quarantined(first) == set() and pool.quarantined(twin) == set()
        taken = [pool.acquire("r") for _ in range(3)]
        pids = [served.pid for served in taken]
        assert first.pid in pids and twin.pid in pids
        # h was never reported over: its process stays out, whatever else is asked
        assert other.pid not in pids and pool.quarantined(other) == {"h"}
        assert pool.started("r") == 4  # first, other, single (= twin), one more
        for served in taken:
            pool.release("r", served)
        # a game of g (played again) still never goes to a process that played g
        again = pool.acquire("r", deal_group="g", group_size=2)
        assert again.pid not in {first.pid, twin.pid, other.pid}
        pool.release("r", again)
        # only the quarantined processes are stopped by stop_idle(quarantined_only)
        assert pool.stop_idle(0.0, quarantined_only=True) == 2  # other (h), again (g)
        assert other.poll() is not None and again.poll() is not None
        assert first.alive() and twin.alive()
    finally:
        pool.close()


def test_an_unknown_group_size_keeps_the_process_out_until_told(tmp_path: Path) -> None:
    """No size (a caller that did not say it): never over by counting, only when told
    or when ``settled`` says so; an error there is 'not over'."""
    (tmp_path / "logs").mkdir()
    settled: set[str] = set()
    asked: list[str] = []

    def is_settled(group: str) -> bool:
        asked.append(group)
        if group == "broken":
            raise RuntimeError("the database is down")
        return group in settled

    pool = BotPool({"r": RANDOM}, tmp_path / "logs", settled=is_settled)
    try:
        first = pool.acquire("r", deal_group="g")
        pool.release("r", first)
        for n in range(5):
            pool.game_over("g", n)
        assert pool.quarantined(first) == {"g"}
        second = pool.acquire("r", deal_group="broken", group_size=2)
        assert second.pid != first.pid and asked == ["g"]
        pool.release("r", second)
        third = pool.acquire("r")
        assert third.pid not in {first.pid, second.pid}
        assert sorted(asked) == ["broken", "g", "g"]
        pool.release("r", third)
        settled.add("g")  # the caller's own record says g is over
        reused = [pool.acquire("r").pid for _ in range(2)]
        assert sorted(reused) == sorted([first.pid, third.pid])
        assert pool.quarantined(second) == {"broken"}
        # a single game (group of 1) quarantines nothing
        pool_single = pool.acquire("r", deal_group="s", group_size=1)
        pool.release("r", pool_single)
        assert pool.quarantined(pool_single) == set()
    finally:
        pool.close()


def _when(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_in_a_tournament_no_process_plays_while_a_pair_it_played_is_open(
    tmp_path: Path,
) -> None:
    """Two slots, six duplicate pairs: the pairs' games overlap, so on the old pool a
    process that ended one game of a pair went on to the next pair's game while the twin
    was still in play. Which process played which game: the game's logs (one per
    process); when: the records' start and finish times, from the match server."""
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--bot", "random", "--bot", "greedy"]
    argv += ["--games", "12", "--concurrency", "2", "--seed", "5", "--bot-seed", "1"]
    done = subprocess.run([*argv, "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 12
    times = {}
    for game in games:
        record = json.loads((out / "records" / f"{game['match_id']}.json").read_text())
        times[game["match_id"]] = (_when(record["start_time"]), _when(record["finish_time"]))
    pair_end: dict[int, datetime.datetime] = collections.defaultdict(
        lambda: datetime.datetime.min.replace(tzinfo=datetime.UTC)
    )
    for game in games:
        pair_end[game["seed"]] = max(pair_end[game["seed"]], times[game["match_id"]][1])
    assert len(pair_end) == 6
    played: dict[str, list[dict[str, object]]] = collections.defaultdict(list)
    for game in games:
        for log in game["logs"]:
            played[log].append(game)
    early = []
    for log, its in played.items():
        for game in its:
            began, open_until = times[str(game["match_id"])][0], pair_end[int(str(game["seed"]))]
            for later in its:
                start = times[str(later["match_id"])][0]
                if later["seed"] != game["seed"] and began < start < open_until:
                    early.append((log, game["match_id"], later["match_id"]))
    assert not early, f"(process log, its pair's game, a game it started meanwhile): {early}"
    # the cost: processes per bot, against the concurrency (2)
    per_bot = collections.Counter(Path(log).name.split("-")[0] for log in played)
    assert all(n <= 6 for n in per_bot.values()), per_bot


def test_groups_no_process_waits_on_stay_bounded(tmp_path: Path) -> None:
    """A ladder worker may see one game of a pair end and never the other (replayed on
    another worker): those groups are kept, up to a bound, oldest dropped first, while a
    group a process waits on is never dropped."""
    pool = BotPool({}, tmp_path)
    waited = "pair-held"
    with pool._lock:  # a process of this group waits on it (acquire marks it so)
        pool._group(waited, 2).members.add(object())  # type: ignore[arg-type]
    for n in range(MAX_UNWAITED_GROUPS + 500):
        pool.game_over(f"pair-{n}", "first", 2)
    assert pool.open_groups() == MAX_UNWAITED_GROUPS + 1
    assert waited in pool._groups and f"pair-{MAX_UNWAITED_GROUPS + 499}" in pool._groups
    assert "pair-0" not in pool._groups  # the oldest went first
    pool.game_over("pair-0", "second", 2)  # a dropped group's other game: not over alone
    assert "pair-0" in pool._groups
    pool.game_over(waited, "a", 2)
    pool.game_over(waited, "b", 2)  # both games of the waited group ended: over
    assert waited not in pool._groups

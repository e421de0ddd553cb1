"""A kept-alive bot process never plays two games dealt alike (duplicate twins): it could
remember its hands from the first, which are its opponent's in the second. The tournament's
pool keeps the rule the ladder's does (the deal group is ``BotPool.acquire``'s)."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

from cirulla.bots.botspec import BotSpec
from cirulla.clients.matches.bot_pool import BotPool


def test_the_pool_gives_a_deal_group_only_to_processes_that_did_not_play_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "logs").mkdir()
    pool = BotPool({"r": BotSpec.parse("random")}, tmp_path / "logs")
    try:
        first = pool.acquire("r", deal_group="g1")
        pool.release("r", first)
        twin = pool.acquire("r", deal_group="g1")
        assert twin.pid != first.pid  # a new process: the idle one played g1
        pool.release("r", twin)
        pool.game_over("g1", 0, 2)  # g1's two games are over: its processes play again
        pool.game_over("g1", 1, 2)
        # both stay for other groups: no process is thrown away for it
        other = {pool.acquire("r", deal_group="g2").pid, pool.acquire("r", deal_group="g2").pid}
        assert other == {first.pid, twin.pid}
    finally:
        pool.close()


def test_in_a_tournament_no_process_plays_both_games_of_a_deck_seed(tmp_path: Path) -> None:
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--bot", "random", "--bot", "greedy"]
    argv += ["--games", "6", "--concurrency", "1", "--seed", "3", "--bot-seed", "1"]
    done = subprocess.run([*argv, "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 6
    logs_by_seed: dict[int, list[str]] = collections.defaultdict(list)
    for game in games:
        logs_by_seed[game["seed"]].extend(game["logs"])
    assert len(logs_by_seed) == 3  # three duplicate pairs
    for seed, logs in logs_by_seed.items():
        assert len(logs) == len(set(logs)) == 4, (seed, logs)  # 4 seats, 4 processes
    started = {log for game in games for log in game["logs"]}
    assert len(started) <= 4  # and two processes per bot serve every pair, alternating

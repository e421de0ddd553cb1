"""``cirulla bench pool`` as a user runs it: the same tournament played locally and on
two ``cirulla ladder worker`` processes gives the same games (its ``same_results``: the
deck and bot seeds fixed, the pool reproduces a local run game for game)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_the_pool_plays_the_local_tournaments_games(postgres_server: str) -> None:
    bench = ["bench", "pool", "--db", postgres_server, "--games", "4", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "cirulla", *bench],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["workers"] == 2 and report["local_s"] > 0 and report["pool_s"] > 0
    assert report["same_results"] is True

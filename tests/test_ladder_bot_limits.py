"""A ladder bot's own limits: ``cirulla ladder add NAME SPEC --memory 256M`` stores them
with the version (migration 0006), the version's matches run under them, and a bot
killed at its limit has the limit named in its failure."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.ladder_harness import LadderProcess, open_store, wait_for

BALLOON = Path(__file__).parent / "bots" / "hostile.py"


def test_ladder_add_limits_are_stored_with_the_version_and_applied(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    ladder = LadderProcess(tmp_path / "ladder", db)
    try:
        ladder.start()
        ladder.cli("add", "random", "random")
        added = ladder.cli(
            "add", "balloon", f"cmd:{sys.executable} {BALLOON} balloon", "--memory", "256M"
        )
        assert "limits in the sandbox: memory=256M" in added.stdout, added.stdout
        bad = ladder.cli("add", "other", "random", "--memory", "lots", check=False)
        assert bad.returncode == 2 and "--memory" in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        store = open_store(db)
        bot = store.bots.get_bot("balloon")
        assert bot["limits"] == "memory=256M,processes=256,cpu=1,output=16M,tmp=512M"
        # the same spec with other limits is a new version
        again = ladder.cli(
            "add", "balloon", f"cmd:{sys.executable} {BALLOON} balloon", "--limits", "memory=300M"
        )
        assert "version 2" in again.stdout, again.stdout
        ladder.cli("request", "balloon", "random")  # requested games are played first

        def named() -> str:
            failure = str(store.bots.get_bot("balloon")["last_failure"])
            return failure if "killed: memory limit 300 MiB" in failure else ""

        wait_for(named, 240, "the balloon to be killed at its own limit")
    finally:
        ladder.stop()

"""A connect-in bot that is not connected shows as offline in the standings (not as
"validating" forever): before it first enrolls, and again after its process dies. On a
real ladder, SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, wait_for
from tests.server_harness import tied_to_this_process

#: A built-in bot as a connect-in bot.
BOT = [sys.executable, "-m", "cirulla", "bot", "random"]


def state_of(ladder: LadderProcess, name: str) -> str:
    """The bot's state column in ``cirulla ladder standings``."""
    out = ladder.cli("standings").stdout
    lines = [line for line in out.splitlines() if f" {name} " in line]
    assert len(lines) == 1, out
    return lines[0]


def offline(ladder: LadderProcess, name: str) -> bool:
    """The bot's offline flag in the standings, over the rpc the command reads: polled
    this way (an interpreter a poll was most of this test's CPU), and the command's state
    column checked once, after the flag changed."""
    out = ladder.stub().GetStandings(ladder_pb2.GetStandingsRequest(), timeout=60)
    return next(e.bot for e in out.entries if e.bot.name == name).offline


@pytest.mark.slow
def test_a_dropped_connect_in_bot_shows_offline(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one table row per bot
    ladder = LadderProcess(tmp_path / "ladder", db_url)
    address = ladder.start()
    bot: subprocess.Popen[bytes] | None = None
    try:
        ladder.cli("add", "rnd", "random")
        out = ladder.cli("add", "remote", "connect").stdout
        key = out.strip().splitlines()[-1].strip()
        assert "offline" in state_of(ladder, "remote")  # registered, never connected
        assert "validating" not in state_of(ladder, "remote")
        standings = json.loads(ladder.cli("standings", "--json").stdout)
        (remote,) = [e["bot"] for e in standings["entries"] if e["bot"]["name"] == "remote"]
        assert remote["offline"] is True and remote["connect_in"] is True
        (rnd,) = [e["bot"] for e in standings["entries"] if e["bot"]["name"] == "rnd"]
        assert rnd["offline"] is False  # a managed bot is never offline

        with (tmp_path / "bot.log").open("ab") as log:
            bot = subprocess.Popen(
                tied_to_this_process([*BOT, "--ladder", address, "--bot-name", "remote"]),
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "CIRULLA_BOT_KEY": key},
                start_new_session=True,
            )
        wait_for(lambda: not offline(ladder, "remote"), 60, "the bot online", every=0.2)
        assert "offline" not in state_of(ladder, "remote")
        os.killpg(bot.pid, signal.SIGKILL)  # the bot's process dies: its stream drops
        bot.wait(30)
        wait_for(lambda: offline(ladder, "remote"), 60, "offline again", every=0.2)
        line = state_of(ladder, "remote")
        assert "offline (not connected)" in line, line
        history = ladder.cli("history", "remote").stdout
        assert "offline" in history
    finally:
        if bot is not None and bot.poll() is None:
            os.killpg(bot.pid, signal.SIGKILL)
            bot.wait(30)
        ladder.stop()

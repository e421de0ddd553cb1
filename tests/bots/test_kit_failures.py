"""A bot whose decision function raises plays on with the default action, and its log
shows where: the first failure with its traceback (the bot's file and line), the others
in one line each (docs/bots.md, "The kit API"). It was only `the policy failed
(ZeroDivisionError: division by zero)`, with no line to look at.

A real server, the bot and its opponent as subprocesses, as a newcomer runs them.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from cirulla.clients.matches.supervise import LocalServer
from tests.bots.test_kit import CIRULLA, create, seat_env, start

BUGGY_BOT = """
from cirulla.bots.kit import run_bot


def decide(view, legal, time_left):
    return len(legal) // 0  # the bug


run_bot(decide, name="buggy")
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("kit-failures")
    with LocalServer(tmp / "server.sqlite3", tmp / "server.log") as local:
        yield local.address


def test_a_failing_policy_logs_its_first_traceback_then_one_line_each(
    server: str, tmp_path: Path
) -> None:
    match_id, tokens = create(server, "--target", "1")
    script = tmp_path / "buggy_bot.py"
    script.write_text(textwrap.dedent(BUGGY_BOT))
    buggy = start(
        [sys.executable, str(script)], seat_env(server, match_id, tokens[0]), tmp_path / "bug.log"
    )
    other = start(
        [*CIRULLA, "bot", "greedy"], seat_env(server, match_id, tokens[1]), tmp_path / "g.log"
    )
    assert other.wait(180) == 0
    assert buggy.wait(60) == 0  # the match was played to its end, on default actions
    failures = [
        line
        for line in (tmp_path / "bug.log").read_text().splitlines()
        if "the policy failed (ZeroDivisionError('integer division or modulo by zero'))" in line
    ]
    assert len(failures) > 1
    assert "Traceback (most recent call last)" in failures[0]
    assert f'File \\"{script}\\", line 6, in decide' in failures[0], failures[0]
    assert not any("Traceback" in line for line in failures[1:])

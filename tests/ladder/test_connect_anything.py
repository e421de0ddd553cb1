"""Any engine connects in: a text-protocol engine (the JavaScript example, with node)
through ``cirulla bot text --ladder``, and the Python bot of docs/ladder.md's code block
through ``LadderBot``, both enrolled on a real ``cirulla ladder serve``, play rated
matches against a managed bot and each other."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, pids_mentioning, wait_for
from tests.server_harness import tied_to_this_process

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "examples" / "text_engine.js"


def docs_ladder_bot() -> str:
    """The Python block of docs/ladder.md's "Any engine, any Python bot" section."""
    text = (ROOT / "docs" / "ladder.md").read_text()
    section = text[text.index("### Any engine, any Python bot") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def add_connect(ladder: LadderProcess, name: str) -> str:
    out = ladder.cli("add", name, "connect").stdout
    key = out.strip().splitlines()[-1].strip()
    assert "bot key" in out and len(key) > 20, out
    return key


def start(argv: list[str], log: Path, env: dict[str, str], cwd: Path) -> subprocess.Popen[Any]:
    with log.open("ab") as f:
        return subprocess.Popen(
            tied_to_this_process(argv),
            cwd=cwd,
            stdout=f,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env},
            start_new_session=True,
        )


def rated_games(ladder: LadderProcess) -> dict[str, int]:
    """Rated games by bot, over the standings rpc (polled: the command, an interpreter's
    start each time, was most of the test's CPU; tests/ladder/test_serve.py checks it)."""
    out = ladder.stub().GetStandings(ladder_pb2.GetStandingsRequest(), timeout=60)
    return {e.bot.name: e.rating.games for e in out.entries}


@pytest.mark.slow
def test_a_text_engine_and_the_docs_python_bot_play_rated_ladder_matches(tmp_path: Path) -> None:
    ladder = LadderProcess(tmp_path / "ladder", f"sqlite:///{tmp_path / 'ladder.sqlite3'}")
    address = ladder.start()
    procs: list[subprocess.Popen[Any]] = []
    try:
        ladder.cli("add", "rnd", "random")
        js_key = add_connect(ladder, "js")
        py_key = add_connect(ladder, "py")
        text_bot = start(
            [sys.executable, "-m", "cirulla", "bot", "text", "--ladder", address,
             "--bot-name", "js", "--", "node", str(ENGINE)],
            tmp_path / "js.log",
            {"CIRULLA_BOT_KEY": js_key},
            tmp_path,
        )  # fmt: skip
        procs.append(text_bot)
        (tmp_path / "my_ladder_bot.py").write_text(docs_ladder_bot())
        procs.append(
            start(
                [sys.executable, "my_ladder_bot.py"],
                tmp_path / "py.log",
                {"CIRULLA_BOT_KEY": py_key, "CIRULLA_LADDER": address, "CIRULLA_BOT_NAME": "py"},
                tmp_path,
            )
        )
        games = wait_for(
            lambda: (g := rated_games(ladder)).get("js", 0) >= 1 and g.get("py", 0) >= 1 and g,
            300,
            "rated games of both connect-in bots",
            every=0.2,
        )
        assert games["js"] >= 1 and games["py"] >= 1
        for name in ("js", "py"):
            history = json.loads(ladder.cli("history", name, "--json").stdout)
            rated = [m for m in history["matches"] if m["rated"]]
            assert rated, history
            for m in rated:  # every seat played its game to the end
                assert {s["outcome"] for s in m["seats"]} == {"ok"}, m
            assert not history["bot"]["consecutive_failures"]
        assert "engine js-example" in (tmp_path / "js.log").read_text()
        # SIGTERM: the text bot stops its engines, then itself
        text_bot.send_signal(signal.SIGTERM)
        text_bot.wait(30)
        time.sleep(0.5)
        assert not [p for p in pids_mentioning(str(ENGINE))], "an engine outlived its bot"
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
        ladder.stop()


def test_a_text_engine_that_does_not_start_is_one_line(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "cirulla", "bot", "text", "--ladder", "127.0.0.1:9",
         "--bot-name", "js", "--", str(tmp_path / "no-such-engine")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "CIRULLA_BOT_KEY": "k" * 30},
    )  # fmt: skip
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    (line,) = [ln for ln in res.stderr.splitlines() if ln.startswith("cirulla bot text:")]
    assert "no-such-engine" in line

"""The README's "enter your own bot" path, exactly as a newcomer follows it: the example
bot copied out of docs/bots.md into a folder of their own, then the README's tournament
command run by the installed ``cirulla`` script, with no virtualenv on PATH.

Only ``--games 2 --target 11 --seed 3 --out DIR`` are added to the README's command, to
keep the test short; everything else (the ``{python}`` placeholder, the relative path of
the bot, the environment the bot reads its connection from) is the newcomer's.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_bot_command() -> list[str]:
    """The README's tournament command that enters ``my_bot.py``."""
    lines = [
        line.strip()
        for line in (ROOT / "README.md").read_text().splitlines()
        if line.strip().startswith("cirulla tournament") and "my_bot.py" in line
    ]
    assert len(lines) == 1, lines
    return shlex.split(lines[0])


def docs_example_bot() -> str:
    """The first Python block of docs/bots.md's "A complete bot" section."""
    text = (ROOT / "docs" / "bots.md").read_text()
    section = text[text.index("## A complete bot") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_readme_bot_command_plays_the_docs_example_bot(tmp_path: Path) -> None:
    argv = readme_bot_command()
    assert argv[:2] == ["cirulla", "tournament"] and "mine=cmd:{python} my_bot.py" in argv
    (tmp_path / "my_bot.py").write_text(docs_example_bot())
    script = Path(sys.executable).with_name("cirulla")  # the venv's console script
    out = tmp_path / "t"
    # No venv on PATH: a bare `python` would not find cirulla; {python} must.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = "/usr/bin:/bin"
    short = ["--games", "2", "--target", "11", "--seed", "3", "--out", str(out)]
    res = subprocess.run(
        [str(script), *argv[1:], *short],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["bots"] == {"greedy": "greedy", "mine": "cmd:{python} my_bot.py"}
    assert len(doc["games"]) == 2
    for game in doc["games"]:
        assert set(game["seats"]) == {"greedy", "mine"}
        assert game["seat_outcomes"] == ["ok", "ok"], game["notes"]
        assert game["winner"] is not None
    mine = next(b for b in doc["standings"]["bots"] if b["bot"] == "mine")
    assert mine["games"] == 2 and mine["problems"] == {}
    # the bot's own log shows the kit's default logging: it joined and played
    for game in doc["games"]:
        log = out / game["logs"][game["seats"].index("mine")]
        assert "joined match" in log.read_text()


CIRULLA = [sys.executable, "-m", "cirulla", "tournament"]


def docs_bots_file() -> str:
    """The TOML block of docs/tournament.md's "Saved bot definitions" section."""
    text = (ROOT / "docs" / "tournament.md").read_text()
    section = text[text.index("### Saved bot definitions") :]
    match = re.search(r"```toml\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_docs_bots_file_plays_the_docs_example_bot(tmp_path: Path) -> None:
    """docs/tournament.md's bots file, its `mine` being docs/bots.md's bot as my_bot.py
    (a run_bot() program: as `serve:` it exited at once and stopped the tournament)."""
    (tmp_path / "bots.toml").write_text(docs_bots_file())
    (tmp_path / "my_bot.py").write_text(docs_example_bot())
    out = tmp_path / "t"
    short = ["--games", "2", "--target", "11", "--seed", "3", "--out", str(out)]
    res = subprocess.run(
        [*CIRULLA, "--bots-file", "bots.toml", "--bot", "mine", "--bot", "greedy", *short],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    games = json.loads((out / "results.json").read_text())["games"]
    assert [g["seat_outcomes"] for g in games] == [["ok", "ok"], ["ok", "ok"]]

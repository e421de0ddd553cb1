"""A bot that burns every core is throttled to its CPU quota by its control group, and
the game says so (issue 37: the chaos test's CPU burner was stopped by nothing and named
nowhere): ``throttled: cpu limit 1 core`` in the game's notes, from the group's cpu.stat
and what its threads wanted (on a machine as busy as this one the others' share holds it
below its quota before the kernel's throttling does), while its opponent, within its
quota, gets no such note."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HOSTILE = Path(__file__).parents[1] / "programs" / "hostile.py"


@pytest.mark.slow
def test_a_cpu_burner_is_throttled_at_its_quota_and_named(tmp_path: Path) -> None:
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--sandbox", "--games", "1"]
    argv += ["--bot", f"burner=cmd:{{python}} {HOSTILE} burn", "--bot", "random"]
    # the default quota, one core: its four spinners want four
    argv += ["--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    notes = [note for game in games for note in game["notes"]]
    throttled = [n for n in notes if "throttled: cpu limit" in n]
    # every game of the burner's (a duplicate pair: two), never its opponent's
    assert len(throttled) == len(games) == 2, notes
    assert all("(burner) throttled: cpu limit 1 core (" in n for n in throttled), notes
    # if its slowed moves overran its clock, the forfeit names the clock
    for note in notes:
        if "(burner) forfeited: timeout" in note:
            assert "(move clock 10 s)" in note, notes

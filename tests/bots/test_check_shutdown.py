"""Issue 25 item 4: ``cirulla bot check`` shuts down cleanly (it printed grpc's "Event
loop is closed" tracebacks after PASS: every seat ran its own event loop in a thread) and
groups repeated violations: an engine that gives the same illegal answer at every
decision gets one entry with its count (a times sign and N), not one per decision."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).parents[1] / "programs" / "counting_engine.py"
CHECK = [sys.executable, "-m", "cirulla", "bot", "check"]


def test_a_passing_check_prints_no_traceback() -> None:
    done = subprocess.run(
        [*CHECK, f"text:{sys.executable} {ENGINE}"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("PASS: 4 games")
    for noise in ("Traceback", "Event loop is closed", "Bad file descriptor", "ERROR:"):
        assert noise not in done.stderr, done.stderr


def test_the_same_illegal_answer_many_times_is_one_entry_with_its_count() -> None:
    done = subprocess.run(
        [*CHECK, "--games=2", f"text:{sys.executable} {ENGINE} --garbage"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    entries = [line for line in out.splitlines() if line.startswith("violation ")]
    assert len(entries) == 1, out
    found = re.fullmatch(r"violation 1: genmove: 'pass' is neither .* \u00d7(\d+)", entries[0])
    assert found is not None, entries
    last = out.strip().splitlines()[-1]
    total = re.search(r"(\d+) protocol violations \(1 distinct\)", last)
    assert total is not None, last
    assert int(found.group(1)) == int(total.group(1)) > 10  # every decision, counted once
    assert out.count(">> ") < 40  # one exchange shown, not one per violation

"""mypy --strict on the project's own code (pyproject.toml's ``[tool.mypy]``), run as one
test so that the README's test command checks types while the other tests run: alone
before pytest it kept both processors of a 2-core machine waiting on one for about 25 s
of a fresh clone's run. Its output is the failure message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_project_type_checks_under_mypy_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout

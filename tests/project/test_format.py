"""The tree is as ``ruff format`` writes it (pyproject.toml's ``[tool.ruff]``): the README's
test command runs ``ruff check``, which says nothing of layout, so an unformatted file
could land and every later formatting run would rewrite it inside someone else's diff."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_tree_is_ruff_formatted() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]

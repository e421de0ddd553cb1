"""Issue 25 item 5: output that is piped or logged keeps whole values. rich lays a console
that is not a terminal out at 80 columns, which cut the head-to-head header
(``Ptnml(0…``) and long paths and ids; every command's console now comes from
``cirulla.console.output_console``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from cirulla.rules.options import OPTION_HELP


def test_a_piped_tournament_prints_whole_headers_paths_and_lines(tmp_path: Path) -> None:
    out = tmp_path / ("a-rather-long-folder-name-for-the-output-of-this-tournament" * 2)
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out)]
    argv += ["--bot", "random", "--bot", "greedy", "--games", "2", "--target", "11"]
    argv += ["--seed", "1", "--bot-seed", "1"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    printed = done.stdout
    for header in ("Ptnml(0-2)", "Elo pairs (95%)", "Elo ±95%", "pts/deal"):
        assert header in printed, printed
    assert "random vs greedy" in printed  # the pairing is one cell, not cut over lines
    # every path whole on one line: the results file and the resume hint
    assert f"Results: {out / 'results.json'};" in printed
    assert re.search(
        r"^Tournament random=random, greedy=greedy: .* output in " + re.escape(str(out)) + "$",
        printed,
        re.M,
    )


def test_piped_rule_options_keep_each_meaning_on_its_line() -> None:
    argv = [sys.executable, "-m", "cirulla", "rules", "options"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    for name, meaning in OPTION_HELP.items():
        rows = [line for line in done.stdout.splitlines() if f" {name} " in line]
        assert rows and meaning in rows[0], (name, done.stdout)


def test_every_console_comes_from_the_one_helper() -> None:
    """rich's ``Console(`` is made in cirulla.console only, so piped output is alike in
    every command (a new command printing tables gets whole values too)."""
    root = Path(__file__).resolve().parents[2]
    found = [
        f"{path.relative_to(root)}:{n}"
        for area in ("src", "rules", "server", "bots", "clients", "ladder", "env")
        for path in sorted((root / area).rglob("*.py"))
        if path != root / "src" / "cirulla" / "console.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bConsole\(", line)
    ]
    assert found == [], found

"""Issue 25 item 9: the docs' paths are where a real run puts its files. The output
folder table of docs/tournament.md and the README's records path are read from the docs
and looked for after a real ``cirulla tournament`` with its default output folder; and
``cirulla bench rules`` reports the three loops the docs describe."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def output_table() -> list[str]:
    """The first column of docs/tournament.md's "Output folder" table."""
    text = (ROOT / "docs" / "tournament.md").read_text()
    section = text[text.index("### Output folder") :]
    section = section[: section.index("\n## ")]
    paths: list[str] = []
    for line in section.splitlines():
        found = re.match(r"\| (`[^|]+`) \|", line)
        if found and found.group(1) != "`path`":
            paths += re.findall(r"`([^`]+)`", found.group(1))
    return paths


def as_glob(path: str) -> str:
    return re.sub(r"<[^>]+>", "*", path)


def test_the_documented_paths_exist_after_a_real_tournament(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "cirulla", "tournament", "--games", "2", "--target", "11"]
    argv += ["--bot", "greedy", "--bot", "once=cmd:{python} -m cirulla bot random"]
    argv += ["--seed", "8", "--bot-seed", "8"]
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (out,) = (tmp_path / "tournament-out").iterdir()  # the default: tournament-out/<date-time>
    assert re.fullmatch(r"\d{8}-\d{6}", out.name), out
    assert f"output in tournament-out/{out.name}" in done.stdout
    paths = output_table()
    assert "records/<match_id>.json" in paths and "logs/server.log" in paths, paths
    for path in paths:
        assert list(out.glob(as_glob(path))), f"docs/tournament.md names {path}: not in {out}"
    # the README's records path, from the folder the run was started in
    readme = (ROOT / "README.md").read_text()
    records = re.search(r"`(tournament-out/<date-time>/records/<match_id>\.json)`", readme)
    assert records is not None
    assert len(list(tmp_path.glob(as_glob(records.group(1))))) == 2
    games = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    for game in games:
        assert (out / "records" / f"{game['match_id']}.txt").exists()


def test_bench_rules_reports_the_c_loop_and_what_a_python_user_sees() -> None:
    argv = [sys.executable, "-m", "cirulla", "bench", "rules", "--seconds", "0.2"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(done.stdout)
    assert set(report["cores"]) <= {"native", "python"} and "python" in report["cores"]
    assert "Game.legal_actions()" in report["api"]["loop"]
    assert report["user_sees_deals_per_cpu_s"] == report["api"]["deals_per_cpu_s"] > 0
    if "native" in report["cores"]:
        assert "in C" in report["cores"]["native"]["loop"]
        assert report["native_loop_over_api"] > 0
    # the keys the docs name
    rules_doc = (ROOT / "docs" / "rules.md").read_text()
    for key in ("cores.native", "cores.python", "user_sees_deals_per_cpu_s"):
        assert key in rules_doc

"""Real engines people write play under the sandbox's default limits: a JVM engine (it
reserves a quarter of the machine's memory for its heap at start, and failed with
"Could not allocate compressed class space" under a 2 GiB address-space limit) and a
Node engine, each a `text:` bot of a sandboxed tournament against greedy."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "program", "engine"),
    [
        ("java", "java", "TextEngine.java"),  # .ci/setup.d/35-java.sh installs the JDK
        ("node", "node", "text_engine.js"),  # .ci/setup.d/30-engines.sh installs Node
    ],
)
def test_a_real_engine_plays_sandboxed_under_the_default_limits(
    name: str, program: str, engine: str, tmp_path: Path
) -> None:
    runtime = shutil.which(program)
    assert runtime, f"{program} is needed (.ci/setup.d)"
    out = tmp_path / "t"
    spec = f"{name}=text:{runtime} {EXAMPLES / engine}"
    if program == "java":
        # compiled ahead, as a Java bot ships: the source launcher compiles at every start
        classes = tmp_path / "classes"
        javac = shutil.which("javac")
        assert javac, "javac is needed (.ci/setup.d/35-java.sh)"
        subprocess.run([javac, "-d", str(classes), str(EXAMPLES / engine)], check=True, timeout=300)
        spec = f"{name}=text:{runtime} -cp {classes} TextEngine"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cirulla",
            "tournament",
            "--sandbox",
            "--bot",
            spec,
            "--bot",
            "greedy",
            "--games",
            "2",
            "--target",
            "11",
            "--seed",
            "5",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "per-bot limits: control groups v" in done.stdout, done.stdout
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2
    assert all(set(g["seat_outcomes"]) == {"ok"} for g in games), games
    logs = "\n".join(p.read_text(errors="replace") for p in (out / "logs").glob("*.log"))
    said = {"java": "java-example", "node": "js-example"}[name]
    assert f"engine {said}" in logs, logs[-3000:]

"""The worked example of docs/env.md, run as documented at a tiny scale: train against
random, save ``agent.npz``, measure it with ``cirulla bench strength``, then enter it in a
real ``cirulla tournament`` (a local server, the policy bot as a process of its own) with
``--bot mine='policy:model=agent.npz'``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from cirulla.bots.policy_bot import load_mlp, mlp_logits
from cirulla.env.example import input_scale
from cirulla.rules.encoding import NUM_ACTIONS, OBS_FIELDS, OBS_SIZE

PYTHON = sys.executable
CIRULLA = [PYTHON, "-m", "cirulla"]
TINY = ["--envs", "16", "--batch-deals", "16"]  # a few dozen deals
FEW = ["--games", "4", "--target", "11", "--json"]
TWO = ["--games", "2", "--target", "11", "--seed", "3", "--out", "out", "--concurrency", "1"]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "env.md"


def run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_the_docs_show_the_commands_this_test_runs() -> None:
    text = DOCS.read_text()
    assert "python -m cirulla.env.example --deals 15000 --out agent.npz" in text
    assert "cirulla bench strength --a policy:model=agent.npz --b random" in text
    assert "--bot mine='policy:model=agent.npz'" in text


def test_the_worked_example_trains_saves_and_plays_a_tournament(tmp_path: Path) -> None:
    trained = run(
        [PYTHON, "-m", "cirulla.env.example", "--deals", "32", "--out", "agent.npz", *TINY],
        tmp_path,
    )
    assert trained.returncode == 0, trained.stderr
    summary = json.loads(trained.stdout.strip().splitlines()[-1])
    assert summary["deals"] >= 16 and summary["updates"] >= 1, summary
    assert summary["saved"] == "agent.npz"
    layers = load_mlp(tmp_path / "agent.npz")
    assert layers[0][0].shape[0] == OBS_SIZE and layers[-1][0].shape[1] == NUM_ACTIONS
    # the game-level fields are folded out of the saved first layer: their weights are zero
    for name in ("totals", "deal"):
        at, length = OBS_FIELDS[name]
        assert not layers[0][0][at : at + length].any()
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    assert np.isfinite(mlp_logits(layers, obs)).all()
    assert input_scale().shape == (OBS_SIZE,)

    bench = run(
        [*CIRULLA, "bench", "strength", "--a", "policy:model=agent.npz", "--b", "random", *FEW],
        tmp_path,
    )
    assert bench.returncode == 0, bench.stdout + bench.stderr
    strength = json.loads(bench.stdout)
    assert strength["games"] == 4 and strength["a_wins"] + strength["b_wins"] == 4

    tournament = run(
        [
            *CIRULLA,
            "tournament",
            "--bot",
            "mine=policy:model=agent.npz",
            "--bot",
            "random=random",
            *TWO,
        ],
        tmp_path,
        timeout=180,
    )
    assert tournament.returncode == 0, tournament.stdout + tournament.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    games = results["games"]
    assert len(games) == 2
    for game in games:
        seats = game["seats"]
        assert sorted(seats) == ["mine", "random"]
        assert game["winner"] is not None, game
        mine = seats.index("mine")
        assert game["seat_outcomes"][mine] == "ok", game
        assert game["deals"] > 0 and not game["unjoined"], game
    assert re.search(r"\bmine\b", tournament.stdout)


def test_a_budget_in_deals_gives_the_same_model_whatever_the_load(tmp_path: Path) -> None:
    outs = []
    for name in ("a.npz", "b.npz"):
        done = run(
            [PYTHON, "-m", "cirulla.env.example", "--deals", "40", "--out", name, *TINY], tmp_path
        )
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert 40 <= summary["deals"] < 40 + 16 and summary["updates"] >= 2
        outs.append(load_mlp(tmp_path / name))
    for (w1, b1), (w2, b2) in zip(outs[0], outs[1], strict=True):
        assert np.array_equal(w1, w2) and np.array_equal(b1, b2)
    bad = run([PYTHON, "-m", "cirulla.env.example", "--deals", "0"], tmp_path)
    assert bad.returncode == 2 and "must be positive" in bad.stderr

"""The learning examples with the frameworks researchers use, run at a tiny scale in the side
environment that .ci/setup.d/40-rl.sh builds (a CPU PyTorch, Stable-Baselines3, sb3-contrib,
the ONNX exporter): SB3's ``make_vec_env("Cirulla-v0")`` with its defaults, the MaskablePPO and
the CleanRL-style PPO examples to their closing ``bench strength`` and tournament, and the
documented ONNX export as one file.

``CIRULLA_RL_PYTHON`` names that environment's interpreter. CI sets it, and then every test
here must pass; on a machine without it they say how to get it (``source
.ci/setup.d/40-rl.sh`` from the checkout, which takes a few minutes and about 1 GB).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cirulla.bots.policy_bot import load_array_policy
from cirulla.rules.encoding import OBS_SIZE
from tests.rl_python import HOW, RL_PYTHON, needs_rl, rl_python

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "rl"
DOCS = ROOT / "docs" / "env.md"


def run_rl(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``args`` run by the side environment's interpreter, PyTorch on one thread (its
    documented ``OMP_NUM_THREADS``, unless set): on a busy machine (CI runs two tests a
    processor) torch's default pool of one thread a core spins waiting for threads that
    are not running; the same 256 MaskablePPO steps took 6.3 CPU-s beside two busy
    processes, 0.4 on one thread. The networks here are too small to gain from more."""
    python = rl_python()
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    done = subprocess.run(
        [python, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done


@needs_rl
def test_sb3_make_vec_env_with_its_defaults(tmp_path: Path) -> None:
    script = (
        "import json, numpy as np\n"
        "import cirulla.env\n"
        "from stable_baselines3.common.env_util import make_vec_env\n"
        "venv = make_vec_env('Cirulla-v0', n_envs=2)\n"
        "obs = venv.reset()\n"
        "masks = obs['action_mask']\n"
        "first = np.array([int(np.flatnonzero(m)[0]) for m in masks])\n"
        "obs, rewards, dones, infos = venv.step(first)\n"
        "image = venv.render()\n"
        "print(json.dumps({'mode': venv.render_mode, 'shape': list(image.shape),"
        " 'obs': list(obs['observation'].shape)}))\n"
    )
    out = json.loads(run_rl(["-c", script], tmp_path).stdout.strip().splitlines()[-1])
    assert out["mode"] == "rgb_array" and out["obs"] == [2, OBS_SIZE]
    assert len(out["shape"]) == 3 and out["shape"][-1] == 3


def _check_agent(tmp_path: Path, summary: dict[str, object]) -> None:
    assert summary["timesteps"] and Path(tmp_path / "agent.npz").is_file()
    for opponent in ("vs_random", "vs_greedy"):
        figures = summary[opponent]
        assert isinstance(figures, dict) and figures["games"] == 2
    standings = summary["tournament"]
    assert isinstance(standings, list)
    assert {row["bot"] for row in standings} == {"mine", "random", "greedy"}
    assert all(row["games"] > 0 for row in standings)


@pytest.mark.slow
@needs_rl
def test_maskable_ppo_example_trains_exports_and_plays(tmp_path: Path) -> None:
    # 32 timesteps on 2 envs: one rollout of 16 steps a game (the example's least) and one
    # PPO update of its 10 epochs on them, a trained policy as surely as 256 steps made one
    done = run_rl(
        [str(EXAMPLES / "maskable_ppo.py"), "--timesteps", "32", "--n-envs", "2",
         "--games", "2", "--tournament-games", "2", "--onnx", "agent.onnx"],
        tmp_path,
    )  # fmt: skip
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["library"] == "sb3-contrib MaskablePPO"
    _check_agent(tmp_path, summary)
    # the documented export is one file: nothing beside it for a sandbox to miss
    assert (tmp_path / "agent.onnx").is_file()
    assert sorted(p.name for p in tmp_path.glob("agent.onnx*")) == ["agent.onnx"]
    onnx = load_array_policy(str(tmp_path / "agent.onnx"))
    npz = load_array_policy(str(tmp_path / "agent.npz"))
    rng = np.random.default_rng(1)
    for _ in range(5):
        obs = rng.integers(0, 2, OBS_SIZE).astype(np.float32)
        mask = (rng.random(2304) < 0.05).astype(np.int8)
        mask[0] = 1
        assert onnx(obs, mask) == npz(obs, mask)


@pytest.mark.slow
@needs_rl
def test_cleanrl_style_ppo_example_trains_and_plays(tmp_path: Path) -> None:
    done = run_rl(
        [str(EXAMPLES / "cleanrl_ppo.py"), "--total-timesteps", "64", "--num-envs", "2",
         "--num-steps", "32", "--games", "2", "--tournament-games", "2"],
        tmp_path,
    )  # fmt: skip
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["library"] == "CleanRL-style PPO (PyTorch)"
    _check_agent(tmp_path, summary)


def test_the_docs_show_the_examples_and_a_single_file_onnx_export() -> None:
    text = DOCS.read_text()
    assert "python examples/rl/maskable_ppo.py" in text
    assert "python examples/rl/cleanrl_ppo.py" in text
    assert "external_data=False" in text and "onnxscript" in text
    if RL_PYTHON is None:
        print(HOW)

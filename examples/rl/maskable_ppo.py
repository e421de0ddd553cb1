"""sb3-contrib's MaskablePPO on ``Cirulla-v0``, then the trained agent measured and entered in
a tournament (docs/env.md, "Stable-Baselines3 / sb3-contrib").

    python examples/rl/maskable_ppo.py --timesteps 200000 --out agent.npz

Needs PyTorch, stable-baselines3 and sb3-contrib beside cirulla[env] (a CPU build of PyTorch is
enough: ``pip install torch==2.13.0 sb3-contrib`` where that release is at hand). The learner
plays seat 0 of 2-player games against random opponents, with ``reward="points"`` (each deal's
point difference: a signal every deal, not one per game); the action mask reaches MaskablePPO
through the environment's ``action_masks()``. The policy is SB3's default MLP (two hidden
layers of 64, tanh) over the scaled observation; it is saved as ``agent.npz`` (and with
``--onnx`` as a single-file ONNX model), then ``cirulla bench strength`` against random and
greedy and a tournament run on it. Prints one JSON summary.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import measure, save_tanh_mlp

import cirulla.env  # noqa: F401  (registers Cirulla-v0)
from cirulla.env.example import input_scale


class ScaledObservation(gymnasium.ObservationWrapper):  # type: ignore[type-arg]
    """The ``observation`` vector alone, scaled to about 0..1; the mask stays reachable
    through ``action_masks()``, which MaskablePPO calls."""

    def __init__(self, env: gymnasium.Env) -> None:  # type: ignore[type-arg]
        super().__init__(env)
        self.scale = input_scale()
        self.observation_space = gymnasium.spaces.Box(0.0, 1e6, self.scale.shape, np.float32)

    def observation(self, observation: dict[str, Any]) -> Any:
        return observation["observation"] * self.scale

    def action_masks(self) -> Any:
        return self.env.unwrapped.action_masks()


def make_env(seed: int) -> Any:
    env = gymnasium.make("Cirulla-v0", players=2, opponents="random", reward="points")
    env.reset(seed=seed)
    return ScaledObservation(env)


def export_onnx(policy: Any, path: str) -> str:
    """The documented export: one file (``external_data=False``), logits of the raw
    observation (the scale folded in front of SB3's network)."""
    import torch

    scale = torch.as_tensor(input_scale())

    class Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.policy = policy

        def forward(self, obs: Any) -> Any:
            latent, _ = self.policy.mlp_extractor(self.policy.extract_features(obs * scale))
            return self.policy.action_net(latent)

    torch.onnx.export(
        Logits(),
        (torch.zeros(1, 451),),
        path,
        input_names=["obs"],
        output_names=["logits"],
        dynamic_axes={"obs": {0: "batch"}, "logits": {0: "batch"}},
        external_data=False,
    )
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timesteps", type=int, default=200_000, help="learner steps")
    parser.add_argument("--n-envs", type=int, default=8, help="games stepped together (8)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="agent.npz")
    parser.add_argument("--onnx", help="also export a single-file ONNX model here")
    parser.add_argument("--games", type=int, default=400, help="bench strength games (400)")
    parser.add_argument("--tournament-games", type=int, default=40, help="(40; 0: none)")
    args = parser.parse_args(argv)

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(lambda: make_env(args.seed), n_envs=args.n_envs, seed=args.seed)
    n_steps = max(16, min(512, args.timesteps // args.n_envs))
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=n_steps, batch_size=min(256, n_steps * args.n_envs),
        seed=args.seed, device="cpu", verbose=0,
    )  # fmt: skip
    start = time.process_time()
    model.learn(total_timesteps=args.timesteps)
    spent = time.process_time() - start
    policy = model.policy
    linears = [policy.mlp_extractor.policy_net[0], policy.mlp_extractor.policy_net[2]]
    saved = save_tanh_mlp(args.out, [*linears, policy.action_net])
    summary: dict[str, Any] = {
        "library": "sb3-contrib MaskablePPO",
        "timesteps": model.num_timesteps,
        "train_cpu_seconds": round(spent, 1),
        "saved": str(saved),
    }
    if args.onnx:
        summary["onnx"] = export_onnx(policy, args.onnx)
    summary.update(measure(str(saved), args.games, args.tournament_games, Path("rl-tournament")))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Shared by the learning examples (examples/rl/*.py): the observation scaling, the export of a
tanh MLP to the ``.npz`` the ``policy:`` bot kind plays, and the closing measurements
(``cirulla bench strength`` and a ``cirulla tournament``, run as the documented commands).

Both examples train a tanh MLP (451 -> 64 -> 64 -> 2304 logits) over the observation scaled to
about 0..1 (``cirulla.env.example.input_scale``); the scale is folded into the first layer
when saving, so ``agent.npz`` is a plain MLP over the raw observation. No PyTorch is needed to
play it: the match server's bot reads it with NumPy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from cirulla.bots.policy_bot import load_mlp, mlp_logits, save_mlp
from cirulla.env.example import input_scale


def save_tanh_mlp(path: str | Path, linears: list[Any]) -> Path:
    """Save torch ``Linear`` layers (tanh between them) as ``.npz``, the input scale folded
    into the first, and check that NumPy's forward pass gives torch's logits."""
    import torch

    scale = input_scale()
    layers = []
    for k, linear in enumerate(linears):
        w = linear.weight.detach().cpu().numpy().T.astype(np.float32)  # (inputs, outputs)
        b = linear.bias.detach().cpu().numpy().astype(np.float32)
        if k == 0:
            w = w * scale[:, None]
        layers.append((w, b))
    saved = save_mlp(path, layers)
    probe = np.random.default_rng(0).integers(0, 3, (4, scale.shape[0])).astype(np.float32)
    with torch.no_grad():
        x = torch.as_tensor(probe * scale)
        for k, linear in enumerate(linears):
            x = linear(x)
            if k < len(linears) - 1:
                x = torch.tanh(x)
    got = mlp_logits(load_mlp(saved), probe)
    if not np.allclose(got, x.numpy(), atol=1e-3):
        raise RuntimeError(f"{saved}: the saved MLP does not give the trained network's logits")
    return saved


def measure(model: str, games: int, tournament_games: int, out: Path) -> dict[str, Any]:
    """``cirulla bench strength`` against random and greedy, then a small tournament with
    random and greedy: the commands docs/env.md shows, run by this interpreter."""
    cirulla = [sys.executable, "-m", "cirulla"]
    spec = f"policy:model={model}"
    figures: dict[str, Any] = {}
    for opponent in ("random", "greedy"):
        done = subprocess.run(
            [*cirulla, "bench", "strength", "--a", spec, "--b", opponent, "--games", str(games),
             "--json"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        result = json.loads(done.stdout)
        keep = ("games", "a_wins", "a_win_rate", "a_win_rate_ci95", "a_mean_point_diff_per_deal")
        figures[f"vs_{opponent}"] = {k: result[k] for k in keep}
    if tournament_games > 0:
        done = subprocess.run(
            [*cirulla, "tournament", "--bot", f"mine={spec}", "--bot", "random", "--bot",
             "greedy", "--games", str(tournament_games), "--out", str(out), "--concurrency", "1"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        standings = json.loads((out / "results.json").read_text())["standings"]
        figures["tournament"] = [
            {k: row[k] for k in ("bot", "games", "wins", "losses", "win_rate", "points_per_deal")}
            for row in standings["bots"]
        ]
    return figures

"""A CleanRL-style PPO in one file (CleanRL's ppo.py: a Gymnasium vector env, GAE, the clipped
objective), with invalid actions masked out of the logits, on ``Cirulla-v0``; then the trained
agent measured and entered in a tournament (docs/env.md, "CleanRL-style PPO").

    python examples/rl/cleanrl_ppo.py --total-timesteps 200000 --out agent.npz

Needs PyTorch beside cirulla[env] (a CPU build is enough). The learner plays seat 0 of 2-player
games against random opponents with ``reward="points"`` (each deal's point difference). The
actor is a tanh MLP (451 -> 64 -> 64 -> 2304 logits) over the scaled observation, the critic
one of the same shape with one output; the actor is saved as ``agent.npz`` for the
``policy:`` bot kind, then ``cirulla bench strength`` against random and greedy and a
tournament run on it. Prints one JSON summary.
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
import torch
from torch import nn
from torch.distributions.categorical import Categorical

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import measure, save_tanh_mlp

import cirulla.env  # noqa: F401  (registers Cirulla-v0)
from cirulla.env.encoding import NUM_ACTIONS, OBS_SIZE
from cirulla.env.example import input_scale


def layer(inputs: int, outputs: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    linear = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


class Agent(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            layer(OBS_SIZE, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, 1.0)
        )
        self.actor = nn.Sequential(
            layer(OBS_SIZE, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, NUM_ACTIONS, 0.01)
        )

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def act(
        self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        logits = torch.where(mask, self.actor(x), torch.tensor(-1e8))
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--total-timesteps", type=int, default=200_000)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-steps", type=int, default=128, help="steps per env per rollout")
    parser.add_argument("--learning-rate", type=float, default=2.5e-4)
    parser.add_argument("--update-epochs", type=int, default=4)
    parser.add_argument("--num-minibatches", type=int, default=4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--clip-coef", type=float, default=0.2)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--vf-coef", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="agent.npz")
    parser.add_argument("--games", type=int, default=400, help="bench strength games (400)")
    parser.add_argument("--tournament-games", type=int, default=40, help="(40; 0: none)")
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    envs = gymnasium.vector.SyncVectorEnv(
        [
            lambda: gymnasium.make("Cirulla-v0", opponents="random", reward="points")
            for _ in range(args.num_envs)
        ]
    )
    scale = torch.as_tensor(input_scale())
    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    n, t = args.num_envs, args.num_steps
    obs = torch.zeros((t, n, OBS_SIZE))
    masks = torch.zeros((t, n, NUM_ACTIONS), dtype=torch.bool)
    actions = torch.zeros((t, n), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((t, n)) for _ in range(4))
    batch = n * t
    minibatch = batch // args.num_minibatches
    updates = max(1, args.total_timesteps // batch)

    def read(o: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        return (
            torch.as_tensor(o["observation"]) * scale,
            torch.as_tensor(o["action_mask"]).bool(),
        )

    raw, _ = envs.reset(seed=args.seed)
    next_obs, next_mask = read(raw)
    next_done = torch.zeros(n)
    deal_points: list[float] = []
    start = time.process_time()
    for _update in range(updates):
        for step in range(t):
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.act(next_obs, next_mask)
            values[step] = value.flatten()
            actions[step], logprobs[step] = action, logprob
            raw, reward, term, trunc, _info = envs.step(action.numpy())
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            deal_points.extend(float(r) for r in reward if r != 0.0)
            next_obs, next_mask = read(raw)
            next_done = torch.as_tensor(np.logical_or(term, trunc), dtype=torch.float32)
            # Gymnasium's autoreset (next step): a finished game's reset step has no mask yet
            next_mask[~next_mask.any(dim=1)] = True
        with torch.no_grad():
            next_value = agent.value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(n)
            for step in reversed(range(t)):
                following = next_value if step == t - 1 else values[step + 1]
                alive = 1.0 - (next_done if step == t - 1 else dones[step + 1])
                delta = rewards[step] + args.gamma * following * alive - values[step]
                last = delta + args.gamma * args.gae_lambda * alive * last
                advantages[step] = last
            returns = advantages + values
        b_obs, b_masks = obs.reshape(batch, OBS_SIZE), masks.reshape(batch, NUM_ACTIONS)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_adv, b_returns = advantages.reshape(-1), returns.reshape(-1)
        for _epoch in range(args.update_epochs):
            order = torch.randperm(batch)
            for at in range(0, batch, minibatch):
                idx = order[at : at + minibatch]
                _, newlog, entropy, newvalue = agent.act(b_obs[idx], b_masks[idx], b_actions[idx])
                ratio = (newlog - b_logprobs[idx]).exp()
                adv = b_adv[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(
                    -adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                ).mean()
                v_loss = 0.5 * ((newvalue.flatten() - b_returns[idx]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
    spent = time.process_time() - start
    tenth = max(1, len(deal_points) // 10)
    saved = save_tanh_mlp(args.out, [agent.actor[0], agent.actor[2], agent.actor[4]])
    summary: dict[str, Any] = {
        "library": "CleanRL-style PPO (PyTorch)",
        "timesteps": updates * batch,
        "train_cpu_seconds": round(spent, 1),
        "deals_trained": len(deal_points),
        "first_tenth_points_per_deal": round(float(np.mean(deal_points[:tenth])), 3)
        if deal_points
        else None,
        "last_tenth_points_per_deal": round(float(np.mean(deal_points[-tenth:])), 3)
        if deal_points
        else None,
        "saved": str(saved),
    }
    summary.update(measure(str(saved), args.games, args.tournament_games, Path("rl-tournament")))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Worked example: train a small agent against random with NumPy only, save it as ``.npz``.

``python -m cirulla.env.example --deals 15000 --out agent.npz`` (or ``--minutes 3``) runs
REINFORCE (policy
gradient, Adam) on a one-hidden-layer MLP over the documented observation, in a batch of
games stepped by ``VectorEnv``: the learner holds seat 0, the batch's own uniformly random
policy moves seat 1. The learning signal is each deal's point difference (my side's deal
points minus the other's, read from the observation's ``totals`` when the next deal starts):
a game to 51 is decided by a handful of deals, so rewarding deals rather than games gives
every decision of a deal its own outcome. Training games run to a far target (1000) so that
almost every deal is followed by another; a deal that ends a game leaves no observation to
read its points from and is dropped.

The inputs are scaled to about 0..1 and the game-level fields (``totals``, ``deal``, the
target) are left out, so what is learned is how to play a deal, whatever the target; the
scaling is folded into the first layer when saving, so the saved file is a plain MLP over the
raw observation: what ``policy:model=agent.npz`` plays (``cirulla.bots.policy_bot``) in
``cirulla bench strength``, tournaments and the ladder. docs/env.md walks through it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cirulla.bots.policy_bot import save_mlp
from cirulla.env.vector import VectorEnv, make_options
from cirulla.rules.encoding import NUM_ACTIONS, OBS_FIELDS, OBS_SIZE

Array = npt.NDArray[np.float32]
Mask = npt.NDArray[np.uint8]
#: One deal of the learner's: its decisions (input, mask, index) and its point difference.
Trail = list[tuple[Array, Mask, int]]

#: The training games' target: far, so that nearly every deal has a next one to score it.
TRAIN_TARGET = 1000
_TOTALS = OBS_FIELDS["totals"][0]
_DEAL = OBS_FIELDS["deal"][0]


def input_scale() -> Array:
    """Per observation entry, the factor that brings it to about 0..1 (0: left out)."""
    scale = np.ones(OBS_SIZE, dtype=np.float32)

    def put(name: str, value: float, first: int = 0, count: int | None = None) -> None:
        at, length = OBS_FIELDS[name]
        scale[at + first : at + (length if count is None else first + count)] = value

    put("hand_sizes", 1 / 3)
    put("scope", 1 / 5)
    put("totals", 0.0)
    put("stock", 1 / 30)
    put("round", 1 / 6)
    put("deal", 0.0)
    put("rules", 0.0, first=6, count=1)  # the target
    put("piccola_max", 1 / 10)
    return scale


class Mlp:
    """observation -> tanh hidden layer -> logits over the fixed action indices."""

    def __init__(self, hidden: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.w0 = (rng.standard_normal((OBS_SIZE, hidden)) / np.sqrt(OBS_SIZE / 8)).astype(
            np.float32
        )
        self.b0 = np.zeros(hidden, dtype=np.float32)
        self.w1 = (rng.standard_normal((hidden, NUM_ACTIONS)) * 0.01).astype(np.float32)
        self.b1 = np.zeros(NUM_ACTIONS, dtype=np.float32)

    def params(self) -> list[Array]:
        return [self.w0, self.b0, self.w1, self.b1]

    def forward(self, x: Array) -> tuple[Array, Array]:
        h = np.tanh(x @ self.w0 + self.b0)
        return h, h @ self.w1 + self.b1

    def layers(self, scale: Array) -> list[tuple[Array, Array]]:
        """The layers over the raw observation: ``scale`` folded into the first."""
        return [(scale[:, None] * self.w0, self.b0), (self.w1, self.b1)]


class Adam:
    """Adam on a list of arrays (gradient ascent: ``step`` adds)."""

    def __init__(self, params: list[Array], lr: float) -> None:
        self.params, self.lr, self.t = params, lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, grads: list[Array]) -> None:
        self.t += 1
        b1, b2 = 0.9, 0.999
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            mhat = m / (1 - b1**self.t)
            vhat = v / (1 - b2**self.t)
            p += (self.lr * mhat / (np.sqrt(vhat) + 1e-8)).astype(np.float32)


def masked_softmax(logits: Array, masks: Mask) -> Array:
    z = np.where(masks.astype(bool), logits, -np.inf)
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    probabilities: Array = p / p.sum(axis=1, keepdims=True)
    return probabilities


def policy_gradient(model: Mlp, x: Array, masks: Mask, acts: Any, adv: Array) -> list[Array]:
    """d/dparams of mean(adv * log pi(act | x)), for ``Mlp.params`` order."""
    h, logits = model.forward(x)
    grad_logits = -masked_softmax(logits, masks)
    grad_logits[np.arange(len(acts)), acts] += 1.0
    grad_logits *= adv[:, None] / len(acts)
    gh = (grad_logits @ model.w1.T) * (1.0 - h * h)
    return [x.T @ gh, gh.sum(axis=0), h.T @ grad_logits, grad_logits.sum(axis=0)]


def train(
    *,
    seconds: float = float("inf"),
    deals: int | None = None,
    hidden: int = 64,
    envs: int = 64,
    lr: float = 0.003,
    batch_deals: int = 256,
    seed: int = 0,
) -> tuple[Mlp, dict[str, Any]]:
    """Train for ``deals`` training deals (a budget that does not depend on the machine's
    load: the same seed gives the same model) or for ``seconds``, whichever ends first;
    returns the model and a summary (deals, mean point difference per deal against random in
    the first and the last tenth of training)."""
    if deals is None and seconds == float("inf"):
        raise ValueError("train: give deals or seconds")
    venv = VectorEnv(
        envs,
        make_options(2, target=TRAIN_TARGET),
        seeds=range(seed, seed + envs),
        policy_seed=seed,
    )
    scale = input_scale()
    model = Mlp(hidden, seed)
    adam = Adam(model.params(), lr)
    rng = np.random.default_rng(seed + 1)
    trails: list[Trail] = [[] for _ in range(envs)]
    deal_of = np.full(envs, -1.0, dtype=np.float32)  # the deal each trail belongs to
    diff_at = np.zeros(envs, dtype=np.float32)  # my total minus theirs when it started
    batch: list[tuple[Trail, float]] = []
    results: list[float] = []
    updates = 0
    start = time.monotonic()
    while time.monotonic() - start < seconds and (deals is None or len(results) < deals):
        actions = venv.random_actions().copy()
        mine = np.flatnonzero(venv.to_move == 0)
        if mine.size:
            raw = venv.obs[mine]
            x = raw * scale
            masks = venv.masks[mine].copy()
            for k, i in enumerate(mine):
                deal, diff = raw[k, _DEAL], raw[k, _TOTALS] - raw[k, _TOTALS + 1]
                if deal != deal_of[i]:  # a new deal: the last one's points are known
                    if trails[i] and deal > deal_of[i]:
                        points = float(diff - diff_at[i])
                        batch.append((trails[i], points))
                        results.append(points)
                    trails[i] = []
                    deal_of[i], diff_at[i] = deal, diff
            _, logits = model.forward(x)
            # A sample of the masked softmax in one pass (the Gumbel-max trick).
            gumbel = -np.log(-np.log(rng.random(logits.shape, dtype=np.float32) + 1e-20) + 1e-20)
            picks = np.argmax(np.where(masks.astype(bool), logits + gumbel, -np.inf), axis=1)
            actions[mine] = picks
            for k, i in enumerate(mine):
                trails[i].append((x[k], masks[k], int(picks[k])))
        _, _, _, terminated, _ = venv.step(actions)
        for i in np.flatnonzero(terminated):  # the game's last deal: no points to read
            trails[i] = []
            deal_of[i] = -1.0
        if len(batch) >= batch_deals:
            _update(model, adam, batch)
            updates += 1
            batch = []
    tenth = max(1, len(results) // 10)
    summary = {
        "deals": len(results),
        "updates": updates,
        "first_tenth_points_per_deal": round(float(np.mean(results[:tenth])), 3)
        if results
        else None,
        "last_tenth_points_per_deal": round(float(np.mean(results[-tenth:])), 3)
        if results
        else None,
        "seconds": round(time.monotonic() - start, 1),
    }
    return model, summary


def _update(model: Mlp, adam: Adam, batch: list[tuple[Trail, float]]) -> None:
    """One REINFORCE step: every decision of a deal weighted by that deal's normalised points."""
    points = np.array([p for _, p in batch], dtype=np.float32)
    norm = (points - points.mean()) / (points.std() + 1e-6)
    rows = [(o, m, a, norm[d]) for d, (trail, _) in enumerate(batch) for o, m, a in trail]
    x = np.stack([r[0] for r in rows])
    masks = np.stack([r[1] for r in rows])
    acts = np.array([r[2] for r in rows])
    adv = np.array([r[3] for r in rows], dtype=np.float32)
    adam.step(policy_gradient(model, x, masks, acts, adv))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cirulla.env.example",
        description="Train a small NumPy MLP against random by policy gradient on each deal's "
        "point difference; save it as .npz for the bot kind policy:model=PATH.npz.",
    )
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument(
        "--deals",
        type=int,
        help="training budget in deals (the same seed and budget, the same model, whatever "
        "the machine's load)",
    )
    budget.add_argument(
        "--minutes", type=float, help="training budget in wall-clock minutes (default 3)"
    )
    parser.add_argument("--out", default="agent.npz", help="where to save the model (agent.npz)")
    parser.add_argument("--hidden", type=int, default=64, help="hidden units (64)")
    parser.add_argument("--envs", type=int, default=64, help="games stepped together (64)")
    parser.add_argument("--lr", type=float, default=0.003, help="Adam's learning rate (0.003)")
    parser.add_argument("--batch-deals", type=int, default=256, help="deals per update (256)")
    parser.add_argument("--seed", type=int, default=0, help="seed (0)")
    args = parser.parse_args(argv)
    if args.deals is None and args.minutes is None:
        args.minutes = 3.0
    if (args.minutes is not None and args.minutes <= 0) or (
        args.deals is not None and args.deals < 1
    ):
        parser.error("--minutes and --deals must be positive")
    if args.hidden < 1 or args.envs < 1 or args.batch_deals < 1:
        parser.error("--hidden, --envs and --batch-deals must be positive")
    if not Path(args.out).name.endswith(".npz"):
        parser.error(f"--out {args.out}: the policy bot reads a .npz model")
    model, summary = train(
        seconds=args.minutes * 60 if args.minutes is not None else float("inf"),
        deals=args.deals,
        hidden=args.hidden,
        envs=args.envs,
        lr=args.lr,
        batch_deals=args.batch_deals,
        seed=args.seed,
    )
    path = save_mlp(args.out, model.layers(input_scale()))
    print(json.dumps({**summary, "saved": str(path)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``cirulla train``: training the ``learned`` bot's network, NumPy alone, two methods.

Both learn the network of ``cirulla.bots.learned`` (Q(observation, action features)) from
games to 51 on the rules core (native when built), against an opponent drawn per game
from the mix: ``greedy`` (the learner holds one seat), ``self`` (both seats are the
learner's and both give samples) or ``random``. Every sample's features come from
``learned.decision_features`` of the seat's ``View``: the very function the bot calls at
play time, so no hidden card reaches the network in training either.

**Expert iteration** (``teacher``, the default, how the shipped weights were made): the
teacher, an mcts bot, plays the labelled seats (a random move instead with probability
``epsilon``) and searches every decision with a choice; the network learns the
differences between the teacher's root actions' mean rewards (converted to points), a
Huber loss on each decision's actions centred on their mean. Every ``chunk`` games the
decisions join one buffer, and ``epochs`` times the chunk's size in decisions is drawn
from all of it in minibatches. What the search knows is only the view (it samples the
hidden cards), so the targets carry no hidden information either.

**Deep Monte-Carlo** (``teacher=None``; DouZero's method, Zha et al. 2021): the network
plays epsilon-greedy, and the target of each decision is its Monte-Carlo return, the
rest of the deal's point difference (my side's deal points minus the other side's, less
the scope already scored when the decision was made). Every ``chunk`` games, ``epochs``
passes over the chunk's samples.

Adam, backpropagation written out in NumPy. Seeded throughout (the deals, the opponent
draws, the exploration, the teacher's searches, the minibatches): the same command gives
the same weights, byte for byte, on the same NumPy build. Progress is one JSON line per
chunk on stderr.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cirulla.bots.heuristic import best_index
from cirulla.bots.inference import PlayTracker
from cirulla.bots.learned import FEATURES_VERSION, POINT_SCALE, QNet, decision_features
from cirulla.bots.mcts_policy import MctsPolicy
from cirulla.bots.specs import make_policy
from cirulla.bots.train_config import TrainConfig, check_config, parse_mix
from cirulla.rules.events import DealScored
from cirulla.rules.game import Game
from cirulla.rules.options import Options

if TYPE_CHECKING:
    from cirulla.bots.learned import Floats, Ints

#: One progress line of a training run (a JSON object of numbers; None: not measured).
ProgressLine = dict[str, float | None]


class Adam:
    """Adam over a network's arrays, in place."""

    def __init__(self, net: QNet) -> None:
        self.m = {k: np.zeros_like(a) for k, a in net.arrays().items()}
        self.s = {k: np.zeros_like(a) for k, a in net.arrays().items()}
        self.t = 0

    def step(self, net: QNet, grads: dict[str, Floats], lr: float) -> None:
        self.t += 1
        b1, b2 = 0.9, 0.999
        correction = np.sqrt(1 - b2**self.t) / (1 - b1**self.t)
        for name, g in grads.items():
            m, s = self.m[name], self.s[name]
            m *= b1
            m += (1 - b1) * g
            s *= b2
            s += (1 - b2) * g * g
            param = getattr(net, name)
            param -= (lr * correction) * m / (np.sqrt(s) + 1e-8)


def loss_and_grads(
    net: QNet, obs: Floats, acts: Floats, y: Floats
) -> tuple[float, dict[str, Floats]]:
    """Huber loss (delta 1, output units) of the batch and its gradients."""
    z1 = obs @ net.wo + acts @ net.wa + net.b1
    h1 = np.maximum(z1, 0.0)
    z2 = h1 @ net.w2 + net.b2
    h2 = np.maximum(z2, 0.0)
    q = h2 @ net.w3 + acts @ net.v + net.b3[0]
    err = q - y
    absolute = np.abs(err)
    loss = float(np.mean(np.where(absolute < 1.0, 0.5 * err * err, absolute - 0.5)))
    dq = (np.clip(err, -1.0, 1.0) / len(y)).astype(np.float32)
    grads: dict[str, Floats] = {
        "w3": h2.T @ dq,
        "v": acts.T @ dq,
        "b3": np.array([dq.sum()], dtype=np.float32),
    }
    dz2 = np.outer(dq, net.w3) * (z2 > 0)
    grads["w2"] = h1.T @ dz2
    grads["b2"] = dz2.sum(axis=0)
    dz1 = (dz2 @ net.w2.T) * (z1 > 0)
    grads["wo"] = obs.T @ dz1
    grads["wa"] = acts.T @ dz1
    grads["b1"] = dz1.sum(axis=0)
    return loss, grads


@dataclass
class Samples:
    obs: list[Floats]
    acts: list[Floats]
    targets: list[float]


@dataclass
class GameStats:
    kind: str
    learner_won: bool
    deal_diffs: list[int]  # the learner's side's deal points minus the other's (vs greedy)


def play_game(
    net: QNet,
    options: Options,
    seed: int,
    kind: str,
    learner_seat: int,
    epsilon: float,
    rng: np.random.Generator,
) -> tuple[Samples, GameStats]:
    """One training game; the samples of the learner's decisions with a choice."""
    game = Game(options, seed=seed)
    players = options.players
    learner = [kind == "self" or s == learner_seat for s in range(players)]
    samples = Samples([], [], [])
    pending: list[tuple[int, int]] = []  # (sample index, side) awaiting the deal's score
    banked: list[float] = []  # scope difference already scored at each decision
    diffs: list[int] = []
    my_side = options.side_of(learner_seat)
    # Only a network that reads the opponent's plays (layout 2) needs them followed.
    trackers = {s: PlayTracker() for s in range(players) if learner[s] and net.version >= 2}
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        codes = game.legal_codes()
        # The learner's seats see every view of theirs, as the bot at play time does.
        tracker = trackers.get(seat)
        evidence = tracker.evidence(game.view(seat)) if tracker else ()
        if len(codes) == 1:
            choice = 0
        elif learner[seat]:
            view = game.view(seat)
            obs, acts = decision_features(view, codes, evidence, net.version)
            if rng.random() < epsilon:
                choice = int(rng.integers(len(codes)))
            else:
                choice = int(np.argmax(net.q(obs, acts)))
            side = options.side_of(seat)
            others = max(sc for s, sc in enumerate(view.scope) if s != side)
            pending.append((len(samples.targets), side))
            samples.obs.append(obs)
            samples.acts.append(acts[choice].copy())
            samples.targets.append(0.0)
            banked.append(float(view.scope[side] - others))
        elif kind == "random":
            choice = int(rng.integers(len(codes)))
        else:
            choice = best_index(game.view(seat), codes)
        if tracker is not None:
            tracker.played(codes[choice])
        for event in game.apply(codes[choice], seat):
            if isinstance(event, DealScored):
                points = event.score.totals
                for index, side in pending:
                    other = max(p for s, p in enumerate(points) if s != side)
                    samples.targets[index] = (points[side] - other - banked[index]) / POINT_SCALE
                pending.clear()
                other = max(p for s, p in enumerate(points) if s != my_side)
                diffs.append(points[my_side] - other)
    # A game that ends without a deal score (cappotto ends it at once): no target to give.
    for index, _ in pending:
        samples.targets[index] = float("nan")
    won = game.winner == my_side
    return samples, GameStats(kind, won, diffs)


def train(
    config: TrainConfig,
    out: str | Path,
    progress: Callable[[ProgressLine], None] | None = None,
) -> dict[str, object]:
    """Run ``config``, write the weights to ``out``, and return the summary."""
    check_config(config)
    if config.teacher is not None:
        return train_distill(config, out, progress)
    return train_dmc(config, out, progress)


def train_dmc(
    config: TrainConfig,
    out: str | Path,
    progress: Callable[[ProgressLine], None] | None = None,
) -> dict[str, object]:
    """Deep Monte-Carlo (the module docstring)."""
    mix = parse_mix(config.opponents)
    names = [n for n, _ in mix]
    weights = np.array([w for _, w in mix], dtype=np.float64)
    weights /= weights.sum()
    options = Options.preset("standard", players=2, target=config.target)
    net = QNet.init(config.hidden, config.hidden2, config.seed, config.features)
    net.meta.update(
        {
            "trained_by": "cirulla train",
            "config": asdict(config),
            "players": 2,
            "preset": "standard",
        }
    )
    adam = Adam(net)
    rng = np.random.default_rng(config.seed)
    start = time.monotonic()
    deadline = None if config.minutes is None else start + 60 * config.minutes
    played = 0
    total_samples = 0
    updates = 0
    history: list[ProgressLine] = []
    while played < config.games and (deadline is None or time.monotonic() < deadline):
        n = min(config.chunk, config.games - played)
        obs_rows: list[Floats] = []
        act_rows: list[Floats] = []
        targets: list[float] = []
        greedy_diffs: list[int] = []
        greedy_games = greedy_wins = 0
        for g in range(n):
            kind = names[int(rng.choice(len(names), p=weights))]
            seat = (played + g) % 2
            seed = config.seed * 1_000_003 + played + g
            samples, stats = play_game(net, options, seed, kind, seat, config.epsilon, rng)
            obs_rows += samples.obs
            act_rows += samples.acts
            targets += samples.targets
            if kind == "greedy":
                greedy_games += 1
                greedy_wins += stats.learner_won
                greedy_diffs += stats.deal_diffs
        played += n
        y = np.asarray(targets, dtype=np.float32)
        keep = ~np.isnan(y)
        obs = np.stack(obs_rows)[keep]
        acts = np.stack(act_rows)[keep]
        y = y[keep]
        total_samples += len(y)
        frac = played / config.games
        lr = config.lr * (config.lr_end / config.lr) ** frac
        losses = []
        for _ in range(config.epochs):
            order = rng.permutation(len(y))
            for at in range(0, len(y), config.batch):
                idx = order[at : at + config.batch]
                loss, grads = loss_and_grads(net, obs[idx], acts[idx], y[idx])
                adam.step(net, grads, lr)
                losses.append(loss)
                updates += 1
        line = {
            "games": played,
            "samples": total_samples,
            "updates": updates,
            "loss": round(float(np.mean(losses)) if losses else 0.0, 5),
            "lr": round(lr, 6),
            "vs_greedy_games": greedy_games,
            "vs_greedy_won": round(greedy_wins / greedy_games, 3) if greedy_games else None,
            "vs_greedy_points_per_deal": (
                round(float(np.mean(greedy_diffs)), 3) if greedy_diffs else None
            ),
            "seconds": round(time.monotonic() - start, 1),
        }
        history.append(line)
        if progress is not None:
            progress(line)
    net.meta["games_played"] = played
    sha256 = net.save(out)
    tail = history[-max(1, len(history) // 10) :]
    tail_diffs = [h["vs_greedy_points_per_deal"] for h in tail if h["vs_greedy_points_per_deal"]]
    return {
        "out": str(out),
        "sha256": sha256,
        "bytes": Path(out).stat().st_size,
        "games": played,
        "samples": total_samples,
        "updates": updates,
        "seconds": round(time.monotonic() - start, 1),
        "config": asdict(config),
        "last_tenth_vs_greedy_points_per_deal": (
            round(float(np.mean(tail_diffs)), 3) if tail_diffs else None
        ),
    }


def print_progress(line: ProgressLine) -> None:
    print(json.dumps(line), file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- distillation


@dataclass
class Decisions:
    """Labelled decisions, flat: ``obs[d]`` per decision, ``acts[r]`` per legal action,
    ``values[r]`` the teacher's mean reward of each action it tried, in output units (its
    target), ``chosen[d]`` the teacher's choice (row within ``d``)."""

    obs: list[Floats]
    acts: list[Floats]
    values: list[Floats]
    chosen: list[int]


def make_teacher(spec: str, seed: int) -> MctsPolicy:
    """The teacher of ``mcts:key=value,...`` (numbers as numbers, words as words)."""
    name, _, rest = spec.partition(":")
    if name.strip() != "mcts":
        raise ValueError(f"teacher must be an mcts spec (mcts:iterations=N), not {spec!r}")
    options: dict[str, int | float | str] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"teacher {spec!r}: expected key=value, got {item!r}")
        options[key.strip()] = _number_or_word(raw.strip())
    try:
        teacher = make_policy("mcts", options, seed=seed)
    except ValueError as exc:
        raise ValueError(f"teacher {spec!r}: {exc}") from None
    assert isinstance(teacher, MctsPolicy)
    return teacher


def _number_or_word(text: str) -> int | float | str:
    """``text`` as an int, else a float, else itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def play_labelled_game(
    options: Options,
    seed: int,
    kind: str,
    learner_seat: int,
    teacher: str,
    epsilon: float,
    rng: np.random.Generator,
    version: int = FEATURES_VERSION,
    student: tuple[QNet, float] | None = None,
) -> tuple[Decisions, GameStats]:
    """One game in which the teacher plays (and labels) the learner's seats; with
    ``student`` ``(net, p)``, the network plays a labelled decision instead with chance
    ``p`` (DAgger), the teacher still labelling it."""
    game = Game(options, seed=seed)
    players = options.players
    labelled = [kind == "self" or s == learner_seat for s in range(players)]
    teachers = {s: make_teacher(teacher, seed=seed * 8 + s) for s in range(players) if labelled[s]}
    # Only a network that reads the opponent's plays (layout 2) needs them followed.
    trackers = {s: PlayTracker() for s in teachers if version >= 2}
    out = Decisions([], [], [], [])
    diffs: list[int] = []
    my_side = options.side_of(learner_seat)
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        legal = game.legal_actions()
        codes = [a.to_int() for a in legal]
        if labelled[seat]:
            view = game.view(seat)
            tracker = trackers.get(seat)
            evidence = tracker.evidence(view) if tracker else ()
            bot = teachers[seat]
            choice = int(bot.choose(view, legal, None))
            result = getattr(bot, "last", None)
            if len(codes) > 1 and result is not None:
                obs, acts = decision_features(view, codes, evidence, version)
                tried = [i for i, c in enumerate(codes) if result.visits.get(c, 0)]
                # Each root action's mean, in points, then in the network's output units.
                values = [result.mean_points(codes[i]) / POINT_SCALE for i in tried]
                out.obs.append(obs)
                out.acts.append(acts[tried])
                out.values.append(np.array(values, dtype=np.float32))
                out.chosen.append(tried.index(choice))
                if rng.random() < epsilon:
                    choice = int(rng.integers(len(codes)))
                elif student is not None and rng.random() < student[1]:
                    choice = int(np.argmax(student[0].q(obs, acts)))
                    # The teacher reads the opponent's next play from the table this move
                    # leaves. (Not after an exploration move: the shipped weights were
                    # made so, and the same command still writes them byte for byte.)
                    bot.played_instead(codes[choice])
        elif kind == "random":
            choice = int(rng.integers(len(codes)))
        else:
            choice = best_index(game.view(seat), codes)
        if seat in trackers:
            trackers[seat].played(codes[choice])
        for event in game.apply(codes[choice], seat):
            if isinstance(event, DealScored):
                points = event.score.totals
                other = max(p for s, p in enumerate(points) if s != my_side)
                diffs.append(points[my_side] - other)
    for bot in teachers.values():
        close = getattr(bot, "close", None)
        if close is not None:
            close()
    return out, GameStats(kind, game.winner == my_side, diffs)


def advantage_loss_and_grads(
    net: QNet, obs: Floats, acts: Floats, seg: Ints, starts: Ints, values: Floats
) -> tuple[float, dict[str, Floats]]:
    """Huber loss of the network's advantages (each action's output minus the mean over
    its decision's actions) against the teacher's (each action's mean reward minus the
    mean over the decision's), and its gradients. Only differences between the actions
    of one decision are learned: the position's own value, the same for all of them,
    does not decide a move. ``seg[r]`` is the decision of row ``r`` (rows grouped by
    decision, ``starts`` the first row of each)."""
    zo = obs @ net.wo
    z1 = zo[seg] + acts @ net.wa + net.b1
    h1 = np.maximum(z1, 0.0)
    z2 = h1 @ net.w2 + net.b2
    h2 = np.maximum(z2, 0.0)
    q = h2 @ net.w3 + acts @ net.v + net.b3[0]
    sizes = np.diff(np.append(starts, len(q)))
    err = q - values
    err = err - (np.add.reduceat(err, starts) / sizes)[seg]
    n = len(starts)
    absolute = np.abs(err)
    loss = float(np.sum(np.where(absolute < 1.0, 0.5 * err * err, absolute - 0.5)) / n)
    g = np.clip(err, -1.0, 1.0) / n
    dq = (g - (np.add.reduceat(g, starts) / sizes)[seg]).astype(np.float32)
    grads: dict[str, Floats] = {
        "w3": h2.T @ dq,
        "v": acts.T @ dq,
        "b3": np.zeros(1, dtype=np.float32),  # a shift common to all actions: no gradient
    }
    dz2 = np.outer(dq, net.w3) * (z2 > 0)
    grads["w2"] = h1.T @ dz2
    grads["b2"] = dz2.sum(axis=0)
    dz1 = (dz2 @ net.w2.T) * (z1 > 0)
    grads["wo"] = obs.T @ np.add.reduceat(dz1, starts, axis=0)
    grads["wa"] = acts.T @ dz1
    grads["b1"] = dz1.sum(axis=0)
    return loss, grads


def _batch(buffer: Decisions, idx: Ints) -> tuple[Floats, Floats, Ints, Ints, Floats]:
    sizes = np.array([len(buffer.values[i]) for i in idx])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    seg = np.repeat(np.arange(len(idx)), sizes)
    obs = np.stack([buffer.obs[i] for i in idx])
    acts = np.concatenate([buffer.acts[i] for i in idx])
    values = np.concatenate([buffer.values[i] for i in idx])
    return obs, acts, seg, starts, values


def train_distill(
    config: TrainConfig,
    out: str | Path,
    progress: Callable[[ProgressLine], None] | None = None,
) -> dict[str, object]:
    """Expert iteration: the teacher (mcts) plays and labels; the network learns the
    differences between its root actions' mean rewards (advantages, in points)."""
    assert config.teacher is not None
    mix = parse_mix(config.opponents)
    names = [n for n, _ in mix]
    weights = np.array([w for _, w in mix], dtype=np.float64)
    weights /= weights.sum()
    options = Options.preset("standard", players=2, target=config.target)
    net = QNet.init(config.hidden, config.hidden2, config.seed, config.features)
    net.meta.update(
        {
            "trained_by": "cirulla train",
            "config": asdict(config),
            "players": 2,
            "preset": "standard",
            "output": "advantages in points / 4 (the teacher's root means)",
        }
    )
    adam = Adam(net)
    rng = np.random.default_rng(config.seed)
    start = time.monotonic()
    deadline = None if config.minutes is None else start + 60 * config.minutes
    buffer = Decisions([], [], [], [])
    played = updates = 0
    history: list[ProgressLine] = []
    while played < config.games and (deadline is None or time.monotonic() < deadline):
        n = min(config.chunk, config.games - played)
        fresh = len(buffer.chosen)
        greedy_diffs: list[int] = []
        for g in range(n):
            kind = names[int(rng.choice(len(names), p=weights))]
            seat = (played + g) % 2
            seed = config.seed * 1_000_003 + played + g
            decisions, stats = play_labelled_game(
                options,
                seed,
                kind,
                seat,
                config.teacher,
                config.epsilon,
                rng,
                config.features,
                (net, config.student) if config.student > 0 else None,
            )
            for name in ("obs", "acts", "values", "chosen"):
                getattr(buffer, name).extend(getattr(decisions, name))
            if kind == "greedy":
                greedy_diffs += stats.deal_diffs
        played += n
        new = len(buffer.chosen) - fresh
        # Before fitting, the chunk's decisions are unseen: how often the network already
        # plays the teacher's move on them is a held-out measure of the fit.
        agree = 0
        for d in range(fresh, len(buffer.chosen)):
            q = net.q(buffer.obs[d], buffer.acts[d])
            agree += int(np.argmax(q)) == buffer.chosen[d]
        frac = played / config.games
        lr = config.lr * (config.lr_end / config.lr) ** frac
        losses = []
        steps = max(1, round(new * config.epochs / config.batch)) if new else 0
        for _ in range(steps):
            idx = rng.integers(len(buffer.chosen), size=min(config.batch, len(buffer.chosen)))
            loss, grads = advantage_loss_and_grads(net, *_batch(buffer, np.sort(idx)))
            adam.step(net, grads, lr)
            losses.append(loss)
            updates += 1
        line = {
            "games": played,
            "decisions": len(buffer.chosen),
            "updates": updates,
            "loss": round(float(np.mean(losses)) if losses else 0.0, 5),
            "lr": round(lr, 6),
            "held_out_agreement": round(agree / new, 3) if new else None,
            "teacher_vs_greedy_points_per_deal": (
                round(float(np.mean(greedy_diffs)), 3) if greedy_diffs else None
            ),
            "seconds": round(time.monotonic() - start, 1),
        }
        history.append(line)
        if progress is not None:
            progress(line)
    net.meta["games_played"] = played
    sha256 = net.save(out)
    measured = [h["held_out_agreement"] for h in history[-max(1, len(history) // 10) :]]
    tail = [a for a in measured if a is not None]
    return {
        "out": str(out),
        "sha256": sha256,
        "bytes": Path(out).stat().st_size,
        "games": played,
        "decisions": len(buffer.chosen),
        "updates": updates,
        "seconds": round(time.monotonic() - start, 1),
        "config": asdict(config),
        "last_tenth_held_out_agreement": round(float(np.mean(tail)), 3) if tail else None,
    }

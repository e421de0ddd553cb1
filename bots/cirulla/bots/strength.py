"""Strength of one bot against another on duplicate deals, in process.

Luck of the deal dominates Cirulla, so every sequence of deck orders is played once per
seating (two players: A first then B first; three: A in each seat; four: A's partnership on
either side) and the point difference is averaged per deck sequence before the interval is
taken (a paired comparison). Policies are called directly through the rules core, not over
gRPC: this measures play, not the protocol.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from cirulla.bots.botspec import BotSpec
from cirulla.bots.policy import RawAnswer
from cirulla.rules.events import DealScored
from cirulla.rules.game import Game
from cirulla.rules.options import Options

DECKS_PER_GAME = 80  # more deck orders than any game to the target uses, redeals included
Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class GameOutcome:
    group: int
    a_side: int
    a_won: bool
    deal_diffs: tuple[int, ...]  # A's side's deal points minus the best other side's


def seatings(players: int) -> list[list[str]]:
    """Which bot ("a"/"b") sits in each seat, for each game of one duplicate group."""
    if players == 3:
        return [["a" if s == k else "b" for s in range(3)] for k in range(3)]
    if players == 4:
        return [["a", "b", "a", "b"], ["b", "a", "b", "a"]]
    return [["a", "b"], ["b", "a"]]


@dataclass(frozen=True, slots=True)
class StrengthGame:
    """One game to play: which bot ("a"/"b") sits in each seat, the deck of each deal, the
    rules, the two bots' specs (parsed where they entered) and the game's seed."""

    group: int
    seating: Sequence[str]
    decks: Sequence[Sequence[int]]
    options: Options
    a: BotSpec
    b: BotSpec
    seed: int


def play_one(job: StrengthGame) -> GameOutcome:
    """One game of a duplicate group (a module-level function so worker processes can run it)."""
    seating, options, seed = job.seating, job.options, job.seed
    specs = {"a": job.a, "b": job.b}
    policies = [specs[who].policy(seed=seed * 16 + seat) for seat, who in enumerate(seating)]
    game = Game(options, decks=job.decks, first_dealer=options.players - 1)
    a_side = options.side_of(seating.index("a"))
    diffs: list[int] = []
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        legal = game.legal_actions()
        index = policies[seat].choose(game.view(seat), legal, None)
        if isinstance(index, RawAnswer):  # an answer that names no legal action
            who = seating[seat]
            raise ValueError(
                f"bot {who} ({specs[who].kind}) answered {index.text[:40]!r}, not a legal "
                "action: strength games need a policy that always answers one"
            )
        for event in game.apply(legal[index], seat):
            if isinstance(event, DealScored):
                points = event.score.totals
                others = max(p for s, p in enumerate(points) if s != a_side)
                diffs.append(points[a_side] - others)
    for policy in policies:
        close = getattr(policy, "close", None)
        if close is not None:
            close()
    return GameOutcome(job.group, a_side, game.winner == a_side, tuple(diffs))


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and normal-approximation 95% interval (needs at least two values for a width)."""
    n = len(values)
    if n == 0:
        return (0.0, 0.0, 0.0)
    mean = sum(values) / n
    if n < 2:
        return (mean, -math.inf, math.inf)
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return (mean, mean - half, mean + half)


def run_strength(
    spec_a: BotSpec | str,
    spec_b: BotSpec | str,
    games: int,
    players: int = 2,
    target: int = 51,
    seed: int = 0,
    jobs: int = 1,
    preset: str = "standard",
    base: BotSpec | str | None = None,
) -> dict[str, Any]:
    """Play at least ``games`` games (whole duplicate groups) and summarise them.

    With ``base``, the base bot also plays B on the very same games (deck sequences,
    seatings and B's random streams), and the report adds the difference A minus base per
    duplicate group: pairing removes the luck both runs share, so it resolves a change of
    a bot far more finely than two unpaired intervals.
    """
    # parsed here, before any game starts, unless they come parsed (the command line)
    a, b = BotSpec.of(spec_a), BotSpec.of(spec_b)
    base_spec = None if base is None else BotSpec.of(base)
    options = Options.preset(preset, players=players, target=target)
    layout = seatings(players)
    groups = max(1, math.ceil(games / len(layout)))
    rng = random.Random(seed)
    group_decks = []
    for _ in range(groups):
        decks = []
        for _ in range(DECKS_PER_GAME):
            deck = list(range(40))
            rng.shuffle(deck)
            decks.append(deck)
        group_decks.append(decks)
    players_a = [a] if base_spec is None else [a, base_spec]
    work = [
        StrengthGame(g, seating, decks, options, player, b, seed * 100_003 + g)
        for player in players_a
        for g, decks in enumerate(group_decks)
        for seating in layout
    ]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            outcomes = list(pool.map(play_one, work))
    else:
        outcomes = [play_one(job) for job in work]
    if base_spec is None:
        return summarise(a, b, options, seed, outcomes)
    half = len(outcomes) // 2
    report = summarise(a, b, options, seed, outcomes[:half])
    report["base"] = summarise(base_spec, b, options, seed, outcomes[half:])
    report["paired"] = paired_difference(outcomes[:half], outcomes[half:])
    return report


def group_means(outcomes: Sequence[GameOutcome]) -> dict[int, tuple[float, float]]:
    """Per duplicate group: A's mean point difference per deal and A's share of games won."""
    deals: dict[int, list[int]] = {}
    wins: dict[int, list[bool]] = {}
    for o in outcomes:
        deals.setdefault(o.group, []).extend(o.deal_diffs)
        wins.setdefault(o.group, []).append(o.a_won)
    return {g: (sum(d) / len(d), sum(wins[g]) / len(wins[g])) for g, d in deals.items() if d}


def paired_difference(a: Sequence[GameOutcome], base: Sequence[GameOutcome]) -> dict[str, Any]:
    """A minus base, group by group, with normal 95% intervals over the groups."""
    mine, theirs = group_means(a), group_means(base)
    groups = sorted(mine.keys() & theirs.keys())
    points = mean_interval([mine[g][0] - theirs[g][0] for g in groups])
    share = mean_interval([mine[g][1] - theirs[g][1] for g in groups])
    return {
        "duplicate_groups": len(groups),
        "point_diff_per_deal": points[0],
        "point_diff_per_deal_ci95": [points[1], points[2]],
        "win_rate": share[0],
        "win_rate_ci95": [share[1], share[2]],
        "method": "A minus base per duplicate group (the same deck sequences, seatings and "
        "B's random streams), normal approximation over the groups",
    }


def summarise(
    spec_a: BotSpec, spec_b: BotSpec, options: Options, seed: int, outcomes: Sequence[GameOutcome]
) -> dict[str, Any]:
    wins = sum(o.a_won for o in outcomes)
    n = len(outcomes)
    low, high = wilson(wins, n)
    per_group = group_means(outcomes)
    mean, d_low, d_high = mean_interval([points for points, _ in per_group.values()])
    deals = sum(len(o.deal_diffs) for o in outcomes)
    return {
        "benchmark": "strength",
        "mode": "in-process: policies called directly through the rules core, not over gRPC",
        "a": spec_a.text,
        "b": spec_b.text,
        "players": options.players,
        "target": options.target,
        "seed": seed,
        "games": n,
        "duplicate_groups": len(per_group),
        "deals": deals,
        "a_wins": wins,
        "b_wins": n - wins,
        "a_win_rate": wins / n if n else 0.0,
        "a_win_rate_ci95": [low, high],
        "a_mean_point_diff_per_deal": mean,
        "a_mean_point_diff_per_deal_ci95": [d_low, d_high],
        "ci_method": "Wilson for the win rate; normal approximation over duplicate groups "
        "(mean per-deal difference per deck sequence) for the point difference",
    }

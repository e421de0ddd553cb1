"""Where the ``learned`` bot gives up points to the search it imitates.

The teacher (an mcts spec) plays the labelled seat against greedy, as in ``cirulla train``;
at each of its decisions with a choice, the bot is asked too (it is shown the same views),
and its *regret* is the teacher's mean reward of its own move minus that of the bot's, in
points (the teacher's root means, as in training: 0 where they agree). Grouped by kind of
decision, the figures say which decisions cost the most: the last round of a deal (every
card known), the round before it, whether a capture was possible, how many cards were in
hand. They motivated the exact last round and the sampled round before it
(``cirulla.bots.endgame``). The teacher's means are estimates, so a regret is too (noisy,
and biased upward where the teacher's best is a lucky estimate); compare groups, or two
weights files, on the same games.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cirulla.bots.endgame import penultimate
from cirulla.bots.heuristic import best_index
from cirulla.bots.learned import LearnedPolicy
from cirulla.bots.mcts_policy import MctsPolicy
from cirulla.bots.train import make_teacher
from cirulla.rules.game import Game
from cirulla.rules.options import Options
from cirulla.rules.views import View


def _groups(view: View, codes: list[int]) -> Iterator[str]:
    yield "all"
    if view.stock == 0:
        yield "last_round"
    else:
        yield "round_before_last" if penultimate(view) else "earlier_rounds"
    yield "capture_possible" if any(c >> 12 for c in codes) else "no_capture_possible"
    yield f"cards_in_hand_{view.hand.bit_count()}"


def teacher_regret(
    teacher: str, games: int, seed: int, weights: str | None = None, endgame: str = "sampled"
) -> dict[str, Any]:
    """The bot's regret against ``teacher`` over ``games`` games to 51 (module docstring)."""
    options = Options.preset("standard", players=2, target=51)
    totals: dict[str, list[float]] = {}
    for g in range(games):
        game = Game(options, seed=seed * 1_000_003 + g)
        labelled = g % 2
        search: MctsPolicy = make_teacher(teacher, seed=seed * 8 + g)
        bot = LearnedPolicy(weights=weights, endgame=endgame)
        while (seat := game.to_move) is not None:
            legal = game.legal_actions()
            view = game.view(seat)
            codes = [a.to_int() for a in legal]
            if seat != labelled:
                game.apply(legal[best_index(view, codes)], seat)
                continue
            choice = search.choose(view, legal, None)
            mine = bot.choose(view, legal, None)
            result = search.last
            if len(codes) > 1 and result is not None:
                means = {c: result.mean_points(c) for c in codes if result.visits.get(c)}
                best = means[codes[choice]]
                regret = best - means.get(codes[mine], best)
                for name in _groups(view, codes):
                    row = totals.setdefault(name, [0, 0, 0.0])
                    row[0] += 1
                    row[1] += mine != choice
                    row[2] += regret
            game.apply(legal[choice], seat)
        search.close()
    whole = totals["all"][2] or 1.0
    return {
        "benchmark": "learned-regret",
        "teacher": teacher,
        "weights": weights or "shipped",
        "endgame": endgame,
        "games": games,
        "seed": seed,
        "groups": {
            name: {
                "decisions": int(n),
                "disagree": round(d / n, 3),
                "regret_points_per_decision": round(r / n, 3),
                "share_of_regret": round(r / whole, 3),
            }
            for name, (n, d, r) in sorted(totals.items())
        },
    }

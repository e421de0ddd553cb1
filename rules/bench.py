"""Random-policy throughput of the rules core: the budget tree search lives on."""

from __future__ import annotations

import random
import time

from cirulla.rules.game import Game
from cirulla.rules.options import Options


def bench_rules(options: Options, seconds: float = 3.0, seed: int = 1) -> dict:
    """Play random deals (legal generation, declarations, scoring included) for ``seconds``."""
    rng = random.Random(seed)
    rnd = rng.random
    deals = actions = games = 0
    game = Game(options, seed=seed)
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        deal_no = game.deal_no
        while game.deal_no == deal_no and game.winner is None:
            codes = game.legal_codes()
            game.apply_code(codes[int(rnd() * len(codes))])
            actions += 1
        deals += 1
        if game.winner is not None:
            games += 1
            game = Game(options, seed=rng.getrandbits(32))
        if deals % 64 == 0 and time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {
        "benchmark": "rules",
        "players": options.players,
        "options": options.to_dict(),
        "seconds": round(elapsed, 3),
        "deals": deals,
        "games": games,
        "actions": actions,
        "deals_per_s": round(deals / elapsed, 1),
        "actions_per_s": round(actions / elapsed, 1),
    }

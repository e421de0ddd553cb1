"""Random-policy throughput of the rules core: the budget tree search lives on, and what
a Python program driving ``Game`` sees.

Three loops, reported apart because their rates differ by two orders of magnitude:

* ``native``: the random-play loop runs inside the native core (``_native.c``), never
  returning to Python: what a search in C (``mcts``) sees;
* ``python``: the reference core's own loop in Python (``reference_legal_codes`` and
  ``apply_code``), the core a machine without a C compiler runs;
* ``api``: a Python program using the public API, ``Game.legal_actions()`` and the
  checked ``Game.apply()`` (Action objects, events, the referee's checks), on whichever
  core is built: what a Python bot or environment written against ``Game`` sees.
"""

from __future__ import annotations

import random
import time
from typing import Any

from cirulla.rules.core import options_tuple, require_native, resolve_core
from cirulla.rules.game import Game
from cirulla.rules.options import Options


def bench_rules(
    options: Options, seconds: float = 3.0, seed: int = 1, core: str | None = None
) -> dict[str, Any]:
    """Play random deals (legal generation, declarations, scoring included) for ``seconds``
    of CPU time (one core's work: on a busy machine the wall time is longer).

    ``core`` native runs the same loop inside the native core (``_native.c``), which is
    what search does; python (the reference) drives ``Game`` from Python.
    """
    if resolve_core(core) == "native":
        deals, games, actions, elapsed, cpu = require_native().bench_rules(
            options_tuple(options), seconds, seed
        )
        report = _report(options, "native", elapsed, cpu, deals, games, actions)
        report["loop"] = LOOPS["native"]
        return report
    rng = random.Random(seed)
    rnd = rng.random
    deals = actions = games = 0
    game = Game(options, seed=seed)
    cpu = time.process_time()
    start = time.perf_counter()
    deadline = cpu + seconds
    while True:
        deal_no = game.deal_no
        while game.deal_no == deal_no and game.winner is None:
            codes = game.reference_legal_codes()  # the Python core, even if native is built
            game.apply_code(codes[int(rnd() * len(codes))])
            actions += 1
        deals += 1
        if game.winner is not None:
            games += 1
            game = Game(options, seed=rng.getrandbits(32))
        if deals % 64 == 0 and time.process_time() >= deadline:
            break
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    report = _report(options, "python", elapsed, cpu, deals, games, actions)
    report["loop"] = LOOPS["python"]
    return report


def bench_api(options: Options, seconds: float = 3.0, seed: int = 1) -> dict[str, Any]:
    """Random deals through ``Game.legal_actions()`` and ``Game.apply()``, for ``seconds``
    of CPU time: the rate a Python user of the API sees (``core`` says which one runs
    underneath ``legal_actions``)."""
    from cirulla.rules.core import CORE

    rng = random.Random(seed)
    rnd = rng.random
    deals = actions = games = 0
    game = Game(options, seed=seed)
    cpu = time.process_time()
    start = time.perf_counter()
    deadline = cpu + seconds
    while True:
        deal_no = game.deal_no
        while game.deal_no == deal_no and game.winner is None:
            legal = game.legal_actions()
            game.apply(legal[int(rnd() * len(legal))])
            actions += 1
        deals += 1
        if game.winner is not None:
            games += 1
            game = Game(options, seed=rng.getrandbits(32))
        if deals % 16 == 0 and time.process_time() >= deadline:
            break
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    report = _report(options, CORE, elapsed, cpu, deals, games, actions)
    report["loop"] = LOOPS["api"]
    return report


#: What each measured loop is (``loop`` in the JSON).
LOOPS = {
    "native": "the random-play loop inside the native core, in C (what mcts's search sees)",
    "python": "the reference core's loop in Python (reference_legal_codes + apply_code)",
    "api": "Python calling Game.legal_actions() and Game.apply() (what a Python user sees)",
}


def _report(
    options: Options, core: str, elapsed: float, cpu: float, deals: int, games: int, actions: int
) -> dict[str, Any]:
    """Rates per wall second, and per CPU second (one core, whatever else the machine runs)."""
    return {
        "benchmark": "rules",
        "core": core,
        "players": options.players,
        "options": options.to_dict(),
        "seconds": round(elapsed, 3),
        "deals": deals,
        "games": games,
        "actions": actions,
        "deals_per_s": round(deals / elapsed, 1),
        "actions_per_s": round(actions / elapsed, 1),
        "cpu_seconds": round(cpu, 3),
        "deals_per_cpu_s": round(deals / cpu, 1) if cpu > 0 else None,
    }

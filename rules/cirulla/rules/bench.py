"""Random-policy throughput of the rules core: the budget tree search lives on, and what
a Python program driving ``Game`` sees.

The loops, reported apart because their rates differ by two orders of magnitude:

* ``native``: the random-play loop runs inside the native core (``_native.c``), never
  returning to Python; a uniform random pick needs only how many legal codes there are
  and the one drawn, so it builds that one (``engine.h``'s ``random_code``);
* ``native_listed``: the same loop and the same games, each pick from the whole list of
  legal codes (``legal_codes``): what a policy or search in C that looks at every legal
  action pays (``mcts``'s playouts weigh every code);
* ``python``: the reference core's own loop in Python (``reference_legal_codes`` and
  ``apply_code``), the core a machine without a C compiler runs: the naive pure-Python
  baseline;
* ``api``: a Python program using the public API, ``Game.legal_actions()`` and the
  checked ``Game.apply()`` (Action objects, events, the referee's checks), on whichever
  core is built: what a Python bot or environment written against ``Game`` sees;
* ``api_before``: the same program on the API as it was before its fast paths (the
  state in Python slots, ``PythonStateGame``; a validated ``Action`` built for every
  legal code, the legal codes generated again by
  ``apply``'s check, events through the dataclasses' own constructors, every deal ended
  and started in Python with the decks shuffled in Python), kept as the baseline the
  ``api`` figure is measured against in the same run;
* ``search``: the documented fast path for search in Python, ``legal_codes()`` and
  ``apply_code()`` (no checks, no events);
* ``api_floor``: ``api``'s very program on a stand-in for ``Game`` (``native.FloorGame``)
  whose ``legal_actions()`` and ``apply()`` do no rules work at all, in C: what the
  interpreter alone costs that program, so the highest rate any ``Game`` could show it in
  the same run (the ceiling of the ``api`` figure).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import NotRequired, Protocol, TypedDict, TypeVar

import cirulla.rules.decks as decks_module
import cirulla.rules.events as ev
import cirulla.rules.game as game_module
from cirulla.rules.actions import Action, Declaration, decode, encode
from cirulla.rules.core import CORE, native, options_tuple, require_native, resolve_core
from cirulla.rules.errors import IllegalActionError
from cirulla.rules.game import Game
from cirulla.rules.options import Options, OptionValue
from cirulla.rules.state import SLOTS, PyState

_A = TypeVar("_A")


class Playable(Protocol[_A]):
    """What ``api``'s program uses of a game: ``Game``, or the floor's stand-in."""

    @property
    def deal_no(self) -> int: ...
    @property
    def winner(self) -> int | None: ...
    def legal_actions(self) -> Sequence[_A]: ...
    def apply(self, action: _A, /) -> object: ...


class _Ending(Protocol):
    @property
    def winner(self) -> int | None: ...


_G = TypeVar("_G", bound=_Ending)


class Machine(TypedDict):
    """The machine a benchmark ran on, as ``bench server`` reports it: its figures are
    compared only within one run, and the load says how quiet the run was."""

    cpus: int | None
    load_average_start: float
    load_average_end: NotRequired[float]


def machine_at_start() -> Machine:
    """The processors and the one-minute load average as a benchmark starts."""
    return {"cpus": os.cpu_count(), "load_average_start": round(os.getloadavg()[0], 2)}


def machine_at_end(machine: Machine) -> Machine:
    """``machine`` with the one-minute load average as the benchmark ends."""
    return {**machine, "load_average_end": round(os.getloadavg()[0], 2)}


class RulesReport(TypedDict):
    """One loop's figures (``cirulla bench rules`` prints them as JSON)."""

    benchmark: str
    core: str
    players: int
    options: dict[str, OptionValue]
    seconds: float
    deals: int
    games: int
    actions: int
    deals_per_s: float
    actions_per_s: float
    cpu_seconds: float
    deals_per_cpu_s: float | None
    loop: NotRequired[str]


def bench_rules(
    options: Options,
    seconds: float = 3.0,
    seed: int = 1,
    core: str | None = None,
    listed: bool = False,
) -> RulesReport:
    """Play random deals (legal generation, declarations, scoring included) for ``seconds``
    of CPU time (one core's work: on a busy machine the wall time is longer).

    ``core`` native runs the same loop inside the native core (``_native.c``); python (the
    reference) drives ``Game`` from Python. ``listed`` (native only) picks each action
    from the whole list of legal codes instead of building only the one drawn.
    """
    if resolve_core(core) == "native":
        require_native()
        deals, games, actions, elapsed, cpu = native.bench_rules(
            options_tuple(options), seconds, seed, listed
        )
        report = _report(options, "native", elapsed, cpu, deals, games, actions)
        report["loop"] = LOOPS["native_listed" if listed else "native"]
        return report
    return _random_deals(
        _seeded(options), seconds, seed, _reference_deal, 64, "python", "python", options
    )


def bench_api(options: Options, seconds: float = 3.0, seed: int = 1) -> RulesReport:
    """Random deals through ``Game.legal_actions()`` and ``Game.apply()``, for ``seconds``
    of CPU time: the rate a Python user of the API sees (``core`` says which one runs
    underneath ``legal_actions``)."""
    return _random_deals(_seeded(options), seconds, seed, _api_deal, 16, CORE, "api", options)


def bench_api_before(options: Options, seconds: float = 3.0, seed: int = 1) -> RulesReport:
    """``bench_api``'s program on the API as it was before its fast paths: the baseline."""
    with _paths_before():
        return _random_deals(
            lambda seed: PythonStateGame(options, seed=seed),
            seconds,
            seed,
            _api_before_deal,
            16,
            CORE,
            "api_before",
            options,
        )


def bench_api_floor(
    options: Options, seconds: float = 3.0, seed: int = 1, actions_per_deal: int = 36
) -> RulesReport:
    """``bench_api``'s program, clock and bookkeeping on ``native.FloorGame``: a game whose
    ``legal_actions()`` copies a fixed list (a real position's actions) and whose
    ``apply()`` only counts, ``actions_per_deal`` to a deal (give ``bench_api``'s own
    ratio, so both loops pay the same per-deal steps). Nothing a real ``Game`` does can
    cost less, so its rate bounds ``api``'s from above in the same run."""
    require_native()
    actions = Game(options, seed=seed).legal_actions()
    floor: Playable[Action] = native.FloorGame(actions, actions_per_deal)
    return _random_deals(lambda _: floor, seconds, seed, _api_deal, 16, CORE, "api_floor", options)


def bench_search(options: Options, seconds: float = 3.0, seed: int = 1) -> RulesReport:
    """Random deals through ``Game.legal_codes()`` and ``Game.apply_code()``: the fast path
    for search in Python."""
    return _random_deals(_seeded(options), seconds, seed, _search_deal, 16, CORE, "search", options)


def alternated(
    loops: Sequence[Callable[[float, int], RulesReport]], seconds: float, seed: int, rounds: int
) -> list[RulesReport]:
    """Each of ``loops`` (called with its CPU seconds and a seed) for ``seconds`` in all,
    in ``rounds`` turns taken in order (the first loop, the second, ..., then again), each
    round on a seed of its own: loops compared with one another then meet the same
    machine, where a shared host's speed moves within seconds (docs/performance.md)."""
    runs = [[loop(seconds / rounds, seed + r) for loop in loops] for r in range(rounds)]
    return [merged([run[i] for run in runs]) for i in range(len(loops))]


def merged(reports: Sequence[RulesReport]) -> RulesReport:
    """One report of a loop's turns: their deals, games, actions and times summed, the
    rates recomputed from the sums."""
    elapsed = sum(r["seconds"] for r in reports)
    cpu = sum(r["cpu_seconds"] for r in reports)
    deals = sum(r["deals"] for r in reports)
    actions = sum(r["actions"] for r in reports)
    out: RulesReport = {
        **reports[0],
        "seconds": round(elapsed, 3),
        "deals": deals,
        "games": sum(r["games"] for r in reports),
        "actions": actions,
        "deals_per_s": round(deals / elapsed, 1) if elapsed > 0 else 0.0,
        "actions_per_s": round(actions / elapsed, 1) if elapsed > 0 else 0.0,
        "cpu_seconds": round(cpu, 3),
        "deals_per_cpu_s": round(deals / cpu, 1) if cpu > 0 else None,
    }
    return out


def _reference_deal(game: Game, rnd: Callable[[], float]) -> int:
    """One deal of random play on the Python core (even if native is built); its actions."""
    deal_no, actions = game.deal_no, 0
    while game.deal_no == deal_no and game.winner is None:
        codes = game.reference_legal_codes()
        game.apply_code(codes[int(rnd() * len(codes))])
        actions += 1
    return actions


def _api_deal(game: Playable[_A], rnd: Callable[[], float]) -> int:
    """One deal of random play as a Python user writes it; its actions."""
    deal_no, actions = game.deal_no, 0
    while game.deal_no == deal_no and game.winner is None:
        legal = game.legal_actions()
        game.apply(legal[int(rnd() * len(legal))])
        actions += 1
    return actions


def _search_deal(game: Game, rnd: Callable[[], float]) -> int:
    """One deal of random play on the unchecked int path; its actions."""
    deal_no, actions = game.deal_no, 0
    while game.deal_no == deal_no and game.winner is None:
        codes = game.legal_codes()
        game.apply_code(codes[int(rnd() * len(codes))])
        actions += 1
    return actions


def _codes_before(game: Game) -> list[int]:
    """The legal codes generated afresh, as ``legal_codes`` did at every call."""
    if game.winner is not None or game.deal_over:
        return []
    native_codes = game_module._NATIVE_LEGAL_CODES
    if native_codes is None:
        return game.reference_legal_codes()
    o = game.options
    return native_codes(
        game.hands[game.turn], game.table, game.wild, o.must_capture, o.pairing_precedence
    )


def _action_before(code: int) -> Action:
    """A validated ``Action`` built for one code, as ``legal_actions`` built every one."""
    card, decl_code, capture = decode(code)
    return Action(card, capture, Declaration.from_code(decl_code))


def _api_before_deal(game: Game, rnd: Callable[[], float]) -> int:
    """``_api_deal`` on the API's previous paths: ``legal_actions`` built a validated
    ``Action`` per legal code; ``apply`` encoded the action again, generated the legal
    codes again for its check, and built its events with the dataclass constructors
    (``_paths_before``); then the same state machine, its deals ended and started in
    Python (``Game._play``)."""
    deal_no, actions = game.deal_no, 0
    while game.deal_no == deal_no and game.winner is None:
        legal = [_action_before(code) for code in _codes_before(game)]
        action = legal[int(rnd() * len(legal))]
        decl = action.declaration
        code = encode(action.card, action.capture, decl.code() if decl else 0)
        if code not in _codes_before(game):
            raise IllegalActionError("bench", f"{action} is not legal")
        events: list[ev.Event] = []
        game.history.append((game.turn, code))
        game._play(code, events)
        actions += 1
    return actions


#: the events game.py builds through ``core.fast_constructor`` (as ``_<name>``)
_EVENT_TYPES = (
    "Redeal",
    "DealStarted",
    "HandDealt",
    "DealerBonus",
    "Declared",
    "CardPlayed",
    "RoundDealt",
    "LastTake",
    "DealScored",
    "GameOver",
)


@contextmanager
def _paths_before() -> Iterator[None]:
    """While the baseline runs, the state machine builds its events with the dataclasses'
    generated ``__init__`` (as before ``core.fast_constructor``) and shuffles the seeded
    decks in Python (``decks.seeded_deck``, as before ``native.seeded_decks``); its games are
    ``game.PythonStateGame``s, the state in Python slots and every method in Python (a new
    game's first deal included, as before ``_first_deal`` in C)."""
    saved = {name: getattr(game_module, "_" + name) for name in _EVENT_TYPES}
    native_decks = decks_module._native_decks
    try:
        for name in _EVENT_TYPES:
            setattr(game_module, "_" + name, getattr(ev, name))
        decks_module._native_decks = None
        yield
    finally:
        for name, value in saved.items():
            setattr(game_module, "_" + name, value)
        decks_module._native_decks = native_decks


def _random_deals(
    new_game: Callable[[int], _G],
    seconds: float,
    seed: int,
    play_deal: Callable[[_G, Callable[[], float]], int],
    check_every: int,
    core: str,
    loop: str,
    options: Options,
) -> RulesReport:
    """Deals played by ``play_deal`` for ``seconds`` of CPU time (the clock read every
    ``check_every`` deals), the game ``new_game(seed)``, and a new seeded one whenever one
    ends."""
    rng = random.Random(seed)
    deals = actions = games = 0
    game = new_game(seed)
    cpu = time.process_time()
    start = time.perf_counter()
    deadline = cpu + seconds
    while True:
        actions += play_deal(game, rng.random)
        deals += 1
        if game.winner is not None:
            games += 1
            game = new_game(rng.getrandbits(32))
        if deals % check_every == 0 and time.process_time() >= deadline:
            break
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    report = _report(options, core, elapsed, cpu, deals, games, actions)
    report["loop"] = LOOPS[loop]
    return report


def _seeded(options: Options) -> Callable[[int], Game]:
    """A new game of ``options`` for each seed."""
    return lambda seed: Game(options, seed=seed)


#: What each measured loop is (``loop`` in the JSON).
LOOPS = {
    "native": "the random-play loop inside the native core, in C: each uniform pick built "
    "alone from the count of legal codes (random_code)",
    "native_listed": "the same loop and games, each pick from the whole list of legal codes "
    "(legal_codes: what a policy or search in C that weighs every action pays)",
    "python": "the reference core's loop in Python (reference_legal_codes + apply_code)",
    "api": "Python calling Game.legal_actions() and Game.apply() (what a Python user sees)",
    "api_before": "the api loop on the API's paths before its fast paths (the baseline): "
    "the state in Python slots, a validated Action built per legal code, legal codes "
    "generated again by apply's check, events through the dataclass constructors, deals "
    "ended and started in Python with the decks shuffled in Python",
    "search": "Python calling Game.legal_codes() and Game.apply_code() (the fast path for "
    "search: no checks, no events)",
    "api_floor": "the api loop on native.FloorGame, whose legal_actions() and apply() do no "
    "rules work (a list copied, a counter): what the interpreter alone costs that program, "
    "the ceiling of the api figure",
}


def _report(
    options: Options, core: str, elapsed: float, cpu: float, deals: int, games: int, actions: int
) -> RulesReport:
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


def _python_state_game() -> type[Game]:
    """``Game`` with its state in Python slots and every method in Python, even where the
    native core runs (``state.PyState``, game.py's Python methods): the API as it was before
    its state moved to C, the baseline ``api_before`` plays, so that the baseline is not
    slowed by the Python methods reading the C state through its attributes."""
    if native is None:
        return Game
    body = {
        name: value
        for name, value in Game.__dict__.items()
        if name not in ("__dict__", "__weakref__", "__slots__")
    }
    body.update(game_module._PYTHON_METHODS)
    body["__slots__"] = SLOTS
    body["__qualname__"] = body["__name__"] = "PythonStateGame"
    return type("PythonStateGame", (PyState,), body)


#: ``bench_api_before``'s games.
PythonStateGame = _python_state_game()

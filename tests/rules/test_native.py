"""The native rules core (rules/cirulla/rules/_native.c) against the pure-Python reference.

The differential test drives both cores through the same random games, every preset with
2, 3 and 4 players (fantacarte: 2), and requires identical legal actions (in the protocol's
order: the action indexes), identical events and identical state after every step.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from itertools import combinations
from typing import Any

import pytest

import cirulla.rules.decks as decks_module
import cirulla.rules.game as game_module
from cirulla.rules import PRESETS, Action, Game, Options
from cirulla.rules.actions import declaration_codes
from cirulla.rules.bench import PythonStateGame, _paths_before, bench_api_before
from cirulla.rules.captures import legal_captures
from cirulla.rules.cards import ALL_CARDS_MASK
from cirulla.rules.core import CORE, event_of, native, options_tuple, view_tuple
from cirulla.rules.decks import DeckSource, seeded_deck
from cirulla.rules.errors import DeckError
from cirulla.rules.events import CardPlayed, DealerBonus, Redeal
from cirulla.rules.game import _CardPlayed
from cirulla.rules.scoring import DealScore, SideScore
from cirulla.rules.views import sample_world
from tests.rules_helpers import deal_positions

CASES = [
    (preset, players)
    for preset in PRESETS
    for players in (2, 3, 4)
    if preset != "fantacarte" or players == 2
]


def test_the_native_core_is_built_and_used() -> None:
    """The suite runs both cores; only CIRULLA_CORE=python may turn the native one off."""
    if os.environ.get("CIRULLA_CORE", "").lower() == "python":
        assert CORE == "python" and native is None
    else:
        assert CORE == "native", "rules/cirulla/rules/_native.c was not built: is gcc installed?"


def _state(game: Game) -> dict:
    return {
        "dealer": game.dealer,
        "deal_no": game.deal_no,
        "round": game.round,
        "turn": game.turn,
        "in_hands": game.in_hands,
        "hands": tuple(game.hands),
        "table": game.table,
        "stock": list(game.stock),
        "captured": tuple(game.captured),
        "scope": tuple(game.scope),
        "declared": tuple(game.declared),
        "totals": tuple(game.totals),
        "last_taker": game.last_taker,
        "wild": game.wild,
        "winner": game.winner,
        "deal_over": game.deal_over,
        "cappotto": int(game.cappotto),
        "deal_only": int(game.deal_only),
    }


def _source_state(source: DeckSource) -> dict[str, object]:
    return {k: v for k, v in vars(source).items() if not k.startswith("_ahead")}


class _Reference(Game):
    """Game dealing its first deal with the Python reference (``_start_deal``) where the
    native core binds a C one; ``_play`` (the tests' reference) runs the Python methods
    through every later deal."""

    __slots__ = ()
    _first_deal = Game._start_deal


def _play_both(options: Options, seed: int, deal_only: bool = False, seeded: bool = False) -> int:
    """One random game through both cores; returns the number of actions compared.

    ``seeded``: the game's decks are ``seed``'s seeded decks (Game(seed=...)), which the
    fast path's deal start shuffles in C; else explicit deck orders (DeckSource's
    next_deck, called from C)."""
    rng = random.Random(seed)
    if seeded:
        decks = [seeded_deck(seed, number) for number in range(1, 81)]
        source = {"seed": seed}
    else:
        decks = [rng.sample(range(40), 40) for _ in range(80)]
        source = {"decks": decks}
    first_dealer = rng.randrange(options.players)
    py_events: list = []
    ref = _Reference(
        options, **source, first_dealer=first_dealer, deal_only=deal_only, events=py_events
    )
    # the same game on Game's fast paths (the card played, and the deal's end and the next
    # deal's start, in C on its slots: _native.c's bind_game), held to the Python reference
    # step by step like the native Game
    fast_events: list = []
    fast = Game(
        options, **source, first_dealer=first_dealer, deal_only=deal_only, events=fast_events
    )
    nat = native.Game(options_tuple(options), decks, first_dealer=first_dealer, deal_only=deal_only)
    assert [event_of(e) for e in nat.take_events()] == py_events == fast_events
    assert nat.state() == _state(ref) == _state(fast)
    steps = 0
    while ref.to_move is not None:
        codes = ref.reference_legal_codes()
        assert nat.legal_codes() == codes, f"seed {seed} step {steps}: {ref!r}"
        assert ref.legal_codes() == codes  # Game's own (native) path gives the same order
        assert [a.to_int() for a in fast.legal_actions()] == codes
        # prefer declarations and captures now and then, so rare rules come up often
        code = codes[-1] if rng.random() < 0.2 else rng.choice(codes)
        py_events = []
        ref._play(code, py_events)  # the reference state machine, in Python
        nat.apply_code(code)
        fast_events = (
            fast.apply(Action.from_int(code), fast.turn) if steps % 2 else _apply_code(fast, code)
        )
        assert [event_of(e) for e in nat.take_events()] == py_events, f"seed {seed} step {steps}"
        assert fast_events == py_events, f"seed {seed} step {steps}"
        assert nat.state() == _state(ref) == _state(fast), f"seed {seed} step {steps}"
        _same_scores(ref.last_score, fast.last_score)
        steps += 1
    assert nat.legal_codes() == [] == fast.legal_codes() == fast.legal_actions()
    assert fast.decks_used == ref.decks_used
    # the same deck source state (the decks the native game shuffled ahead aside)
    assert _source_state(fast.deck_source) == _source_state(ref.deck_source)
    assert type(fast.cappotto) is type(ref.cappotto) is bool
    return steps


def _same_scores(ref: DealScore | None, fast: DealScore | None) -> None:
    """The same DealScore, its captured piles (not part of its value) included."""
    assert fast == ref
    if ref is not None and fast is not None:
        assert fast.captured == ref.captured and fast.sides == ref.sides
        assert [type(s) for s in fast.sides] == [SideScore] * len(ref.sides)


def _apply_code(game: Game, code: int) -> list:
    events: list = []
    game.apply_code(code, events)
    return events


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_both_cores_play_the_same_games(preset: str, players: int) -> None:
    assert native is not None
    options = Options.preset(preset, players=players)
    steps = sum(_play_both(options, seed) for seed in range(12))
    assert steps > 12 * 30  # whole games, several deals each


@pytest.mark.parametrize(("preset", "players"), [("standard", 2), ("genova-home", 4)])
def test_both_cores_play_the_same_seeded_games(preset: str, players: int) -> None:
    """Seeded decks: the fast path's deal start shuffles them in C (_native.c's
    seeded_decks_c), the reference through decks.seeded_deck."""
    assert native is not None
    options = Options.preset(preset, players=players)
    steps = sum(_play_both(options, seed, seeded=True) for seed in (0, 3, 2**40 + 1, -17))
    _play_both(options, 99, deal_only=True, seeded=True)
    assert steps > 4 * 30


def test_native_seeded_deck_is_the_reference_bit_for_bit() -> None:
    """SHA-256, CPython's MT19937 seeded from the digest and the stable sort, in C: the
    same deck orders for small, negative and huge seeds and many deck numbers."""
    assert native is not None
    rng = random.Random(38)
    seeds = [0, 1, -1, 2**31, 2**64, -(2**70), 10**200, -(10**600) - 1]  # long text: heap
    seeds += [rng.getrandbits(rng.choice((8, 32, 64, 128, 300))) for _ in range(300)]
    for seed in seeds:
        for number in (1, 2, rng.randrange(3, 10_000)):
            for isa in dict.fromkeys((native.DECK_ISA, "baseline")):
                got = list(native.seeded_decks(seed, number, 1, isa))
                assert got == seeded_deck(seed, number), (seed, number, isa)


def _fast_and_reference(options: Options, **setup: Any) -> tuple[Game, Game]:
    """The same position twice: one to play through the fast paths, one (its bound
    methods' Python references) to play through Game._play."""
    return Game.setup(options, **setup), Game.setup(options, **setup)


def _last_card_both(fast: Game, ref: Game) -> list:
    """The position's only card played both ways; the events, once held equal."""
    [code] = ref.reference_legal_codes()
    ref_events: list = []
    ref._play(code, ref_events)
    events = fast.apply(code)
    assert events == ref_events
    assert _state(fast) == _state(ref)
    _same_scores(ref.last_score, fast.last_score)
    return events


def test_the_fast_deal_end_takes_cappotto_like_the_reference() -> None:
    """Every coin captured by one side: the game ends at once, cappotto (a bool)."""
    coins = sum(1 << (4 * r) for r in range(10))  # suit 0 of each rank
    options = Options()
    fast, ref = _fast_and_reference(
        options,
        hands=[1 << 37, 0],  # KS: nothing to take
        table=1 << 5,
        captured=[coins, ALL_CARDS_MASK & ~coins & ~(1 << 37 | 1 << 5)],
        totals=[10, 12],
        last_taker=1,
    )
    events = _last_card_both(fast, ref)
    assert fast.winner == 0 and fast.cappotto is True and fast.deal_over
    assert [type(e).__name__ for e in events][-1] == "GameOver"


def test_the_fast_deal_end_of_a_deal_only_game_stops_there() -> None:
    options = Options()
    fast, ref = _fast_and_reference(
        options,
        hands=[1 << 37, 0],
        table=1 << 5,
        captured=[1, ALL_CARDS_MASK & ~(1 << 37 | 1 << 5 | 1)],  # no cappotto: AD is 0's
        last_taker=1,
        deal_only=True,
    )
    _last_card_both(fast, ref)
    assert fast.winner is None and fast.deal_over and fast.to_move is None
    assert fast.table == 0 and fast.captured[1] & 1 << 5  # the last taker takes the rest
    assert fast.legal_codes() == [] and fast.decks_used == []


def test_the_fast_deal_start_redeals_and_runs_out_of_decks_like_the_reference() -> None:
    """The next deck through DeckSource.next_deck: a redeal (two aces on the table) takes
    the next order; a missing order is the reference's DeckError."""
    aces_on_table = [*range(4, 10), 0, 1, 2, 3, *range(10, 40)]
    good = [*range(39, -1, -1)]
    setup: dict[str, Any] = {
        "hands": [1 << 37, 0],
        "table": 1 << 5,
        "captured": [1, ALL_CARDS_MASK & ~(1 << 37 | 1 << 5 | 1)],
        "last_taker": 1,
    }
    options = Options()
    fast, ref = _fast_and_reference(options, **setup)
    fast.deck_source = DeckSource(decks=[aces_on_table, good])
    ref.deck_source = DeckSource(decks=[aces_on_table, good])
    events = _last_card_both(fast, ref)
    assert [type(e).__name__ for e in events].count("Redeal") == 1
    assert fast.decks_used == [aces_on_table, good] and fast.deal_no == 2
    fast, ref = _fast_and_reference(options, **setup)
    fast.deck_source = DeckSource(decks=[aces_on_table])
    ref.deck_source = DeckSource(decks=[aces_on_table])
    with pytest.raises(DeckError, match="deal 2 needs deck order #2"):
        fast.apply(fast.legal_codes()[0])
    with pytest.raises(DeckError, match="deal 2 needs deck order #2"):
        ref._play(ref.reference_legal_codes()[0], [])
    assert _state(fast) == _state(ref) and fast.decks_used == ref.decks_used
    _same_scores(ref.last_score, fast.last_score)


@pytest.mark.parametrize("first_dealer", [None, 0, 2])
def test_the_first_deal_in_c_is_the_reference(first_dealer: int | None) -> None:
    """Game.__init__'s first deal (``_first_deal``, C) against ``_start_deal``: a redeal,
    the dealer's bonus, seeded and explicit decks, with and without events."""
    aces_on_table = [*range(4, 13), 0, 1, 2, 3, *range(13, 40)]  # 3 hands, then 4 aces
    table = [4, 8, 12, 20]  # 2 + 3 + 4 + 6 = 15: the dealer's scopa
    rest = [c for c in range(40) if c not in table]
    bonus = [*rest[:9], *table, *rest[9:]]
    options = Options(players=3)
    for source in ({"seed": 7}, {"seed": 2**90}, {"decks": [aces_on_table, bonus]}):
        ref_events: list = []
        fast_events: list = []
        ref = _Reference(options, **source, first_dealer=first_dealer, events=ref_events)
        fast = Game(options, **source, first_dealer=first_dealer, events=fast_events)
        assert fast_events == ref_events and _state(fast) == _state(ref)
        assert fast.decks_used == ref.decks_used
        quiet = Game(options, **source, first_dealer=first_dealer)
        assert _state(quiet) == _state(ref)
        if "decks" in source:
            assert [type(e) for e in fast_events].count(Redeal) == 1
            assert type(fast_events[-1]) is DealerBonus


def test_the_fast_deal_start_takes_any_deck_source() -> None:
    """A DeckSource of another class is asked for its decks through next_deck; what it
    returns must be a deck order."""

    class Reversed(DeckSource):
        def next_deck(self, deal_no: int) -> list[int]:
            return [*range(39, -1, -1)] if deal_no < 3 else [1, 2, 3]

    setup: dict[str, Any] = {
        "hands": [1 << 37, 0],
        "table": 1 << 5,
        "captured": [1, ALL_CARDS_MASK & ~(1 << 37 | 1 << 5 | 1)],
        "last_taker": 1,
    }
    fast, ref = _fast_and_reference(Options(), **setup)
    fast.deck_source = Reversed(seed=1)
    ref.deck_source = Reversed(seed=1)
    _last_card_both(fast, ref)
    assert fast.decks_used == [[*range(39, -1, -1)]]
    if native is not None:  # the C path checks what comes back (the reference trusts it)
        fast, _ = _fast_and_reference(Options(), **setup, deal_no=2)
        fast.deck_source = Reversed(seed=1)
        with pytest.raises(DeckError, match="40 cards"):
            fast.apply(fast.legal_codes()[0])


@pytest.mark.parametrize(
    "overrides",
    [
        {"target": 11, "piccola_max": 10, "cappotto": False},
        {"pairing_precedence": True, "must_capture": False, "players": 3},
        {"ace_sweep_scopa": False, "primiera_needs_all_suits": False, "players": 4},
    ],
)
def test_both_cores_agree_on_option_mixes(overrides: dict) -> None:
    assert native is not None
    options = Options(**overrides)
    for seed in range(6):
        _play_both(options, 1000 + seed)
    _play_both(options, 77, deal_only=True)


def test_native_declarations_match_the_reference_for_every_hand() -> None:
    """Every 3-card hand (the 7H's named values among them), and hands of other sizes."""
    assert native is not None
    for cards in combinations(range(40), 3):
        hand = sum(1 << c for c in cards)
        assert native.declaration_codes(hand) == declaration_codes(hand), cards
    for hand in (0, 1 << 25, 3, 0b1111, (1 << 25) | 0b110000):
        assert native.declaration_codes(hand) == declaration_codes(hand)


def test_native_positions_match_the_reference_at_every_table_size() -> None:
    """Captures and legal codes of random positions: tables of 0 to 10 cards (the compact
    paths for small tables and the general ones past them), the 7H named or not, pairing
    precedence and forced captures on and off, hands of 0 to 3 cards (declarations)."""
    assert native is not None
    rng = random.Random(38)
    games = {
        (must, pp): Game(Options(must_capture=must, pairing_precedence=pp), seed=1)
        for must in (False, True)
        for pp in (False, True)
    }
    for i in range(4000):
        size = i % 11
        cards = rng.sample(range(40), size + 3)
        if i % 3 == 0 and 25 not in cards:  # the 7H often, on the table or in the hand
            cards[rng.randrange(len(cards))] = 25
        table = sum(1 << c for c in cards[:size])
        hand = sum(1 << c for c in cards[size : size + rng.randrange(4)])
        wild = rng.choice((0, 0, rng.randrange(1, 11)))
        must, pp = rng.random() < 0.5, rng.random() < 0.5
        for v in range(1, 11):
            got = native.captures(table, v, wild, pp)
            assert got == legal_captures(table, v, wild, pp), (table, v, wild, pp)
        game = games[must, pp]
        game.hands[game.turn] = hand
        game.table, game.wild = table, wild
        expected = game.reference_legal_codes()
        assert native.legal_codes(hand, table, wild, must, pp) == expected, (hand, table, wild)


def test_native_deck_errors_name_the_deal() -> None:
    assert native is not None
    # cards 0..3 are the four aces; dealt after the six hand cards they form the table: redeal
    decks = [[*range(4, 10), 0, 1, 2, 3, *range(10, 40)]]
    with pytest.raises(ValueError, match="deal 1 needs deck order #2"):
        native.Game(options_tuple(Options()), decks)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_native_sampler_is_consistent_with_the_view(players: int) -> None:
    """Same guarantees as views.sample_world: the seat's knowledge is kept, all cards placed."""
    assert native is not None
    for game in deal_positions(players, players)[::3]:
        seat = game.turn
        view = game.view(seat)
        hands, stock = native.sample_world(options_tuple(view.options), view_tuple(view), 5)
        assert hands[seat] == view.hand
        assert len(stock) == view.stock
        seen = view.table
        for s, hand in enumerate(hands):
            assert hand & view.declared[s] == view.declared[s]
            assert hand.bit_count() == view.hand_sizes[s]
            assert not seen & hand
            seen |= hand
        for m in view.captured:
            seen |= m
        for c in stock:
            assert not seen >> c & 1
            seen |= 1 << c
        assert seen == ALL_CARDS_MASK
        # and the Python sampler agrees on what is fixed
        ref = sample_world(view, random.Random(5))
        assert ref.hands[seat] == hands[seat] and len(ref.stock) == len(stock)


def test_native_sampler_rejects_an_inconsistent_view() -> None:
    assert native is not None
    game = Game(Options(), seed=3, deal_only=True)
    view = game.view(game.turn)
    broken = list(view_tuple(view))
    broken[12] += 1  # one more stock card than there are unseen cards
    with pytest.raises(ValueError, match="view is inconsistent"):
        native.sample_world(options_tuple(view.options), tuple(broken), 1)


def _cirulla(*args: str, core: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CIRULLA_CORE"}
    if core is not None:
        env["CIRULLA_CORE"] = core
    return subprocess.run(
        [sys.executable, "-m", "cirulla", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def test_version_says_which_core_runs_and_the_variable_forces_python() -> None:
    assert "core: native" in _cirulla("--version").stdout
    assert "core: python" in _cirulla("--version", core="python").stdout


def test_asking_for_a_missing_native_core_is_one_clear_line() -> None:
    out = _cirulla("bench", "rules", "--core", "native", "--seconds", "0.1", core="python")
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "cirulla bench rules: the native rules core is not available: CIRULLA_CORE=python"
    )


def test_bench_rules_reports_both_cores_side_by_side() -> None:
    out = _cirulla("bench", "rules", "--seconds", "0.2")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report["cores"]) == {"native", "python"}
    assert all(run["deals"] > 0 for run in report["cores"].values())
    assert report["native_over_python"] > 0
    assert report["deck_isa"] == native.DECK_ISA  # the deck code that ran (figures)
    machine = report["machine"]  # the load the figures were measured under
    loads = machine["load_average_start"], machine["load_average_end"]
    assert machine["cpus"] >= 1 and min(loads) >= 0
    # each headline figure beside its baseline from the same run (docs/performance.md)
    figures = report["figures"]
    assert set(figures) == {"api", "search", "native", "native_listed"}
    assert figures["native_listed"]["deals_per_cpu_s"] == report["native_listed"]["deals_per_cpu_s"]
    assert "legal codes" in report["native_listed"]["loop"]
    assert figures["api"]["baseline_deals_per_cpu_s"] == report["api_before"]["deals_per_cpu_s"]
    assert (
        figures["native"]["baseline_deals_per_cpu_s"]
        == report["cores"]["python"]["deals_per_cpu_s"]
    )
    assert all(figure["ratio"] > 0 for figure in figures.values())
    assert report["search"]["deals"] > 0 and report["api_before"]["deals"] > 0
    # the api program's ceiling: the same loop on a game doing no rules work, as many
    # actions to a deal as the real games played
    floor, api = report["api_floor"], report["api"]
    assert floor["deals_per_cpu_s"] > api["deals_per_cpu_s"]
    assert floor["actions"] == floor["deals"] * round(api["actions"] / api["deals"])
    assert figures["api"]["floor_deals_per_cpu_s"] == floor["deals_per_cpu_s"]
    assert figures["api"]["reachable_ratio"] == round(
        floor["deals_per_cpu_s"] / report["api_before"]["deals_per_cpu_s"], 1
    )


def test_the_floor_game_does_no_rules_work_but_ends_its_deals() -> None:
    """``native.FloorGame``, the stand-in the ``api_floor`` loop plays: a fresh copy of its
    list each time (as ``legal_actions`` promises), a deal every ``per_deal`` actions."""
    assert native is not None
    actions = Game(Options(), seed=3).legal_actions()
    floor = native.FloorGame(actions, 3)
    first = floor.legal_actions()
    assert first == actions and first is not actions and first is not floor.legal_actions()
    assert (floor.deal_no, floor.winner) == (1, None)
    for _ in range(7):
        floor.apply(actions[0])
    assert floor.deal_no == 3
    with pytest.raises(ValueError, match="per_deal must be at least 1"):
        native.FloorGame(actions, 0)


def test_the_api_baseline_runs_the_paths_before_and_restores_them() -> None:
    """``api_before`` (the figure's baseline) deals and shuffles in Python, as the API did
    before the deal moved into C, with the dataclasses' event constructors; the fast
    paths are back once it has run."""
    assert native is not None
    fast_deck, fast_card = decks_module._native_decks, _CardPlayed
    with _paths_before():
        assert decks_module._native_decks is None
        assert game_module._CardPlayed is CardPlayed
        game = PythonStateGame(Options(), seed=9)
        assert game.decks_used == [seeded_deck(9, 1)]
    # its games keep the state in Python slots, every method in Python
    assert not isinstance(game, native.GameState) and not isinstance(game, Game)
    baseline = type(game).__dict__
    assert baseline["_first_deal"] is Game._start_deal and baseline["apply_code"] is Game._play
    assert baseline["legal_codes"] is not Game.legal_codes
    assert decks_module._native_decks is fast_deck and game_module._CardPlayed is fast_card
    report = bench_api_before(Options(), 0.05)
    assert report["deals"] > 0 and decks_module._native_decks is fast_deck

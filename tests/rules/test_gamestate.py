"""The game's state in C (``native.GameState``, gamestate.h), its events made when read
(``native.Events``, eventlist.h) and its seeded decks shuffled several at a time: each test
names what could go wrong with one of those shortcuts. The differential tests
(test_native.py) hold the games themselves to the Python reference."""

from __future__ import annotations

import copy
import pickle
import platform
import random
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cirulla.rules import Game, IllegalActionError, Options
from cirulla.rules.bench import PythonStateGame
from cirulla.rules.core import native
from cirulla.rules.decks import DeckSource, seeded_deck
from cirulla.rules.events import CardPlayed

pytestmark = pytest.mark.skipif(native is None, reason="the native core is not built")


def _random_game(seed: int, moves: int) -> Game:
    game, rng = Game(Options(), seed=seed), random.Random(seed)
    for _ in range(moves):
        if game.winner is not None:
            break
        game.apply(rng.choice(game.legal_actions()))
    return game


def test_a_zone_list_is_current_whenever_read_through_the_game() -> None:
    """A zone read again after a move is the same list, brought up to date; one edited in
    place is what the next move plays from."""
    game = Game(Options(), seed=3)
    hands = game.hands
    mover = game.turn
    action = game.legal_actions()[0]
    game.apply(action)
    assert game.hands is hands  # the same list, written in place when read again
    assert hands[mover] == game.copy().hands[mover] and not hands[mover] >> action.card & 1
    stock = game.stock
    top = stock.pop()  # edited in place: the game deals from what is left
    assert len(game.stock) == len(stock) and top not in game.stock
    game.stock.append(top)
    game.hands[game.turn] = 0  # the mover has nothing: nothing to play
    assert game.legal_codes() == [] and game.reference_legal_codes() == []


def test_events_are_an_immutable_sequence_made_when_read() -> None:
    """apply's events equal the Python reference's, whole games long, read any way."""
    rng = random.Random(5)
    fast, ref = Game(Options(), seed=5), PythonStateGame(Options(), seed=5)
    moves = 0
    while fast.winner is None:
        codes = fast.legal_codes()
        assert codes == ref.legal_codes()
        code = rng.choice(codes)
        events = fast.apply(code)
        expected = ref.apply(code)
        assert isinstance(events, native.Events) and isinstance(events, Sequence)
        assert len(events) == len(expected)  # counted before the objects are made
        assert events == expected and expected == events and list(events) == expected
        assert events[0] is events[0] and events[-1] == expected[-1]
        assert events[1:] == expected[1:] and isinstance(events[1:], list)
        assert events + [1] == [*expected, 1]  # noqa: RUF005 (Events' own +, both sides)
        assert [1] + events == [1, *expected]  # noqa: RUF005
        assert repr(events) == repr(expected) and events.count(expected[0]) >= 1
        assert pickle.loads(pickle.dumps(events)) == expected
        assert copy.copy(events) == expected
        moves += 1
    assert moves > 30 and fast.totals == ref.totals and fast.history == ref.history
    with pytest.raises(TypeError):
        hash(events)
    with pytest.raises(AttributeError):
        events.append(0)  # type: ignore[attr-defined]


def test_events_not_read_cost_nothing_but_stay_right() -> None:
    """An Events kept unread while the game moves on still makes the move's own events."""
    game = Game(Options(), seed=8)
    kept = [game.apply(game.legal_actions()[0]) for _ in range(6)]
    for events in kept:
        assert isinstance(events[0], CardPlayed)
    assert [e[0].seat for e in kept] == [s for s, _ in game.history]


@pytest.mark.parametrize("seed", [0, 1, -5, 123456789, 2**64 + 3, 2**200 + 7])
def test_decks_shuffled_side_by_side_are_the_seeded_decks(seed: int) -> None:
    """With every instruction set this processor runs (the module's own choice first)."""
    assert native is not None
    for isa in dict.fromkeys((native.DECK_ISA, "baseline")):
        for first in (1, 7, 100):
            for count in (1, 3, 8):
                got = native.seeded_decks(seed, first, count, isa)
                want = b"".join(bytes(seeded_deck(seed, first + k)) for k in range(count))
                assert got == want, (isa, first, count)
    with pytest.raises(ValueError, match="a count of 1 to 8"):
        native.seeded_decks(seed, 1, 9)
    with pytest.raises(ValueError, match="isa sse9 is not one this processor runs"):
        native.seeded_decks(seed, 1, 1, "sse9")


def test_the_deck_code_for_avx2_and_sha_runs_where_the_processor_has_them() -> None:
    """A build for x86-64 carries the deck code for AVX2 and for the SHA extensions and
    picks what the processor has (the faster: docs/performance-log.md)."""
    assert native is not None
    cpuinfo = Path("/proc/cpuinfo")
    flags = re.search(r"^flags\s*:(.*)$", cpuinfo.read_text(), re.M) if cpuinfo.exists() else None
    have = set(flags.group(1).split()) if flags and platform.machine() == "x86_64" else set()
    names = [name for name, flag in (("avx2", "avx2"), ("sha", "sha_ni")) if flag in have]
    expected = "+".join(names) or "baseline"
    assert expected == native.DECK_ISA


def test_a_deck_source_shared_by_games_deals_its_decks_in_order() -> None:
    """Games dealing in turn from one seeded source (a match), the Python next_deck asked
    in between: every deck is the next number's, kept decks or not."""
    source = DeckSource(seed=42)
    first = Game(Options(), deck_source=source)
    assert source._ahead  # the native game shuffled decks ahead
    python_deck = source.next_deck(99)  # the Python way, in between: deck 2
    second = Game(Options(), deck_source=source)
    played = [*first.decks_used, python_deck, *second.decks_used]
    assert played == [seeded_deck(42, k) for k in range(1, len(played) + 1)]
    rng = random.Random(1)
    while second.winner is None:
        second.apply(rng.choice(second.legal_codes()))
    used = [seeded_deck(42, k) for k in range(3, 3 + len(second.decks_used))]
    assert second.decks_used == used and len(used) > 4


def test_copies_are_independent_and_deepcopy_copies_the_deck_source() -> None:
    game = _random_game(11, 20)
    clone, deep = game.copy(history=True), copy.deepcopy(game)
    assert deep.deck_source is not game.deck_source and clone.deck_source is game.deck_source
    for other in (clone, deep):
        assert repr(other) == repr(game) and other.history == game.history
        assert other.decks_used == game.decks_used and other.decks_used is not game.decks_used
    before = repr(game), list(game.hands), game.deck_source._next
    rng = random.Random(2)
    while deep.winner is None:  # plays on, deals from its own copy of the source
        deep.apply(rng.choice(deep.legal_actions()))
    assert (repr(game), game.hands, game.deck_source._next) == before


def test_deal_no_and_winner_assigned_by_hand_are_the_game_s() -> None:
    game = Game(Options(), seed=4)
    game.deal_no = 7
    assert game.legal_codes()
    game.winner = 1
    assert game.legal_codes() == [] and game.to_move is None
    with pytest.raises(Exception, match="the game is over"):
        game.apply(0)
    game.winner = None
    assert game.legal_codes() and game.deal_no == 7


def test_counts_read_without_the_lists_and_zones_rewritten_only_when_changed() -> None:
    """stock_count and hand_sizes() are the lists' lengths and popcounts; a zone a move did
    not change keeps its list's items as they were, and an edit in place is still played."""
    game, rng = Game(Options(), seed=9), random.Random(9)
    while game.winner is None:
        assert game.stock_count == len(game.stock)
        assert game.hand_sizes() == tuple(h.bit_count() for h in game.hands)
        totals = game.totals
        before = list(totals)
        deal = game.deal_no
        game.apply(rng.choice(game.legal_codes()))
        if game.deal_no == deal and game.winner is None:
            assert game.totals is totals and totals == before  # no deal scored: untouched
    edited = Game(Options(), seed=9)
    scope = edited.scope
    edited.apply(edited.legal_codes()[0])
    edited.scope[0] += 7  # read again, edited in place: the next move plays from it
    edited.apply(edited.legal_codes()[0])
    assert edited.scope is scope and scope[0] >= 7
    assert edited.copy().scope[0] == scope[0]


_FIELDS = ("turn", "dealer", "round", "in_hands", "last_taker", "wild", "table", "deal_no")
_ZONES = ("hands", "captured", "declared", "scope", "totals", "stock")
_ANY_INT = st.one_of(
    st.integers(-3, 45), st.integers(-(2**70), 2**70), st.sampled_from([1 << 39, 1 << 40])
)
_JUNK = st.one_of(_ANY_INT, st.none(), st.text(max_size=3), st.booleans(), st.floats())
_STEP = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(_FIELDS), _JUNK),
    st.tuples(st.just("zone"), st.sampled_from(_ZONES), st.lists(_JUNK, max_size=44)),
    st.tuples(st.just("edit"), st.sampled_from(_ZONES), _ANY_INT),
    st.tuples(st.just("winner"), st.sampled_from([None, 0, 1, 2, -1, "x"]), st.none()),
    st.tuples(st.just("play"), st.integers(0, 200), st.booleans()),
    st.tuples(st.just("code"), _ANY_INT, st.none()),
    st.tuples(st.just("read"), st.sampled_from(_ZONES), st.none()),
)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.lists(_STEP, max_size=40))
def test_any_state_assigned_is_refused_in_one_line_or_played_never_a_crash(
    seed: int, steps: list[tuple[str, object, object]]
) -> None:
    """The C state takes whatever Python assigns: nonsense is a ValueError or TypeError (or
    the rules' own error) naming what is wrong, and the process never crashes or reads
    outside the state, whatever the order of assignments, in-place edits and moves."""
    game = Game(Options(), seed=seed)
    refused = (ValueError, TypeError, IndexError, AttributeError, OverflowError)
    for kind, what, value in steps:
        try:
            if kind == "set" or kind == "zone":
                setattr(game, str(what), value)
            elif kind == "edit":
                zone = getattr(game, str(what))
                if zone:
                    zone[0] = value
            elif kind == "winner":
                game.winner = what  # type: ignore[assignment]
            elif kind == "read":
                list(getattr(game, str(what)))
            elif kind == "play":
                legal = game.legal_actions()
                if legal:
                    pick = legal[int(str(what)) % len(legal)]
                    events = game.apply(pick) if value else game.apply(pick.to_int())
                    list(events)
            else:
                game.apply_code(int(str(what)))
        except refused as exc:
            assert "\n" not in str(exc), str(exc)
        except IllegalActionError:
            pass
        # the state can still be shown and copied, or says in one line what is wrong
        for look in (repr, Game.copy):
            try:
                look(game)
            except refused as exc:
                assert "\n" not in str(exc), str(exc)

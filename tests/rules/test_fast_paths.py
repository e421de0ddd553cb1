"""The Python API's fast paths give the same answers as the long way round.

``Game`` keeps the legal codes and actions of the position to move (keyed by the mover's
hand, the table and the wild value), shares one immutable ``Action`` per code, lets
``apply`` check a move against the position's own list, copies slot by slot, and builds
its events through ``core.fast_constructor``. Each test here names what could go stale or
wrong if one of those shortcuts were taken carelessly.
"""

from __future__ import annotations

import gc
import random

import pytest

import cirulla.rules.actions as actions_module
from cirulla.rules import Action, Game, IllegalActionError, Options
from cirulla.rules.actions import Declaration, decode
from cirulla.rules.core import fast_constructor, native
from cirulla.rules.events import CardPlayed, Declared, HandDealt
from cirulla.rules.state import FIELDS


def test_legal_actions_follow_a_position_changed_by_hand() -> None:
    """The cache is keyed by what the answer depends on: editing the zones directly (as
    the hiding tests and the inference do) is never answered from the old position."""
    game = Game(Options(), seed=5)
    first = game.legal_codes()
    other = 1 - game.turn
    game.hands[game.turn], game.hands[other] = game.hands[other], game.hands[game.turn]
    assert game.legal_codes() == game.reference_legal_codes()
    assert game.legal_codes() != first
    game.table ^= game.table & -game.table  # one card fewer on the table
    assert game.legal_codes() == game.reference_legal_codes()
    assert [a.to_int() for a in game.legal_actions()] == game.reference_legal_codes()


def test_legal_lists_are_the_callers_and_actions_are_shared() -> None:
    game = Game(Options(), seed=5)
    codes, actions = game.legal_codes(), game.legal_actions()
    codes.clear()
    actions.reverse()
    assert game.legal_codes() and [a.to_int() for a in game.legal_actions()] == game.legal_codes()
    again = game.legal_actions()
    assert all(a is b for a, b in zip(reversed(actions), again, strict=True))
    assert all(a is Action.from_int(a.to_int()) for a in again)
    with pytest.raises(AttributeError):
        again[0].card = 3  # type: ignore[misc]


def _shared_actions_held() -> tuple[int, int]:
    """(codes held, the most held) of the core that runs."""
    if native is not None:
        return native.action_table()
    return len(actions_module._INTERNED), actions_module._INTERNED_LIMIT


def _forget_shared_actions() -> None:
    """Empty the table of shared actions of the core that runs."""
    if native is not None:
        native.action_table(True)
    else:
        actions_module._INTERNED.clear()


def test_the_shared_actions_are_bounded_and_stay_one_per_code_when_emptied() -> None:
    """``Action.from_int`` and ``legal_actions`` hand out the same object per code from one
    table (the native core's where it runs, ``actions._INTERNED`` otherwise); the table
    is bounded (emptied when full: servers and bots run for days), and after it is
    emptied both hand out the same new objects again."""
    game = Game(Options(), seed=5)
    legal = game.legal_actions()
    assert all(a is Action.from_int(a.to_int()) for a in legal)
    held, limit = _shared_actions_held()
    assert 0 < held <= limit
    # new codes until the table is emptied (at most its size): the two of clubs capturing
    # other cards (some may be in it already, met in play)
    for k in range(1, limit + 2):
        assert Action.from_int(k << 13).capture == k << 1
        now, _ = _shared_actions_held()
        if now < held:
            break
        held = now
    assert now == 1  # emptied once full, then the code that did not fit
    fresh = [Action.from_int(a.to_int()) for a in legal]
    assert all(f is not a and f == a for f, a in zip(fresh, legal, strict=True))
    game._legal = None  # the position's list built again, its actions looked up
    assert all(a is f for a, f in zip(game.legal_actions(), fresh, strict=True))
    _forget_shared_actions()
    assert all(a is f for a, f in zip(game.legal_actions(), fresh, strict=True))  # kept
    game._legal = None
    again = game.legal_actions()
    assert all(a is not f and a == f for a, f in zip(again, fresh, strict=True))
    assert all(a is Action.from_int(a.to_int()) for a in again)


def test_actions_built_in_c_are_the_dataclass_ones() -> None:
    """``legal_actions`` builds the Action of a new code itself (_native.c's
    ``new_action``): the same fields, text, hash and code as the validated dataclass,
    declarations included, shared with ``Action.from_int``."""
    rng = random.Random(11)
    _forget_shared_actions()
    game = Game(Options(), seed=11)
    declared = 0
    for step in range(300):
        if game.winner is not None:
            game = Game(Options(), seed=step)
        legal = game.legal_actions()
        for action in legal:
            card, decl, capture = decode(action.to_int())
            slow = Action(card, capture, Declaration.from_code(decl))
            assert action == slow and hash(action) == hash(slow)
            assert (str(action), repr(action), action.to_int()) == (
                str(slow),
                repr(slow),
                slow.to_int(),
            )
            assert type(action) is Action and action.declaration == slow.declaration
            assert Action.from_int(action.to_int()) is action
            # immutable, no cycle through it: the collector never walks the shared ones
            assert native is None or not gc.is_tracked(action)
            declared += decl != 0
        game.apply(rng.choice(legal))
    assert declared > 10


def test_from_int_checks_a_new_code_as_the_constructor_does() -> None:
    """A code nobody has met goes through ``Action``'s own checks, on either core: the
    same errors as the long way, and nothing is shared for a code refused."""
    for code, error in ((63, "card index 63"), (-1, "not a valid DeclarationKind")):
        with pytest.raises(ValueError, match=error):
            Action.from_int(code)
    with pytest.raises(ValueError, match="bits beyond 40 cards"):
        Action.from_int(2**70)
    assert Action.from_int(5) is Action.from_int(5) == Action(5, 0, None)


def test_an_action_from_an_earlier_position_is_checked_again() -> None:
    """``apply`` trusts only the codes of the position to move: a move that was legal a
    turn ago is refused once it is not."""
    rng = random.Random(3)
    refused = 0
    for seed in range(20):
        game = Game(Options(), seed=seed)
        for _ in range(30):
            legal = game.legal_actions()
            old = rng.choice(legal)
            game.apply(rng.choice(legal))
            if game.winner is not None:
                break
            if old.to_int() not in game.reference_legal_codes():
                with pytest.raises(IllegalActionError):
                    game.apply(old)
                refused += 1
    assert refused > 50


def test_an_action_built_by_hand_equals_the_shared_one() -> None:
    game = Game(Options(), seed=9)
    for action in game.legal_actions():
        rebuilt = Action.parse(str(action))
        assert rebuilt == action and hash(rebuilt) == hash(action)
        assert rebuilt.to_int() == action.to_int()
        assert game.is_legal(rebuilt)


def test_copy_sets_every_slot() -> None:
    """copy() spells the slots out: a slot added to Game but not to copy() fails here."""
    game = Game(Options(), seed=2)
    game.apply(game.legal_actions()[0])
    for history in (False, True):
        clone = game.copy(history=history)
        for name in FIELDS:
            mine, theirs = getattr(game, name), getattr(clone, name)
            if name in ("history", "decks_used") and not history:
                assert theirs == []
            else:
                assert theirs == mine, name
            if isinstance(mine, list) and mine:
                assert theirs is not mine, f"{name} is shared between the copies"
        clone.hands[clone.turn] = 0  # a copy's zones are its own, in C too
        assert game.hands[game.turn] and not clone.hands[clone.turn]
        assert clone.legal_codes() == [] and game.legal_codes()
    assert game.copy(deal_only=True).deal_only and not game.deal_only


@pytest.mark.skipif(native is None, reason="the native core builds the fast constructors")
def test_fast_events_are_the_dataclasses() -> None:
    make = fast_constructor(CardPlayed)
    fast, slow = (
        make(0, 1, 5, 3, 1 << 33, False, True),
        CardPlayed(0, 1, 5, 3, 1 << 33, False, True),
    )
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert fast.to_dict() == slow.to_dict() and type(fast) is CardPlayed
    with pytest.raises(AttributeError):
        fast.seat = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes 3 positional arguments"):
        fast_constructor(HandDealt)(0, 1)
    assert fast_constructor(Declared) is not Declared
    with pytest.raises(ValueError, match="not an object slot"):
        native.frozen_maker(CardPlayed, ("seat", "nope"))


def test_apply_explains_every_refusal_as_before() -> None:
    """The C ``apply`` plays only a legal move of the seat to move; everything else reaches
    the Python method, which names the rule, and changes nothing."""
    game = Game(Options.preset("standard", players=2), seed=7)
    before = repr(game)
    with pytest.raises(IllegalActionError, match="must capture") as caught:
        game.apply(Action.parse("7D"))
    assert caught.value.rule == "must_capture"
    with pytest.raises(IllegalActionError, match="it is seat 0's turn, not seat 1's"):
        game.apply(game.legal_actions()[0], 1)
    with pytest.raises(IllegalActionError, match="not in seat 0's hand"):
        game.apply(Action.parse("KD"), seat=0)
    assert repr(game) == before and game.history == []
    [event] = game.apply("7D:JC", seat=0)  # text, and the seat by keyword
    assert game.history == [(0, Action.parse("7D:JC").to_int())]
    assert event.captured == Action.parse("7D:JC").capture


def test_apply_on_a_finished_game_names_the_rule() -> None:
    game = Game(Options(target=1), seed=4)
    while game.winner is None:
        game.apply(game.legal_actions()[-1])
    assert game.legal_actions() == [] and game.legal_codes() == []
    with pytest.raises(IllegalActionError) as caught:
        game.apply(0)
    assert caught.value.rule == "game_over"


def test_broken_slots_are_an_error_not_a_crash() -> None:
    """The state is checked where it is set: nonsense there is a one-line ValueError naming
    the field (at the assignment, or at the next move for a zone's list), never a crash."""
    assert native is not None
    game = Game(Options(), seed=1)
    before = repr(game)
    with pytest.raises(ValueError, match=r"Game\.turn is 9: out of range"):
        game.turn = 9
    assert repr(game) == before
    game.hands = [1, 2, 3]
    with pytest.raises(ValueError, match=r"Game\.hands has 3 entries: it needs one per seat"):
        game.legal_actions()
    game.hands = [1, "two"]  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"Game.hands\[1\] is 'two': not a card mask"):
        game.apply(0)
    game.hands = [1, 2]
    game.stock = [3, 41]
    with pytest.raises(ValueError, match=r"Game.stock\[1\] is 41: not a card index 0-39"):
        game.apply_code(0)
    with pytest.raises(ValueError, match=r"Game\.last_taker is 2: out of range"):
        game.last_taker = 2  # two players: sides 0 and 1 (or -1, nobody)
    short = Game(Options(), seed=1)
    short.stock = [5]
    short.in_hands = 1  # the round's last card: the next round would need 6 cards
    with pytest.raises(ValueError, match=r"Game\.stock has 1 cards: a round deals 6"):
        short.apply_code(short.legal_codes()[0])
    with pytest.raises(ValueError, match=r"Game\.stock has 1 cards: a round deals 6"):
        short.apply(short.legal_actions()[0])
    assert short.history == [] and short.in_hands == 1  # nothing changed
    game.winner = "me"  # type: ignore[assignment]
    with pytest.raises(ValueError, match=r"Game\.winner is 'me': not a side or None"):
        game.legal_codes()


def test_each_list_of_a_position_answers_for_the_other() -> None:
    """The position's entry holds the list its first caller asked for (``legal_actions``:
    the actions, no code ints; ``legal_codes``: the codes); the other list, ``is_legal``
    and ``apply`` by code or by an equal action built apart are answered from it."""
    for first in ("actions", "codes"):
        game, twin = Game(Options(), seed=11), Game(Options(), seed=11)
        for step in range(60):
            if game.winner is not None:
                break
            if first == "actions":
                actions = game.legal_actions()
                codes = game.legal_codes()
            else:
                codes = game.legal_codes()
                actions = game.legal_actions()
            assert codes == twin.reference_legal_codes() == [a.to_int() for a in actions]
            assert all(game.is_legal(a) and game.is_legal(a.to_int()) for a in actions)
            assert not game.is_legal(max(codes) + (1 << 45))
            pick = step % len(codes)
            move: Action | int = codes[pick] if step % 3 == 0 else actions[pick]
            if step % 3 == 1:
                move = Action.parse(str(actions[pick]))  # equal, maybe not the shared object
            assert game.apply(move) == twin.apply(codes[pick])
        assert game.history == twin.history and repr(game) == repr(twin)

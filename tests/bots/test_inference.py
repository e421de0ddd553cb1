"""Opponent-hand inference in the determinization (cirulla.bots.inference, the native core)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

import pytest

from cirulla.bots.compiled import search_native as native
from cirulla.bots.inference import (
    Evidence,
    PlayTracker,
    sample_consistent,
    violations,
)
from cirulla.bots.mcts import SearchConfig, search
from cirulla.bots.mcts_policy import MctsPolicy
from cirulla.bots.specs import make_policy
from cirulla.rules import Game, Options, parse_cards, parse_mask
from cirulla.rules.actions import declaration_codes
from cirulla.rules.cards import cards_of
from cirulla.rules.core import options_tuple, view_tuple
from tests.rules_helpers import deal_positions

SEEN = "KS 2C 3C 4C QH 4D JS"  # table, both hands
NEVER_CAPTURE = "4D 4S 6D 6H 7C 7S JD JH QD QC QS"  # 4, 6, 7, J, Q on KS 2C


def dropped_on_a_table_it_could_take(
    positions: bool = False,
) -> tuple[Game, PlayTracker, tuple[Evidence, ...]]:
    """Seat 1 drops QH on KS 2C, its first card of the round, after seat 0 dropped 2C.

    Every ace would have swept that table and every 3 taken it with a 15 (a scopa either
    way), so seat 1's two hidden cards are unlikely to be aces or threes; QH with two more
    queens would have been a declaration (three of a kind), so not two queens either.
    """
    hands = [parse_mask("2C 3C 4C"), parse_mask("QH 4D JS")]
    table = parse_mask("KS")
    captured = [parse_mask("AC 5C 6C"), 0]  # earlier captures: the stock deals whole rounds
    used = hands[0] | hands[1] | table | captured[0]
    stock = [c for c in range(40) if not used >> c & 1]
    game = Game.setup(
        Options(), hands=hands, table=table, stock=stock, captured=captured, turn=0, dealer=1
    )
    tracker = PlayTracker(positions=positions)
    assert tracker.evidence(game.view(0)) == ()
    mine = parse_cards("2C")[0]
    assert mine in game.reference_legal_codes()  # a drop's code is its card
    tracker.played(mine)
    game.apply_code(mine)
    theirs = parse_cards("QH")[0]
    assert theirs in game.reference_legal_codes()
    game.apply_code(theirs)
    return game, tracker, tracker.evidence(game.view(0))


def test_a_drop_next_to_a_capture_is_evidence_against_the_cards_that_capture() -> None:
    _, _, evidence = dropped_on_a_table_it_could_take()
    assert len(evidence) == 1
    e = evidence[0]
    assert e.seat == 1
    assert e.declare  # its first card of the round, and it did not declare
    assert e.extra == parse_mask("QH")
    assert parse_mask("AD AH AS 3D 3H 3S") & ~e.bad == 0  # the sweeps it left
    assert parse_mask(NEVER_CAPTURE) & e.bad == 0  # cards that take nothing there


@pytest.mark.parametrize("core", ["python", "native"])
def test_with_certain_rejection_no_world_gives_a_hand_the_drop_contradicts(core: str) -> None:
    game, _, evidence = dropped_on_a_table_it_could_take()
    view = game.view(0)
    e = evidence[0]
    seen_contradicting = 0
    for seed in range(150):
        for infer in (0.0, 1.0):
            if core == "python":
                world = sample_consistent(view, random.Random(seed), evidence, infer, 2000)
                hidden = world.hands[1]
            else:
                assert native is not None
                hands, _ = native.sample_world(
                    options_tuple(view.options),
                    view_tuple(view),
                    seed,
                    [x.as_tuple() for x in evidence],
                    infer,
                    2000,
                )
                hidden = hands[1]
            contradicts = bool(hidden & e.bad) or bool(declaration_codes(hidden | e.extra))
            if infer == 1.0:
                assert not contradicts, cards_of(hidden)
            else:
                seen_contradicting += contradicts
    assert seen_contradicting > 50  # without inference, most worlds contradict the drop


def test_both_cores_count_the_same_contradictions() -> None:
    assert native is not None
    rng = random.Random(5)
    checked = 0
    for seed in range(4):
        for game in deal_positions(2, seed):
            view = game.view(game.turn)
            world = sample_consistent(view, rng, (), 0.0)
            hands, declared = world.hands, world.declared
            evidence = [
                Evidence(
                    rng.randrange(2),
                    rng.getrandbits(40) & rng.getrandbits(40),
                    sum(1 << c for c in rng.sample(range(40), rng.randrange(1, 3))),
                    rng.random() < 0.5,
                )
                for _ in range(rng.randrange(1, 4))
            ]
            expected = violations(hands, declared, evidence)
            got = native.violations(hands, declared, [e.as_tuple() for e in evidence])
            assert got == expected
            checked += expected > 0
    assert checked > 10


def test_no_evidence_beyond_two_players_or_across_deals() -> None:
    tracker = PlayTracker()
    for game in deal_positions(3, 2):
        assert tracker.evidence(game.view(game.turn)) == ()
    game, tracker, evidence = dropped_on_a_table_it_could_take()
    assert evidence
    view = game.view(0)
    assert tracker.evidence(replace(view, deal=view.deal + 1)) == ()  # a new deal: forgotten


@pytest.mark.parametrize("core", ["python", "native"])
def test_search_with_inference_plays_its_budget(core: str) -> None:
    game, _, evidence = dropped_on_a_table_it_could_take()
    view = game.view(0)
    result = search(view, 2, SearchConfig(iterations=60, core=core, infer=1.0), evidence=evidence)
    assert result.iterations == 60
    assert set(result.visits) <= set(game.reference_legal_codes())


def against_greedy(mcts: MctsPolicy) -> Iterator[Game]:
    """A real deal, ``mcts`` in seat 0 against greedy: the game after each of mcts's
    decisions, before its move is applied (greedy's true hand still as it was)."""
    game = Game(Options(), seed=4, deal_only=True)
    greedy = make_policy("greedy", {})
    while not game.deal_over:
        seat = game.to_move
        legal = game.legal_actions()
        policy = mcts if seat == 0 else greedy
        index = policy.choose(game.view(seat), legal, None)
        assert isinstance(index, int)
        if seat == 0:
            yield game
        game.apply(legal[index], seat)


def test_the_policy_gathers_evidence_from_a_real_deal_against_greedy() -> None:
    """Seat 0's mcts follows greedy's plays between its own decisions; a deal gives it
    evidence at some decisions, and greedy's true hand rarely contradicts it."""
    mcts = MctsPolicy(seed=1, iterations=40)
    with_evidence = contradicted = 0
    for game in against_greedy(mcts):
        if mcts.last_evidence:
            with_evidence += 1
            contradicted += violations(game.hands, game.declared, mcts.last_evidence) > 0
    assert with_evidence >= 3
    assert contradicted <= with_evidence // 2

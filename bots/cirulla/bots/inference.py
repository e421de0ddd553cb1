"""What an opponent's plays in this round say about the cards it still holds.

A uniformly sampled world ignores that opponents play sensibly: an opponent that dropped a
card on a table it could have taken from with another card it held, or that played its
first card of the round without declaring, probably did not hold those cards. ISMCTS
(``mcts.search``, option ``infer``) therefore rejects, with probability ``infer`` per
contradicted observation, a sampled world whose hidden hands make an observed play
unlikely under a greedy-like model, and samples again (at most ``INFER_TRIES`` worlds).

Only the current round matters: a hand is dealt afresh each round, so a play of an
earlier round says nothing about the cards held now. Each observation is reduced here,
once per decision, to plain masks that both search loops (Python and native) check the
same way:

* ``bad``: the cards that would have given the opponent a capture worth clearly more
  (``INFER_MARGIN``) than the play it made, on the table it faced (static card worth, a
  sweep counts a scopa). A world whose sampled hidden hand of that seat holds any of them
  contradicts the observation.
* ``declare``: the play was the seat's first of the round, without declaring; ``extra``
  holds the cards the seat has played since the round began. A world where the sampled
  hidden hand plus ``extra`` makes a declarable hand contradicts it.

An observation that the opponent's known cards (the card played, cards it played later
in the round, its declared cards) already contradict is dropped: that opponent does not
play like the model there, so the observation says nothing about its hidden cards.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import TYPE_CHECKING

from cirulla.bots.heuristic import SCOPA_POINT, STATIC_WORTH, best_index, static_worth
from cirulla.bots.search_defaults import DEFAULT_INFER as DEFAULT_INFER
from cirulla.rules.actions import declaration_codes, decode, encode
from cirulla.rules.captures import captures_by_value
from cirulla.rules.cards import NUM_CARDS, VALUES, WILD, cards_of, mask_of
from cirulla.rules.game import Game
from cirulla.rules.views import NO_HANDS, View, sample_world

if TYPE_CHECKING:  # NumPy is an extra, imported where the belief is computed
    import numpy as np
    import numpy.typing as npt

INFER_MARGIN = 0.25  # a better capture must beat the play by this much (deal points)
INFER_TRIES = 50  # worlds sampled at most per determinization; the last one is kept
REPLAY_TRIES = 200  # hands sampled per decision for the "replay" posterior


@dataclass(frozen=True, slots=True)
class Evidence:
    """One observed play of ``seat``, reduced to what a sampled hand can contradict."""

    seat: int
    bad: int  # hidden cards that would have captured clearly better
    extra: int  # cards played this round from that hand (for the declaration check)
    declare: bool  # first play of the round, not a declaration

    def as_tuple(self) -> tuple[int, int, int, int]:
        """What the native search takes: ``(seat, bad, extra, declare)``."""
        return (self.seat, self.bad, self.extra, int(self.declare))


def play_gain(table: int, card: int, capture: int) -> float:
    """Static worth of a play, as the model weighs it: what it takes (a sweep adds a
    scopa), or minus the card's worth when it stays on the table."""
    if capture:
        return static_worth(capture | 1 << card) + (SCOPA_POINT if capture == table else 0.0)
    return -STATIC_WORTH[card]


def better_cards(table: int, wild: int, pairing_precedence: bool, gain: float) -> int:
    """Cards whose best capture on ``table`` is worth more than ``gain + INFER_MARGIN``."""
    caps = captures_by_value(table, wild, pairing_precedence)
    bad = 0
    for card in range(NUM_CARDS):
        value = wild if card == WILD and wild else VALUES[card]
        for m in caps[value]:
            if play_gain(table, card, m) > gain + INFER_MARGIN:
                bad |= 1 << card
                break
    return bad


def violations(hands: Sequence[int], declared: Sequence[int], evidence: Sequence[Evidence]) -> int:
    """How many observations a world's hands contradict (hidden part: not declared)."""
    k = 0
    for e in evidence:
        hidden = hands[e.seat] & ~declared[e.seat]
        if hidden & e.bad or (e.declare and declaration_codes(hidden | e.extra)):
            k += 1
    return k


def sample_consistent(
    view: View,
    rng: random.Random,
    evidence: Sequence[Evidence],
    infer: float,
    tries: int = INFER_TRIES,
    hands: tuple[int, Sequence[int]] = NO_HANDS,
) -> Game:
    """``sample_world``, rejecting each contradicted observation with probability ``infer``
    (at most ``tries`` samples; the last is kept). With candidate ``hands`` of a seat (the
    ``replay`` posterior): one of them for that seat, and no rejection."""
    if hands[1]:
        return sample_world(view, rng, hidden=hands)
    world = sample_world(view, rng, deal_only=True)
    if not evidence or infer <= 0:
        return world
    for _ in range(tries - 1):
        k = violations(world.hands, world.declared, evidence)
        if not any(rng.random() < infer for _ in range(k)):
            break
        world = sample_world(view, rng, deal_only=True)
    return world


@dataclass(slots=True)
class _Play:
    seat: int
    deal: int
    round: int
    card: int
    bad: int
    first: bool
    code: int = 0  # the action played
    before: Game | None = None  # the position it was played from, that seat's hand empty


def positions_held(plays: Sequence[_Play], seat: int, hidden: int) -> Iterator[tuple[_Play, Game]]:
    """Each of ``plays`` (this round's plays of ``seat``, in order; yielded newest first)
    with the position it was made from, ``seat`` holding there ``hidden`` (its hidden hand
    now) plus the cards it has played since: how a hypothesis about the hand is replayed."""
    held = hidden
    for p in reversed(plays):
        held |= 1 << p.card
        before = p.before
        assert before is not None
        before.hands[seat] = held
        yield p, before


def replays_greedy(plays: Sequence[_Play], seat: int, hidden: int) -> bool:
    """Whether greedy, holding ``hidden`` now, would have made every play in ``plays``:
    at each (``positions_held``), its choice (``heuristic.best_index`` on the position it
    faced) must be the action it made."""
    for p, before in positions_held(plays, seat, hidden):
        codes = before.legal_codes()
        if codes[best_index(before.view(seat), codes)] != p.code:
            return False
    return True


class PlayTracker:
    """Reconstructs the opponent's plays from the views of one seat's successive decisions.

    Two players only: between two of its own decisions a seat sees exactly one opponent
    play, which the change of table and captured cards reveals. With more players several
    plays happen in between and are not told apart, so no evidence is kept.
    """

    def __init__(self, positions: bool = False) -> None:
        #: Keep the position each opponent play was made from (``replay_hands`` needs it;
        #: the evidence does not, and rebuilding it costs a sampled world per play).
        self.positions = positions
        self._last: View | None = None
        self._code = 0
        self._plays: list[_Play] = []

    def played(self, code: int) -> None:
        """The code this seat just played from the last view given to ``evidence``."""
        self._code = code

    def reset(self) -> None:
        """Forget every view: a new game begins (its first views cannot be told from a
        continuation of the last game's by the deal and round numbers alone)."""
        self._last = None
        self._code = 0
        self._plays.clear()

    def evidence(self, view: View) -> tuple[Evidence, ...]:
        """The observations that bear on the hidden hands of ``view``'s current round."""
        last, self._last = self._last, view
        if view.options.players != 2 or view.seat is None:
            return ()
        if last is None or last.deal != view.deal or last.seat != view.seat:
            self._plays.clear()
            return ()
        self._reconstruct(last, view)
        plays = self._round(view)
        out = []
        for i, p in enumerate(plays):
            extra = 0
            for q in plays[i:]:
                if q.seat == p.seat:
                    extra |= 1 << q.card
            known = extra | view.declared[p.seat]
            if known & p.bad:
                continue  # it held a better capture and did not take it: not greedy here
            declare = p.first and not view.declared[p.seat]
            if declare and declaration_codes(extra) and extra.bit_count() == 3:
                declare = False
            if p.bad or declare:
                out.append(Evidence(p.seat, p.bad, extra, declare))
        return tuple(out)

    def _round(self, view: View) -> list[_Play]:
        """The plays of ``view``'s current round (older ones are forgotten)."""
        self._plays = [p for p in self._plays if p.deal == view.deal and p.round == view.round]
        return self._plays

    def replay_hands(
        self, view: View, rng: random.Random, tries: int = REPLAY_TRIES
    ) -> tuple[int, tuple[int, ...]]:
        """The posterior ``replay`` (mcts option ``posterior``), after ``evidence(view)``:
        ``tries`` hidden hands of the opponent drawn uniformly from the unseen cards, kept
        when greedy holding them would have made each of its undeclared plays of this round
        (``replays_greedy``). Returns ``(seat, hands)``; no hands when there is no such play
        or none of the hands replays them (the opponent did not play like greedy: the
        search then falls back on the evidence)."""
        drawn = self.candidate_hands(view, rng, tries)
        if drawn is None:
            return NO_HANDS
        opp, plays, hands = drawn
        kept = tuple(h for h in hands if replays_greedy(plays, opp, h))
        return (opp, kept) if kept else NO_HANDS

    def weighted_hands(
        self,
        view: View,
        rng: random.Random,
        log_likelihood: Callable[[Sequence[_Play], int, int], float],
        tries: int = REPLAY_TRIES,
    ) -> tuple[int, tuple[int, ...]]:
        """A soft posterior (the ``learned`` one): ``tries`` hands drawn uniformly as for
        ``replay``, each weighted by ``exp(log_likelihood(plays, seat, hand))``, the chance
        a model of the opponent gives its plays of this round holding it, then ``tries``
        hands resampled in proportion to their weights (with replacement, so a likely hand
        is several of the search's worlds). No hands when there is no play to weigh."""
        drawn = self.candidate_hands(view, rng, tries)
        if drawn is None:
            return NO_HANDS
        opp, plays, hands = drawn
        logs = [log_likelihood(plays, opp, h) for h in hands]
        top = max(logs)
        if top == -math.inf:
            return NO_HANDS  # no sampled hand explains the plays
        weights = [math.exp(v - top) for v in logs]
        return opp, tuple(rng.choices(hands, weights=weights, k=len(hands)))

    def candidate_hands(
        self, view: View, rng: random.Random, tries: int
    ) -> tuple[int, list[_Play], list[int]] | None:
        """``(seat, plays, hands)``: the opponent's plays of this round that a hand can
        explain (its position kept) and ``tries`` hidden hands for it drawn uniformly from
        the cards ``view`` does not see; None when there is nothing to infer from (more
        than two players, no such play, a declared hand, no hidden card)."""
        if view.options.players != 2 or view.seat is None:
            return None
        opp = 1 - view.seat
        plays = [p for p in self._round(view) if p.seat == opp and p.before is not None]
        need = view.hand_sizes[opp] - view.declared[opp].bit_count()
        if not plays or view.declared[opp] or need <= 0:
            return None
        pool = cards_of(view.unseen)
        if need > len(pool):
            return None
        return opp, plays, [mask_of(rng.sample(pool, need)) for _ in range(tries)]

    def _reconstruct(self, last: View, view: View) -> None:
        """Add the opponent's play between ``last`` (this seat then played ``_code``) and
        ``view``."""
        opp = 1 - view.seat if view.seat is not None else 0
        side = view.options.side_of(opp)
        code = self._code
        card, _, capture = decode(code)
        table = last.table ^ capture if capture else last.table | 1 << card
        if view.declared[opp] != last.declared[opp] or view.hand_sizes[opp] >= 3:
            return  # it declared (its hand is public) or its hand was dealt afresh
        taken = view.captured[side] & ~last.captured[side]
        if taken:
            lifted = table & ~view.table
            played = taken & ~lifted
            if played.bit_count() != 1 or view.table != table & ~lifted:
                return
            opp_card, opp_capture = played.bit_length() - 1, lifted
        else:
            added = view.table & ~table
            if added.bit_count() != 1 or view.table != table | added:
                return
            opp_card, opp_capture = added.bit_length() - 1, 0
        gain = play_gain(table, opp_card, opp_capture)
        bad = better_cards(table, view.wild_value, view.options.pairing_precedence, gain)
        first = view.hand_sizes[opp] == 2
        before = None
        if self.positions:
            # The position the opponent played from, as it saw it (its hand is set per
            # hypothesis): the table before its play, its side's captures without this one,
            # its played card back among the cards this seat cannot see.
            sizes = tuple(n + (s == opp) for s, n in enumerate(view.hand_sizes))
            captured = tuple(
                m & ~(1 << opp_card | opp_capture) if s == side else m
                for s, m in enumerate(view.captured)
            )
            before = sample_world(
                replace(view, table=table, captured=captured, hand_sizes=sizes, to_move=opp),
                random.Random(0),
            )
        code = encode(opp_card, opp_capture, 0)
        self._plays.append(_Play(opp, view.deal, view.round, opp_card, bad, first, code, before))


_COMBOS: dict[tuple[int, int], npt.NDArray[np.int64]] = {}  # (pool, hand size): index rows


def hidden_hand_marginals(
    view: View, evidence: Sequence[Evidence], infer: float = DEFAULT_INFER
) -> list[float]:
    """For each card, the chance that the opponent's hidden hand holds it: the belief the
    search samples from, as numbers a network can read (``learned``'s features).

    Two players only (zeros otherwise, and when the opponent's hand is declared, hence
    public). Every hidden hand the unseen cards allow is weighed exactly, not sampled: a
    hand is kept with probability ``1 - infer`` for each of ``evidence``'s ``bad`` masks it
    meets, as a world is in ``sample_consistent``. The declaration evidence is left out
    (checking it takes the rules' declaration test per hand, too slow for every decision).
    """
    import numpy as np

    out = [0.0] * NUM_CARDS
    if view.options.players != 2 or view.seat is None:
        return out
    opp = 1 - view.seat
    need = view.hand_sizes[opp]
    pool = cards_of(view.unseen)
    if view.declared[opp] or need <= 0 or need > len(pool):
        return out
    key = (len(pool), need)
    combos = _COMBOS.get(key)
    if combos is None:
        combos = _COMBOS[key] = np.array(list(combinations(range(len(pool)), need)), np.int64)
    cards = np.asarray(pool, dtype=np.int64)[combos]
    hands = np.bitwise_or.reduce(np.left_shift(1, cards), axis=1)
    misses = np.zeros(len(hands), dtype=np.float64)
    for e in evidence:
        if e.seat == opp and e.bad:
            misses += (hands & e.bad) != 0
    weights = (1.0 - infer) ** misses  # numpy's 0.0 ** 0 is 1: certain rejection works
    total = weights.sum()
    if total <= 0:
        weights, total = np.ones(len(hands)), float(len(hands))
    held = np.bincount(combos.ravel(), weights=np.repeat(weights, need), minlength=len(pool))
    for at, card in enumerate(pool):
        out[card] = float(held[at] / total)
    return out

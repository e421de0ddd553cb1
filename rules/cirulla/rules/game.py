"""The game state machine: a game of Cirulla is a series of deals played to the target.

Two paths, as in python-chess: the referee calls ``apply`` (checked: parses, verifies
legality, explains the broken rule, records history, returns events); search calls
``legal_codes`` and ``apply_code`` on int-encoded actions with no checks and, unless asked,
no event objects. Both run the same ``_play`` so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import TYPE_CHECKING, Any

import cirulla.rules.actions as actions_module
from cirulla.rules.actions import (
    _INTERNED,
    DECLARATION_POINTS,
    Action,
    Declaration,
    DeclarationKind,
    declaration_codes,
)
from cirulla.rules.captures import _CACHE as _CAPTURE_CACHE
from cirulla.rules.captures import resolve, table_entry
from cirulla.rules.cards import (
    ACES_MASK,
    ALL_CARDS_MASK,
    SMALL_SETS,
    VALUES,
    WILD,
    cards_of,
    format_cards,
    mask_of,
)
from cirulla.rules.core import fast_constructor, native, options_tuple
from cirulla.rules.decks import DeckSource
from cirulla.rules.errors import DeckError, IllegalActionError
from cirulla.rules.events import (
    CardPlayed,
    DealerBonus,
    DealScored,
    DealStarted,
    Declared,
    Event,
    GameOver,
    HandDealt,
    LastTake,
    Redeal,
    RoundDealt,
)
from cirulla.rules.illegal import explain_illegal
from cirulla.rules.options import Options
from cirulla.rules.scoring import DealScore, SideScore, score_deal
from cirulla.rules.seat_view import view_of
from cirulla.rules.state import SLOTS, GameBase

if TYPE_CHECKING:
    from cirulla.rules.seat_view import View


# the events the state machine builds, through the cheap constructor (one per card played)
_Redeal = fast_constructor(Redeal)
_DealStarted = fast_constructor(DealStarted)
_HandDealt = fast_constructor(HandDealt)
_DealerBonus = fast_constructor(DealerBonus)
_Declared = fast_constructor(Declared)
_CardPlayed = fast_constructor(CardPlayed)
_RoundDealt = fast_constructor(RoundDealt)
_LastTake = fast_constructor(LastTake)
_DealScored = fast_constructor(DealScored)
_GameOver = fast_constructor(GameOver)

_DECL_CODES: dict[int, tuple[int, ...]] = {}
_new_game = object.__new__
_SideScore = fast_constructor(SideScore)
_DealScore = fast_constructor(DealScore)


def _score_deal(options: Options, captured: list[int], scope: list[int]) -> DealScore:
    """``scoring.score_deal`` (the reference), computed by the native core when it runs: the
    same ``DealScore``, a tenth of the time (the differential test compares the events)."""
    if native is None:
        return score_deal(options, captured, scope)
    cappotto, items = native.score_deal(options_tuple(options), captured, scope)
    sides = tuple([_SideScore(*side) for side in items])
    return _DealScore(sides, None if cappotto < 0 else cappotto, tuple(captured))


_NO_LEGAL: list[Any] = [0, 0, 0, [], []]  # a finished game or deal: nothing to play
_INTERNED_ACTIONS = _INTERNED
_NATIVE_LEGAL_CODES: Callable[[int, int, int, bool, bool], list[int]] | None = (
    native.legal_codes if native is not None else None
)


def _check_zones(
    n: int,
    sides: int,
    hands: Sequence[int],
    table: int,
    stock: Sequence[int],
    captured: Sequence[int],
) -> None:
    """Every card in exactly one zone, and one hand per player, one pile per side."""
    seen = 0
    for zone in (*hands, table, mask_of(stock), *captured):
        if seen & zone:
            raise DeckError(f"{format_cards(seen & zone)} placed in two zones")
        seen |= zone
    if seen != ALL_CARDS_MASK or len(set(stock)) != len(stock):
        missing = format_cards(ALL_CARDS_MASK & ~seen)
        raise DeckError(f"every card must be in one zone; missing: {missing}")
    if len(hands) != n or len(captured) != sides:
        raise DeckError(f"{n} players need {n} hands and {sides} captured piles")


def dealer_bonus(table: int, low_bonus: bool) -> int:
    """Scope the dealer scores on the four opening table cards (7H may be any value)."""
    wild = table >> WILD & 1
    base = sum(VALUES[c] for c in cards_of(table) if c != WILD)
    best = 0
    for w in range(1, 11) if wild else (0,):
        s = base + w
        bonus = 1 if s == 15 else 2 if s == 30 else 3 if low_bonus and s <= 9 else 0
        best = max(best, bonus)
    return best


class Game(GameBase):
    """One game: deals until a side reaches the target (or takes cappotto).

    ``deal_only`` stops after the current deal instead of dealing the next (tree search
    evaluates deals). Seats are 0..N-1; sides are seats, or seat % 2 with four players.

    The same seed deals the same game, on either core:

    >>> from cirulla.rules import Game, Options, format_cards
    >>> game = Game(Options.preset("standard", players=2), seed=7)
    >>> game
    <Game deal=1 dealer=1 turn=0 table=[AH 2H 3H JC] hands=[6C 7D QH | 6S 7S KS] stock=30 ...>
    >>> [str(action) for action in game.legal_actions()]
    ['6C:AH+2H+3H', '6C:AH+JC', '7D:JC', 'QH:AH+2H+3H', 'QH:AH+JC']

    An illegal action names the rule it breaks and changes nothing:

    >>> game.apply("7D")
    Traceback (most recent call last):
    ...
    cirulla.rules.errors.IllegalActionError: 7D can capture, and a card that can capture must ...
    >>> [event] = game.apply("7D:JC")
    >>> event.seat, event.value, format_cards(event.captured), event.scopa
    (0, 7, 'JC', False)

    A seat's view holds only what that seat may know: its own hand, the others' sizes.

    >>> view = game.view(1)
    >>> format_cards(view.hand), view.hand_sizes, format_cards(view.table), view.to_move
    ('6S 7S KS', (2, 3), 'AH 2H 3H', 1)
    """

    __slots__ = SLOTS if native is None else ()

    def __init__(
        self,
        options: Options | None = None,
        *,
        seed: int | None = None,
        decks: Iterable[Sequence[int | str]] | None = None,
        deck_source: DeckSource | None = None,
        first_dealer: int | None = None,
        deal_only: bool = False,
        events: list[Event] | None = None,
    ) -> None:
        self.options = options = options or Options()
        n = options.players
        self.deck_source = deck_source or DeckSource(seed, decks)
        self.decks_used: list[list[int]] = []
        if first_dealer is not None and not 0 <= first_dealer < n:
            raise IllegalActionError("seats", f"first dealer must be a seat 0..{n - 1}")
        self.dealer = (n - 1 if first_dealer is None else first_dealer) - 1
        self.deal_no = 0
        self.totals = [0] * self.sides
        self.winner = None
        self.cappotto = False
        self.deal_only = deal_only
        self.history = []
        self.last_score = None
        self._first_deal(events)

    @classmethod
    def setup(
        cls,
        options: Options | None = None,
        *,
        hands: Sequence[int],
        table: int = 0,
        stock: Sequence[int] = (),
        captured: Sequence[int] | None = None,
        scope: Sequence[int] | None = None,
        dealer: int | None = None,
        turn: int | None = None,
        wild: int = 0,
        declared: Sequence[int] | None = None,
        totals: Sequence[int] | None = None,
        deal_no: int = 1,
        round: int = 1,
        last_taker: int | None = None,
        seed: int | None = None,
        deal_only: bool = False,
        validate: bool = True,
    ) -> Game:
        """A position in the middle of a deal (hands, table, captured: card masks).

        ``stock`` lists the cards still to deal in dealing order. Every card must be in
        exactly one zone; used by tests, tools and the determinization sampler, which
        builds consistent zones by construction and skips the check (``validate=False``)
        because it runs once per search iteration.
        """
        options = options or Options()
        n = options.players
        captured = list(captured) if captured is not None else [0] * options.sides
        if validate:
            _check_zones(n, options.sides, hands, table, stock, captured)
        game = cls.__new__(cls)
        game.options = options
        game.deck_source = DeckSource(seed)
        game.decks_used = []
        game.dealer = n - 1 if dealer is None else dealer
        game.deal_no = deal_no
        game.totals = list(totals) if totals is not None else [0] * options.sides
        game.winner = None
        game.cappotto = False
        game.deal_only = deal_only
        game.deal_over = False
        game.hands = list(hands)
        game.table = table
        game.stock = list(stock)[::-1]
        game.captured = captured
        game.scope = list(scope) if scope is not None else [0] * options.sides
        game.last_taker = -1 if last_taker is None else last_taker
        game.wild = wild
        game.declared = list(declared) if declared is not None else [0] * n
        game.round = round
        game.turn = (game.dealer + 1) % n if turn is None else turn
        game.in_hands = sum(h.bit_count() for h in hands)
        game.history = []
        game.last_score = None
        return game

    # ------------------------------------------------------------------ queries

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def to_move(self) -> int | None:
        """The seat whose decision is awaited, or None when the game (or deal_only deal) ended."""
        return None if self.winner is not None or self.deal_over else self.turn

    def legal_codes(self) -> list[int]:
        """Int-encoded legal actions of the seat to move, in the stable order.

        Order: no declaration first, then declarations by code; within each, cards in
        ascending order; for each card, "no capture" (if allowed) then capture masks ascending.
        Computed by the native core when it runs (``rules/cirulla/rules/core.py``), else by
        ``reference_legal_codes``; the two are held equal by the differential test. Computed
        once per position: ``legal_actions`` and ``apply`` reuse them (a fresh list each call,
        the caller's to keep).
        """
        codes: list[int] = self._legal_entry()[3]
        return list(codes)

    def _legal_entry(self) -> list[Any]:
        """``[hand, table, wild, codes, actions or None]`` of the position to move: the
        Python methods' cache (the native core's ``GameState`` keeps its own, in C).

        The legal actions depend only on the mover's hand, the table and the wild value
        (the options are the game's for good), so the entry is keyed by them and checked on
        every use: a position changed by any means, even by hand, is never served stale.
        """
        if self.winner is not None or self.deal_over:
            return _NO_LEGAL
        hand = self.hands[self.turn]
        table = self.table
        wild = self.wild
        entry = self._legal
        if entry is not None and entry[0] == hand and entry[1] == table and entry[2] == wild:
            return entry
        if _NATIVE_LEGAL_CODES is not None:
            options = self.options
            codes = _NATIVE_LEGAL_CODES(
                hand, table, wild, options.must_capture, options.pairing_precedence
            )
        else:
            codes = self.reference_legal_codes()
        entry = self._legal = [hand, table, wild, codes, None]
        return entry

    def reference_legal_codes(self) -> list[int]:
        """``legal_codes`` in pure Python: the readable reference the native core follows."""
        if self.winner is not None or self.deal_over:
            return []
        hand = self.hands[self.turn]
        table = self.table
        wild = self.wild
        options = self.options
        pp = options.pairing_precedence
        # inlined cache look-ups: this is the innermost loop of every playout
        caps = _CAPTURE_CACHE.get(
            table | (wild if table >> WILD & 1 else 0) << 40 | pp << 44
        ) or table_entry(table, wild, pp)
        cards = SMALL_SETS.get(hand) or tuple(cards_of(hand))
        must = options.must_capture
        out: list[int] = []
        append = out.append
        for c in cards:  # no declaration: the common case, kept free of the loop below
            v = wild if c == WILD and wild else VALUES[c]
            sets = caps[v]
            if sets is None:
                sets = resolve(caps, v)
            if not sets:
                append(c)
                continue
            if not must:
                append(c)
            for m in sets:
                append(c | m)
        if len(cards) == 3:
            decls = _DECL_CODES.get(hand)
            if decls is None:
                decls = _DECL_CODES[hand] = declaration_codes(hand)
            for d in decls:
                named = (d & 15) or wild
                for c in cards:
                    v = named if c == WILD and named else VALUES[c]
                    sets = caps[v]
                    if sets is None:
                        sets = resolve(caps, v)
                    base = c | d << 6
                    if not sets or not must:
                        append(base)
                    for m in sets:
                        append(base | m)
        return out

    def legal_actions(self) -> list[Action]:
        """The legal actions, in ``legal_codes``' order: shared immutable ``Action`` objects
        (one per code, see ``Action.from_int``), built once per position."""
        entry = self._legal_entry()
        actions: Sequence[Action] | None = entry[4]
        if actions is None:
            interned = _INTERNED_ACTIONS.get
            actions = entry[4] = [interned(c) or Action.from_int(c) for c in entry[3]]
        return list(actions)

    def is_legal(self, action: Action | int) -> bool:
        code = action if isinstance(action, int) else action.to_int()
        return code in self.legal_codes()

    def view(self, seat: int | None) -> View:
        """What ``seat`` may know (None: a spectator). Only views leave the referee."""
        return view_of(self, seat)

    def deal_score(self) -> DealScore:
        """Score of the deal as it stands (final once the deal is over)."""
        return score_deal(self.options, self.captured, self.scope)

    # ------------------------------------------------------------------ moves

    def apply(self, action: Action | int | str, seat: int | None = None) -> Sequence[Event]:
        """Checked move for the referee: raises ``IllegalActionError`` and changes nothing.

        Returns the move's events as an immutable sequence (``list(...)`` makes a list of
        it). With the native core, an ``Action`` or code from the position's own legal
        list, for the seat to move, is played in C (``gamestate.h``) and its events are
        made only when first read (``native.Events``): a search or a player that never
        looks at them does not pay for them; anything else comes here, which explains what
        is wrong."""
        if isinstance(action, str):
            action = Action.parse(action)
        code = action if isinstance(action, int) else action.to_int()
        if self.winner is not None:
            raise IllegalActionError("game_over", "the game is over; no more actions")
        if self.deal_over:
            raise IllegalActionError("deal_over", "the deal is over; no more actions")
        if seat is not None and seat != self.turn:
            raise IllegalActionError("turn", f"it is seat {self.turn}'s turn, not seat {seat}'s")
        # the position's own legal codes, computed once (legal_actions() made them)
        if code not in self.legal_codes():
            rule, why = self.explain_illegal(Action.from_int(code))
            raise IllegalActionError(rule, why)
        events: list[Event] = []
        self.history.append((self.turn, code))
        self.apply_code(code, events)
        return events

    def explain_illegal(self, action: Action) -> tuple[str, str]:
        """Name the rule an illegal action breaks (for error messages)."""
        return explain_illegal(self, action)

    # ------------------------------------------------------------------ internals

    def _ace_on_table(self) -> bool:
        return bool(self.table & ACES_MASK) or (self.wild == 1 and bool(self.table >> WILD & 1))

    def _start_deal(self, events: list[Event] | None) -> None:
        n = self.n
        self.deal_no += 1
        self.dealer = dealer = (self.dealer + 1) % n
        while True:
            deck = self.deck_source.next_deck(self.deal_no)
            self.decks_used.append(deck)
            hands = [0] * n
            for k in range(3 * n):
                hands[(dealer + 1 + k) % n] |= 1 << deck[k]
            table = mask_of(deck[3 * n : 3 * n + 4])
            if (table & ACES_MASK).bit_count() < 2:
                break
            if events is not None:
                events.append(_Redeal(self.deal_no, dealer, table))
        self.hands = hands
        self.table = table
        self.stock = deck[3 * n + 4 :][::-1]
        self.captured = [0] * self.sides
        self.scope = [0] * self.sides
        self.last_taker = -1
        self.wild = 0
        self.declared = [0] * n
        self.round = 1
        self.turn = (dealer + 1) % n
        self.in_hands = 3 * n
        self.deal_over = False
        if events is not None:
            events.append(_DealStarted(self.deal_no, dealer, table, (3,) * n))
            events.extend(_HandDealt(s, 1, hands[s]) for s in range(n))
        bonus = dealer_bonus(table, self.options.dealer_low_bonus)
        if bonus:
            side = self.side_of[dealer]
            self.captured[side] |= table
            self.scope[side] += bonus
            self.last_taker = side
            self.table = 0
            if events is not None:
                events.append(_DealerBonus(dealer, side, table, bonus))

    def _play(self, code: int, events: list[Event] | None = None) -> None:
        seat = self.turn
        side = self.side_of[seat]
        # ``actions.decode`` inlined: this is the reference core's hottest path.
        card = code & 63
        capture = code >> 12
        hands = self.hands
        if code & 0xFC0:  # a declaration comes first
            decl = code >> 6 & 63
            if decl & 15:
                self.wild = decl & 15
            points = DECLARATION_POINTS[decl >> 4]
            self.scope[side] += points
            self.declared[seat] = hands[seat]
            if events is not None:
                d = Declaration.from_code(decl)
                assert d is not None
                events.append(_Declared(seat, side, d.kind, hands[seat], d.wild_value, points))
        bit = 1 << card
        hands[seat] ^= bit
        if self.declared[seat]:
            self.declared[seat] &= ~bit
        self.in_hands = in_hands = self.in_hands - 1
        value = self.wild if card == WILD and self.wild else VALUES[card]
        scopa = sweep = False
        if capture:
            table = self.table
            if value == 1 and capture == table and not self._ace_on_table():
                sweep = True
            self.table = table = table ^ capture
            self.captured[side] |= capture | bit
            self.last_taker = side
            if not table and (in_hands or self.stock):
                scopa = not sweep or self.options.ace_sweep_scopa
                if scopa:
                    self.scope[side] += 1
        else:
            self.table |= bit
        if events is not None:
            events.append(_CardPlayed(seat, side, card, value, capture, scopa, sweep))
        self.turn = seat + 1 if seat + 1 < self.n else 0
        if not in_hands:
            if self.stock:
                self._deal_round(events)
            else:
                self._end_deal(events)

    def _deal_round(self, events: list[Event] | None) -> None:
        n = self.n
        stock = self.stock
        hands = self.hands
        first = self.dealer + 1
        for k in range(3 * n):
            hands[(first + k) % n] |= 1 << stock.pop()
        self.in_hands = 3 * n
        self.round += 1
        if events is not None:
            events.append(_RoundDealt(self.round, (3,) * n, len(stock)))
            events.extend(_HandDealt(s, self.round, hands[s]) for s in range(n))

    def _end_deal(self, events: list[Event] | None) -> None:
        leftover = self.table
        taker = self.last_taker if self.last_taker >= 0 else None
        if taker is not None:
            self.captured[taker] |= leftover
            self.table = 0
        score = _score_deal(self.options, self.captured, self.scope)
        self.last_score = score
        for i, side_score in enumerate(score.sides):
            self.totals[i] += side_score.total
        totals = tuple(self.totals)
        if events is not None:
            events.append(_LastTake(taker, leftover))
            events.append(_DealScored(self.deal_no, score, totals))
        if score.cappotto is not None:
            self.winner = score.cappotto
            self.cappotto = True
        else:
            best = max(totals)
            if best >= self.options.target and totals.count(best) == 1:
                self.winner = totals.index(best)
        if self.winner is not None:
            self.deal_over = True
            if events is not None:
                events.append(_GameOver(self.winner, totals, self.cappotto))
        elif self.deal_only:
            self.deal_over = True
        else:
            self._start_deal(events)

    #: Unchecked fast path for search: ``apply_code(code)`` with ``code`` taken from
    #: ``legal_codes()``; pass a list as second argument to collect the events. With the
    #: native core the card is played in C on these slots (``engine.h``'s ``g_play``) and
    #: the round's end here; ``_play`` stays the reference the differential test follows.
    apply_code = _play
    _apply_checked = apply
    #: The first deal (``__init__``): ``_start_deal``, in C with the native core.
    _first_deal = _start_deal

    # ------------------------------------------------------------------ copies

    def copy(self, *, deal_only: bool | None = None, history: bool = False) -> Game:
        """A cheap independent copy (search copies drop the history by default)."""
        # every slot spelled out (a loop over SLOTS with getattr/setattr costs four times
        # as much, and search copies once per node); test_copy_sets_every_slot keeps the
        # list whole. The cached legal actions are shared: they are keyed by the position.
        new = _new_game(type(self))
        new._options_of(self)
        new.deck_source = self.deck_source
        new.decks_used = self.decks_used[:] if history else []
        new.dealer = self.dealer
        new.deal_no = self.deal_no
        new.totals = self.totals[:]
        new.winner = self.winner
        new.cappotto = self.cappotto
        new.deal_only = self.deal_only if deal_only is None else deal_only
        new.deal_over = self.deal_over
        new.hands = self.hands[:]
        new.table = self.table
        new.stock = self.stock[:]
        new.captured = self.captured[:]
        new.scope = self.scope[:]
        new.last_taker = self.last_taker
        new.wild = self.wild
        new.declared = self.declared[:]
        new.round = self.round
        new.turn = self.turn
        new.in_hands = self.in_hands
        new.history = self.history[:] if history else []
        new.last_score = self.last_score
        new._legal = self._legal
        return new

    def __copy__(self) -> Game:
        return self.copy(history=True)

    def __deepcopy__(self, memo: dict[int, object]) -> Game:
        """``copy.deepcopy``: the whole game, its deck source (and the decks it has yet to
        deal) copied too, on either core (the native state has no slots to copy)."""
        new = self.copy(history=True)
        new.deck_source = deepcopy(self.deck_source, memo)
        return new

    def cards_accounted(self) -> int:
        """Mask union of every zone, and raise if two zones share a card (invariant check)."""
        zones = [*self.hands, self.table, mask_of(self.stock), *self.captured]
        total = 0
        for z in zones:
            if total & z:
                raise AssertionError(f"card in two zones: {format_cards(total & z)}")
            total |= z
        return total

    def __repr__(self) -> str:
        hands = " | ".join(format_cards(h) or "-" for h in self.hands)
        return (
            f"<Game deal={self.deal_no} dealer={self.dealer} turn={self.turn} "
            f"table=[{format_cards(self.table)}] hands=[{hands}] stock={len(self.stock)} "
            f"totals={self.totals}>"
        )


def _bind_native() -> None:
    """Put the native core's C versions of the hot methods on ``Game`` (legal_codes,
    legal_actions, apply_code, apply, _first_deal; apply and apply_code end a deal and
    start the next in C too): the same answers on the same slots, an order of magnitude
    faster for a Python caller; the Python methods above (``_play``, ``_end_deal``,
    ``_start_deal``) remain the fallback, the reference and the only code path with
    ``CIRULLA_CORE=python``."""
    if native is None:
        return
    kinds = (None, *sorted(DeclarationKind, key=int))
    methods = native.bind_game(
        Game,
        Action,
        _CardPlayed,
        _Declared,
        _RoundDealt,
        _HandDealt,
        kinds,
        Action._checked,
        (
            _Redeal,
            _DealStarted,
            _DealerBonus,
            _LastTake,
            _DealScored,
            _GameOver,
            _SideScore,
            _DealScore,
            DeckError,
        ),
    )
    # the C methods in place of the Python ones (which stay reachable as _apply_checked,
    # _play and _start_deal: the slow path and the reference)
    for name, method in methods.items():
        if name in Game.__dict__:
            _PYTHON_METHODS[name] = Game.__dict__[name]
        setattr(Game, name, method)
    Sequence.register(native.Events)
    # Action.from_int's shared actions from now on the native core's, legal_actions' own
    actions_module._SHARED = native.action_of_code


#: Game's Python versions of what ``native.GameState`` runs in C (kept for PythonStateGame).
_PYTHON_METHODS: dict[str, object] = {}


_bind_native()

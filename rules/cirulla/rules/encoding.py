"""One observation and action encoding for learning agents, built on the rules core's view.

It lives with the rules core because it needs only the rules and NumPy (the ``env`` or
``train`` extra): the environments (``cirulla.env``) and the bots that read an observation
(``policy:``, the learned bot) both import it, and neither imports the other for it.
``cirulla.env.encoding`` re-exports it for the published examples.

Everything here is computed from ``cirulla.rules.views.View`` (what one seat may know), never
from the full game state, so nothing hidden can reach an observation by construction; the
hiding tests (tests/env/test_hiding.py) hold that on every step of random games.

Observation (``OBS_SIZE`` float32, ``OBS_FIELDS`` gives each field's offset and length)
----------------------------------------------------------------------------------------
Seats and sides are *relative* to the observing seat: relative seat ``k`` is seat
``(seat + k) % players`` (0 = me, 1 = the next to play after me, ...), relative side ``k``
is side ``(my_side + k) % sides`` (0 = my side; with 4 players my partner shares side 0).
Unused slots (seat 3 with 2 players, side 2 with 2 or 4 players) are zero.
Card vectors are 40 entries indexed by the rules core's card index (``cards.py``: value-major,
``index = 4 * (value - 1) + suit``, suits D H C S).

============  ======  =====================================================================
field         length  meaning
============  ======  =====================================================================
hand          40      1 for each card in my hand
table         40      1 for each card on the table
captured      3x40    cards taken so far this deal, per relative side (captures are public)
declared      4x40    declared cards still in hand, per relative seat (shown when declared)
unseen        40      cards I cannot locate: other hands' undeclared cards and the stock
wild          11      one-hot value named for the wild 7H this deal (index 0: not named)
hand_sizes    4       cards in hand per relative seat
scope         3       scope (sweeps and declaration points) this deal, per relative side
totals        3       game points before this deal, per relative side
stock         1       cards left in the stock
round         1       round of the deal (1..)
deal          1       deal number of the game (1..)
dealer        4       one-hot relative seat of the dealer
to_move       4       one-hot relative seat to move (all zero when the game is over)
last_taker    4       one-hot relative side that captured last (index 3: no capture yet)
players       3       one-hot player count (2, 3, 4)
seat          4       one-hot absolute seat of the observer
rules         7       must_capture, pairing_precedence, ace_sweep_scopa, dealer_low_bonus,
                      primiera_needs_all_suits, cappotto (0/1), then target
piccola_max   1       highest coin value counted in the piccola
============  ======  =====================================================================

float32 rather than uint8: totals and the target run past 255 (targets up to 1000), every
value is a small integer that float32 holds exactly, and learners consume float32 directly.

Action space (``NUM_ACTIONS`` discrete indices, with a legal-action mask)
------------------------------------------------------------------------
A rules action code (``card | decl << 6 | capture << 12``, ``cirulla.rules.actions``) is mapped
to ``index = (variant * HAND_SLOTS + slot) * CAPTURE_RANKS + rank``:

* ``variant`` (0..11): 0 no declaration; 1 a declaration not naming the wild (its kind is
  fixed by the hand: three of a kind or a low hand); ``1 + w`` a declaration naming 7H as
  value ``w`` (1..10; the kind follows from the hand and ``w``, three of a kind preferred).
* ``slot`` (0..2): position of the played card in my hand, cards in ascending index order
  (a hand never holds more than 3 cards).
* ``rank`` (0..63): position of the capture among the alternatives for that card and
  declaration, in the rules core's legal order (no capture first when allowed, then capture
  masks ascending).

Every (variant, slot) pair determines a card and a declaration, so the mapping is one to one
on legal actions. The rank bound: with ``must_capture`` on (the standard and fantacarte
presets) a card rarely has more than 7 alternatives; with it off the table can grow and a
card may have dozens. Alternatives past rank 63 (never seen in the tests' random games) are
not addressable by index; they stay legal and reachable through the exact action list
(``legal_actions``: codes and per-action features, unbounded), and ``overflow`` reports them.

Per-action features (``FEATURE_SIZE`` float32 per legal action, DouZero style)
------------------------------------------------------------------------------
card 40 (one-hot card played), captured 40 (cards it takes), declaration 3 (one-hot: none,
low hand, three of a kind), named 11 (one-hot wild value named by this action, 0: none),
then capture count and "clears the table" (0/1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cirulla.rules.cards import NUM_CARDS
from cirulla.rules.game import Game
from cirulla.rules.views import View, view_of

MAX_SEATS = 4
MAX_SIDES = 3
HAND_SLOTS = 3
DECL_VARIANTS = 12
CAPTURE_RANKS = 64
NUM_ACTIONS = DECL_VARIANTS * HAND_SLOTS * CAPTURE_RANKS

_LAYOUT = (
    ("hand", NUM_CARDS),
    ("table", NUM_CARDS),
    ("captured", MAX_SIDES * NUM_CARDS),
    ("declared", MAX_SEATS * NUM_CARDS),
    ("unseen", NUM_CARDS),
    ("wild", 11),
    ("hand_sizes", MAX_SEATS),
    ("scope", MAX_SIDES),
    ("totals", MAX_SIDES),
    ("stock", 1),
    ("round", 1),
    ("deal", 1),
    ("dealer", MAX_SEATS),
    ("to_move", MAX_SEATS),
    ("last_taker", MAX_SIDES + 1),
    ("players", 3),
    ("seat", MAX_SEATS),
    ("rules", 7),
    ("piccola_max", 1),
)


def _offsets() -> dict[str, tuple[int, int]]:
    fields: dict[str, tuple[int, int]] = {}
    at = 0
    for name, length in _LAYOUT:
        fields[name] = (at, length)
        at += length
    return fields


#: field name -> (offset, length) in the observation vector.
OBS_FIELDS = _offsets()
OBS_SIZE = sum(length for _, length in _LAYOUT)

_FEATURE_LAYOUT = (("card", 40), ("captured", 40), ("declaration", 3), ("named", 11), ("extra", 2))
FEATURE_FIELDS = {
    name: (sum(n for _, n in _FEATURE_LAYOUT[:i]), length)
    for i, (name, length) in enumerate(_FEATURE_LAYOUT)
}
FEATURE_SIZE = sum(length for _, length in _FEATURE_LAYOUT)

Float32Array = npt.NDArray[np.float32]


def _put_cards(out: Float32Array, at: int, mask: int) -> None:
    while mask:
        low = mask & -mask
        out[at + low.bit_length() - 1] = 1.0
        mask ^= low


def encode_view(view: View, out: Float32Array | None = None) -> Float32Array:
    """The observation of ``view.seat`` (see the module docstring), written into ``out``."""
    if view.seat is None:
        raise ValueError("an observation is a seat's: a spectator view has no seat")
    if out is None:
        out = np.zeros(OBS_SIZE, dtype=np.float32)
    else:
        out[:] = 0.0
    options = view.options
    n = options.players
    sides = options.sides
    seat = view.seat
    me = options.side_of(seat)
    f = OBS_FIELDS
    _put_cards(out, f["hand"][0], view.hand)
    _put_cards(out, f["table"][0], view.table)
    for side in range(sides):
        _put_cards(out, f["captured"][0] + NUM_CARDS * ((side - me) % sides), view.captured[side])
    for s in range(n):
        _put_cards(out, f["declared"][0] + NUM_CARDS * ((s - seat) % n), view.declared[s])
        out[f["hand_sizes"][0] + (s - seat) % n] = view.hand_sizes[s]
    _put_cards(out, f["unseen"][0], view.unseen)
    out[f["wild"][0] + view.wild_value] = 1.0
    for side in range(sides):
        rel = (side - me) % sides
        out[f["scope"][0] + rel] = view.scope[side]
        out[f["totals"][0] + rel] = view.totals[side]
    out[f["stock"][0]] = view.stock
    out[f["round"][0]] = view.round
    out[f["deal"][0]] = view.deal
    out[f["dealer"][0] + (view.dealer - seat) % n] = 1.0
    if view.to_move is not None:
        out[f["to_move"][0] + (view.to_move - seat) % n] = 1.0
    taker = MAX_SIDES if view.last_taker is None else (view.last_taker - me) % sides
    out[f["last_taker"][0] + taker] = 1.0
    out[f["players"][0] + n - 2] = 1.0
    out[f["seat"][0] + seat] = 1.0
    at = f["rules"][0]
    out[at : at + 7] = (
        options.must_capture,
        options.pairing_precedence,
        options.ace_sweep_scopa,
        options.dealer_low_bonus,
        options.primiera_needs_all_suits,
        options.cappotto,
        options.target,
    )
    out[f["piccola_max"][0]] = options.piccola_max
    return out


def observe(game: Game, seat: int, out: Float32Array | None = None) -> Float32Array:
    """``encode_view`` of the rules core's view of ``seat``: the reference observation."""
    return encode_view(view_of(game, seat), out)


def variant_of(decl_code: int) -> int:
    """Declaration variant of an action (0 none, 1 unnamed, 1 + w naming 7H as ``w``)."""
    if not decl_code:
        return 0
    return 1 + (decl_code & 15) if decl_code & 15 else 1


@dataclass(frozen=True, slots=True)
class LegalActions:
    """The legal actions of one position, both ways: ``codes[i]`` has index ``indices[i]``
    (-1 when past the rank bound), in the rules core's legal order."""

    codes: tuple[int, ...]
    indices: tuple[int, ...]

    @property
    def overflow(self) -> int:
        """How many legal actions have no fixed index (rank past ``CAPTURE_RANKS``)."""
        return self.indices.count(-1)

    def code_of(self, index: int) -> int:
        """The action code of a fixed index; ``ValueError`` naming it if it is not legal."""
        try:
            return self.codes[self.indices.index(index)]
        except ValueError:
            raise ValueError(f"action index {index} is not legal in this position") from None

    def mask(self, out: npt.NDArray[np.uint8] | None = None) -> npt.NDArray[np.uint8]:
        """``NUM_ACTIONS`` uint8: 1 where the index is a legal action."""
        if out is None:
            out = np.zeros(NUM_ACTIONS, dtype=np.uint8)
        else:
            out[:] = 0
        for index in self.indices:
            if index >= 0:
                out[index] = 1
        return out


def index_actions(codes: list[int] | tuple[int, ...], hand: int) -> LegalActions:
    """Fixed indices of ``codes`` (a position's legal codes, in the core's order) for a
    player holding ``hand``."""
    slots = {}
    slot = 0
    rest = hand
    while rest:
        low = rest & -rest
        slots[low.bit_length() - 1] = slot
        slot += 1
        rest ^= low
    ranks: dict[int, int] = {}
    indices = []
    for code in codes:
        head = code & 0xFFF
        rank = ranks.get(head, 0)
        ranks[head] = rank + 1
        if rank >= CAPTURE_RANKS:
            indices.append(-1)
            continue
        group = variant_of(code >> 6 & 63) * HAND_SLOTS + slots[code & 63]
        indices.append(group * CAPTURE_RANKS + rank)
    return LegalActions(tuple(codes), tuple(indices))


def legal_actions(game: Game) -> LegalActions:
    """The legal actions of the seat to move, with their fixed indices (empty when over)."""
    if game.to_move is None:
        return LegalActions((), ())
    return index_actions(game.legal_codes(), game.hands[game.turn])


def action_features(code: int, table: int, out: Float32Array | None = None) -> Float32Array:
    """``FEATURE_SIZE`` float32 features of one action played on ``table``."""
    if out is None:
        out = np.zeros(FEATURE_SIZE, dtype=np.float32)
    else:
        out[:] = 0.0
    card, decl, capture = code & 63, code >> 6 & 63, code >> 12
    f = FEATURE_FIELDS
    out[f["card"][0] + card] = 1.0
    _put_cards(out, f["captured"][0], capture)
    out[f["declaration"][0] + (decl >> 4)] = 1.0
    out[f["named"][0] + (decl & 15)] = 1.0
    out[f["extra"][0]] = capture.bit_count()
    out[f["extra"][0] + 1] = float(bool(capture) and capture == table)
    return out


def legal_features(game: Game) -> tuple[LegalActions, Float32Array]:
    """Every legal action (unbounded) and its feature row: ``(actions, [k, FEATURE_SIZE])``."""
    actions = legal_actions(game)
    feats = np.zeros((len(actions.codes), FEATURE_SIZE), dtype=np.float32)
    for i, code in enumerate(actions.codes):
        action_features(code, game.table, feats[i])
    return actions, feats

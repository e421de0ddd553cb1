"""Renders of one seat's view for the environments' ``render()``, in Gymnasium's modes.

``"ansi"``: a few lines of text (hand, table, captures, scores, whose turn), the same on
either core since both build the rules core's ``View``. ``"rgb_array"``: an image drawn
with NumPy alone, one cell per card in the card order (four rows of suits D H C S, ten
columns of values), coloured by where the seat knows the card to be; no window, no font,
no extra dependency. Both show only what the seat may know: they read its ``View``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cirulla.rules.cards import NUM_CARDS, format_cards
from cirulla.rules.views import View

RENDER_MODES = ["ansi", "rgb_array"]
#: A step per frame is the natural pace of a card game shown to a person.
RENDER_FPS = 2
CELL_W, CELL_H, GAP = 24, 32, 4
#: Colours of the image: my hand, the table, captured by my side, by another side,
#: declared by another seat, and cards I cannot place.
COLOURS = {
    "hand": (40, 160, 60),
    "table": (230, 200, 60),
    "mine": (60, 110, 220),
    "theirs": (200, 60, 60),
    "declared": (200, 120, 220),
    "unseen": (70, 70, 70),
}
BACKGROUND = (20, 90, 40)


def check_render_mode(render_mode: object) -> str | None:
    """A caller's render mode: None or one of ``RENDER_MODES``, else ``ValueError``."""
    if render_mode is None:
        return None
    if not isinstance(render_mode, str) or render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode {render_mode!r}: expected None, 'ansi' or 'rgb_array'")
    return render_mode


def ansi(view: View) -> str:
    """The seat's view as text."""
    who = "spectator" if view.seat is None else f"seat {view.seat}"
    to_move = "nobody (game over)" if view.to_move is None else f"seat {view.to_move}"
    lines = [
        f"{who}, deal {view.deal} round {view.round}, dealer seat {view.dealer}, "
        f"to move: {to_move}",
        f"hand:  {format_cards(view.hand) or '-'}",
        f"table: {format_cards(view.table) or '-'}",
    ]
    for side, cards in enumerate(view.captured):
        lines.append(
            f"side {side}: captured {cards.bit_count():2d}, scope {view.scope[side]}, "
            f"points {view.totals[side]}"
        )
    declared = [f"seat {s}: {format_cards(m)}" for s, m in enumerate(view.declared) if m]
    if declared:
        lines.append("declared: " + "; ".join(declared))
    if view.wild_value:
        lines.append(f"the 7 of hearts is worth {view.wild_value}")
    lines.append(f"stock: {view.stock} cards; hands: {', '.join(map(str, view.hand_sizes))}")
    if view.winner is not None:
        lines.append(f"winner: side {view.winner}")
    return "\n".join(lines) + "\n"


def rgb_array(view: View) -> npt.NDArray[np.uint8]:
    """The seat's view as an image, ``(height, width, 3)`` uint8 (see the module docstring)."""
    height = 4 * (CELL_H + GAP) + GAP
    width = 10 * (CELL_W + GAP) + GAP
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = BACKGROUND
    my_side = None if view.seat is None else view.options.side_of(view.seat)
    for card in range(NUM_CARDS):
        bit = 1 << card
        if view.hand & bit:
            colour = COLOURS["hand"]
        elif view.table & bit:
            colour = COLOURS["table"]
        elif any(m & bit for m in view.declared):
            colour = COLOURS["declared"]
        else:
            colour = COLOURS["unseen"]
            for side, cards in enumerate(view.captured):
                if cards & bit:
                    colour = COLOURS["mine" if side == my_side else "theirs"]
        value, suit = card // 4, card % 4
        top, left = GAP + suit * (CELL_H + GAP), GAP + value * (CELL_W + GAP)
        image[top : top + CELL_H, left : left + CELL_W] = colour
        # the value as that many pips down the cell's left edge
        for pip in range(value + 1):
            y = top + 2 + pip * 3
            image[y : y + 2, left + 2 : left + 5] = (255, 255, 255)
    return image


def render(view: View, mode: str | None) -> str | npt.NDArray[np.uint8] | None:
    """``render()`` of an environment in ``mode`` (None: nothing, as Gymnasium's)."""
    if mode == "ansi":
        return ansi(view)
    if mode == "rgb_array":
        return rgb_array(view)
    return None

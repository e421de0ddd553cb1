"""Types of the match server's compiled decision writer, ``cirulla.server.convert._framing``
(server/cirulla/server/convert/_framing.c), for mypy and the editors: the module carries
none. ``framing.decision_frame`` is its one caller."""

from collections.abc import Callable, Sequence

from cirulla.rules.game import Game

def setup(cards: tuple[bytes, ...], /) -> None:
    """The 40 cards' serialized Card messages, by card index."""

def decision(
    game: Game,
    seat: int,
    decision_id: int,
    codes: Sequence[int],
    game_number: int,
    sequence: int,
    seats: tuple[tuple[int, bytes, bool], ...],
    clock: tuple[int | None, int | None, int | None] | None,
    default_index: int,
    bodies: dict[int, bytes],
    miss: Callable[[int], bytes],
    /,
) -> bytes:
    """The serialized PlayResponse{decision_request} of ``seat``'s decision on ``game``."""

"""Types of the match server's compiled decision writer, ``cirulla.server.convert._framing``
(server/cirulla/server/convert/_framing.c), for mypy and the editors: the module carries
none. ``framing.decision_frame`` is its one caller."""

from collections.abc import Callable, Sequence
from typing import TypeVar

from cirulla.rules.events import CardPlayed
from cirulla.rules.game import Game

_T = TypeVar("_T")

def setup(cards: tuple[bytes, ...], names: tuple[bytes, ...], /) -> None:
    """The 40 cards' serialized Card messages and their names (UTF-8), by card index."""

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
    /,
) -> bytes:
    """The serialized PlayResponse{decision_request} of ``seat``'s decision on ``game``."""

def notation(code: int, /) -> str:
    """The notation of the action ``code`` (``str(Action.from_int(code))``)."""

def submit_index(data: bytes, /) -> tuple[int, int] | None:
    """(decision_id, legal_action_index) of a serialized PlayRequest that is a
    SubmitAction by index and nothing else, else None."""

def card_played(
    event: CardPlayed,
    sequence: int,
    game_number: int,
    deal_number: int,
    private_to: int | None,
    notation: str,
    by_timeout: bool,
    /,
) -> bytes:
    """The serialized PlayResponse{event{card_played}} of ``event``."""

def accepted(decision_id: int, index: int, elapsed_ms: int, /) -> bytes:
    """The serialized PlayResponse{action_accepted}."""

def batch(msgs: Sequence[object], /) -> bytes | None:
    """One stream message of ``msgs``' ``framed`` bytes (a batch unless there is one), or
    None if one of them has none."""

def play_request(fallback: Callable[[bytes], _T], data: bytes, /) -> tuple[int, int] | _T:
    """``submit_index(data)``, or ``fallback(data)`` for any other frame."""

def hand_dealt(
    sequence: int,
    game_number: int,
    deal_number: int,
    private_to: int | None,
    seat: int,
    round: int,
    hand: int,
    /,
) -> bytes:
    """The serialized PlayResponse{event{hand_dealt}}."""

def round_dealt(
    sequence: int,
    game_number: int,
    deal_number: int,
    private_to: int | None,
    round: int,
    hand_sizes: Sequence[int],
    stock_count: int,
    /,
) -> bytes:
    """The serialized PlayResponse{event{round_dealt}}."""

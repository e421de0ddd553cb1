"""Types of the bot kit's compiled decision reader, ``cirulla.bots._decode``
(bots/cirulla/bots/_decode.c), for mypy and the editors: the module carries none.

``convert.decision_from_proto`` is its one caller and the Python reader its reference.
"""

#: (seat, deal, dealer, round, players, to_move, hand, table, wild_value, hand_sizes,
#: declared, captured, scope, stock, totals, last_taker, sides): a ``View``'s fields as
#: the wire gives them (``players`` 0 when left out; cards as masks).
ViewFields = tuple[
    int | None,
    int,
    int,
    int,
    int,
    int | None,
    int,
    int,
    int,
    tuple[int, ...],
    tuple[int, ...],
    tuple[int, ...],
    tuple[int, ...],
    int,
    tuple[int, ...],
    int | None,
    int,
]

def setup(cards: tuple[bytes, ...], /) -> None:
    """setup(cards): the 40 cards' serialized Card messages, as the server writes them."""

def decision(data: bytes, /) -> tuple[ViewFields, list[int]] | None:
    """decision(data) -> (view, codes) of a serialized DecisionRequest, or None: the
    Python reader reads it (convert.decision_from_proto)."""

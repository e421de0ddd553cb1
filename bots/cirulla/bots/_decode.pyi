"""Types of the bot kit's compiled stream reader, ``cirulla.bots._decode``
(bots/cirulla/bots/_decode.c), for mypy and the editors: the module carries none.

``convert.decision_from_proto`` calls ``decision`` (the Python reader its reference);
``kit_stream`` calls ``play`` and ``submit`` (protobuf their reference).
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

#: A decision request read: (6, start, end, decision_id, default_action_index,
#: move_time_left_ms, bank_time_left_ms, increment_ms, view, codes); data[start:end] is
#: its PlayResponse, codes the legal actions' in index order.
DecisionEntry = tuple[int, int, int, int, int, int | None, int | None, int, ViewFields, list[int]]

#: An entry of ``play``: the largest sequence of a run of events, views and acceptances
#: (int; an acceptance's is 0), a decision
#: request read, or any other message as (its PlayResponse body's field number, start,
#: end): data[start:end] is that PlayResponse.
PlayEntry = int | tuple[int, int, int] | DecisionEntry

def setup(cards: tuple[bytes, ...], /) -> None:
    """setup(cards): the 40 cards' serialized Card messages, as the server writes them."""

def decision(data: bytes, /) -> tuple[ViewFields, list[int]] | None:
    """decision(data) -> (view, codes) of a serialized DecisionRequest, or None: the
    Python reader reads it (convert.decision_from_proto)."""

def play(data: bytes, /) -> list[PlayEntry] | None:
    """play(data) -> the entries of a serialized PlayResponse (a batch's in order), or
    None: protobuf reads it (kit_stream.entries)."""

def submit(decision_id: int, index: int, /) -> bytes:
    """submit(decision_id, index) -> a serialized PlayRequest answering the decision with
    that legal action index."""

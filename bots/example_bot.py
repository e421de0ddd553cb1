"""A complete Cirulla bot: take the most cards, else drop the lowest card.

Run it against a server:  python -m cirulla.bots.example_bot HOST:PORT MATCH_ID TOKEN
"""

import sys
from collections.abc import Sequence

from cirulla.bots.kit import run_bot
from cirulla.rules import Action, View, card_value


def decide(view: View, legal: Sequence[Action], time_left: float | None) -> int:
    """Declare when allowed, capture the most cards, else play the lowest card."""

    def worth(i: int) -> tuple[bool, int, int]:
        action = legal[i]
        return (action.declaration is not None, len(action.captured), -card_value(action.card))

    return max(range(len(legal)), key=worth)


if __name__ == "__main__":
    server, match_id, token = sys.argv[1:4]
    run_bot(decide, server=server, match_id=match_id, token=token, name="example")

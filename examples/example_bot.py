"""A complete Cirulla bot: declare, take the settebello, take the most cards, else drop
the lowest card.

Run it from the clone's root: CIRULLA_SERVER=HOST:PORT CIRULLA_MATCH=ID CIRULLA_TOKEN=T
python examples/example_bot.py (in a tournament: --bot mine='cmd:{python}
examples/example_bot.py'; the runner sets those three).
"""

from collections.abc import Sequence

from cirulla.bots.kit import run_bot
from cirulla.rules import SETTEBELLO, Action, View, card_value


def decide(view: View, legal: Sequence[Action], time_left: float | None) -> int:
    """Declare when allowed, then the settebello, the most cards, the lowest card."""

    def worth(i: int) -> tuple[bool, bool, int, int]:
        action = legal[i]
        takes = [*action.captured, action.card] if action.captured else []
        return (
            action.declaration is not None,
            SETTEBELLO in takes,
            len(action.captured),
            -card_value(action.card),
        )

    return max(range(len(legal)), key=worth)


if __name__ == "__main__":
    run_bot(decide, name="example")  # server, match and token from CIRULLA_* variables

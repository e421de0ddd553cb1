"""Each mcts search option as a bot spec: parsed to its type, taken by ``MctsPolicy``, its
default the one docs/bots.md gives, and a bad value refused in a line naming the option."""

from __future__ import annotations

from typing import Any

import pytest

from cirulla.bots.botspec import parse_bot_spec
from cirulla.bots.mcts_policy import MctsPolicy

# (option, spec text, parsed value, a valid value, the default, a bad value, the error)
CASES = [
    ("infer", "0.9", 0.9, 0.5, 0.9, 1.5, "infer must be a probability"),
    ("opponent", "blind", "blind", "tree", "playout", "greedy", "opponent must be one of"),
    ("posterior", "replay", "replay", "replay", "evidence", "exact", "posterior must be one of"),
    ("reward", "win", "win", "win", "points", "elo", "reward must be one of"),
    ("solve", "1", 1, 1, 0, 2, "solve must be 0 or 1"),
]


@pytest.mark.parametrize(("name", "text", "parsed", "value", "default", "bad", "error"), CASES)
def test_each_search_option_is_parsed_and_checked(
    name: str, text: str, parsed: Any, value: Any, default: Any, bad: Any, error: str
) -> None:
    assert parse_bot_spec(f"mcts:{name}={text}") == ("mcts", {name: parsed})
    assert getattr(MctsPolicy(iterations=10, **{name: value}), name) == value
    assert getattr(MctsPolicy(iterations=10), name) == default
    with pytest.raises(ValueError, match=error):
        MctsPolicy(iterations=10, **{name: bad})

"""Why a ladder game ended, as the ladder's pages show it after a result.

A score alone misleads (7-27 is a cappotto, 0-0 a forfeit), so every result the pages
show (the list of matches, a bot's matches, a match's page) says why, from
``LadderMatch.end_reason`` and ``forfeit_kind``, in the words ``cirulla ladder match``
uses. The server area never imports the ladder: this reads the protocol only.
"""

from __future__ import annotations

from html import escape
from typing import Any

from cirulla.v1 import ladder_pb2

#: ``LadderMatch.end_reason`` in words (as ``cirulla ladder match`` says them)
END_WORDS = {
    ladder_pb2.LADDER_END_REASON_TARGET: ("target", "target reached"),
    ladder_pb2.LADDER_END_REASON_CAPPOTTO: ("cappotto", "cappotto"),
    ladder_pb2.LADDER_END_REASON_FORFEIT: ("forfeit", "forfeit"),
    ladder_pb2.LADDER_END_REASON_TIME_LIMIT: ("time-limit", "time limit (void)"),
    ladder_pb2.LADDER_END_REASON_VOID: ("void", "void"),
}


def end_text(m: Any) -> str:
    """Why the game ended, after its result: a score alone misleads (7-27 is a cappotto,
    0-0 a forfeit). Empty for a match the rpc gave no reason (an older ladder)."""
    if m.end_reason not in END_WORDS:
        return ""
    key, words = END_WORDS[m.end_reason]
    if m.forfeit_kind:
        words += f" ({m.forfeit_kind.replace('-', ' ')})"
    return f' — <span class="end" data-end="{key}">{escape(words)}</span>'

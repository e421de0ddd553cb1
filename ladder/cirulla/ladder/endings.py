"""Why a ladder game ended: the one place that names it, for every reader of a result.

A score alone misleads: a game won 7 to 27 is a cappotto (the winner took all ten coins
in a deal), and a game won 0 to 0 is a forfeit. So each result stores its end reason
(``end``) and, for a forfeit, the forfeiting seat's kind (``forfeit_kind``) in the
result's JSON (``ladder_matches.result``), and every reader (the rpcs' ``LadderMatch``,
``cirulla ladder match``/``matches``/``history``, the web pages) shows it through
``describe``. Results stored before the field existed get it from what they hold
(``ending_of``): the void flag, the forfeiting sides' seat outcomes, and a winner below
the game's target, which only a cappotto makes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from cirulla.rules.options import Options
from cirulla.v1 import ladder_pb2

#: The rules ended it: a side reached the target with the single highest total.
TARGET = "target"
#: The rules ended it: a side captured all ten coins of a deal.
CAPPOTTO = "cappotto"
#: A seat forfeited; ``forfeit_kind`` says how.
FORFEIT = "forfeit"
#: The game's wall-clock limit ran out with every seat playing: no result.
TIME_LIMIT = "time-limit"
#: Ended without a result otherwise (the match server aborted it).
VOID = "void"
END_REASONS = (TARGET, CAPPOTTO, FORFEIT, TIME_LIMIT, VOID)

#: How a seat forfeited: its seat outcome, ``never-joined`` for a seat whose bot never took
#: it, ``limit`` for a bot a resource limit stopped (``killed: memory limit 2 GiB``).
FORFEIT_KINDS = ("crash", "timeout", "illegal", "disconnect", "never-joined", "limit")

_WORDS = {
    TARGET: "target reached",
    CAPPOTTO: "cappotto",
    FORFEIT: "forfeit",
    TIME_LIMIT: "time limit (void)",
    VOID: "void",
}


def forfeit_kind(outcome: str, fault: str) -> str:
    """A forfeiting seat's kind, from its outcome and its fault in words."""
    if "killed: " in fault and " limit" in fault:
        return "limit"
    if outcome == "no-join":
        return "never-joined"
    if "without joining" in fault or "never joined" in fault:
        return "never-joined"
    return outcome if outcome in FORFEIT_KINDS else "crash"


def ending_of(
    result: Mapping[str, Any],
    seats: Iterable[Any],
    target: int | None,
) -> tuple[str, str]:
    """``(end, forfeit_kind)`` of a stored result (``forfeit_kind`` empty unless a forfeit).

    ``seats`` are the match's seats with ``side``, ``outcome`` and ``fault``; ``target``
    the game's target (its rules), used only for results stored before ``end`` was.
    """
    end = str(result.get("end") or "")
    kind = str(result.get("forfeit_kind") or "")
    if end in END_REASONS:
        return end, kind if end == FORFEIT else ""
    forfeit_sides = set(result.get("forfeit_sides") or ())
    if forfeit_sides:
        for seat in seats:
            if seat["side"] in forfeit_sides and seat["outcome"] not in ("", "ok"):
                return FORFEIT, forfeit_kind(seat["outcome"], seat["fault"] or "")
        return FORFEIT, "crash"
    if result.get("void"):
        return VOID, ""
    winner = result.get("winner")
    totals = list(result.get("totals") or ())
    if winner is None or winner >= len(totals):
        return VOID, ""
    if target is not None and totals[winner] < target:
        return CAPPOTTO, ""
    return TARGET, ""


def target_of(settings_json: str | None) -> int | None:
    """The game's target from a match's stored settings (``ladder_matches.settings``: its
    preset and rule overrides); None when they cannot be read."""
    try:
        settings = json.loads(settings_json or "{}")
        rules = {k: v for k, v in (settings.get("rules") or {}).items() if k != "players"}
        return Options.preset(settings.get("preset") or "standard", **rules).target
    except (ValueError, TypeError, AttributeError):
        return None


def describe(end: str, kind: str = "") -> str:
    """The end reason in words, as the command line and the web pages show it."""
    if not end:
        return ""
    words = _WORDS.get(end, end)
    if end == FORFEIT and kind:
        return f"{words} ({kind.replace('-', ' ')})"
    return words


def describe_pb(match: ladder_pb2.LadderMatch) -> str:
    """``describe`` of a ``LadderMatch`` message (its ``end_reason`` and ``forfeit_kind``)."""
    if not match.end_reason:
        return ""
    name = ladder_pb2.LadderEndReason.Name(match.end_reason)
    end = name.removeprefix("LADDER_END_REASON_").lower().replace("_", "-")
    return describe(end, match.forfeit_kind)

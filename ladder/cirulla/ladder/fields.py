"""Bounds of every string and number a ladder caller sends, defined once.

A request is checked before anything is stored or logged: a field too long, with control
characters or out of range is refused with INVALID_ARGUMENT naming the field, and the
message never quotes more than a short, escaped prefix of what was sent (a 200 KiB value
must not turn the answer into RESOURCE_EXHAUSTED, nor a look-alike name into a bot).
"""

from __future__ import annotations

import re

from rich.text import Text

# the shared layer's: one definition for the tournament, the ladder and the pool
from cirulla.clients.matches.files import printable

#: Bot names: 1-40 of these characters, starting with a letter or digit (docs/ladder.md).
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
NAME_RULE = "1-40 letters, digits, '-', '_' or '.', starting with a letter or digit"
MAX_SPEC = 1000
MAX_REASON = 500
MAX_SOFTWARE_VERSION = 200
MAX_MATCH_ID = 100
#: a bot never plays more matches at once than this
MAX_CONCURRENCY = 256
#: how much of a refused value an error message shows
SHOWN = 40
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class FieldError(ValueError):
    """A refused field; the message names it."""


def shown(value: str) -> str:
    """A short, escaped rendering of ``value`` for an error message."""
    text = value if len(value) <= SHOWN else value[:SHOWN] + "..."
    return repr(text)


def check_name(field: str, value: str) -> str:
    if len(value) > 40 or not NAME_RE.fullmatch(value):
        raise FieldError(f"{field} {shown(value)}: {NAME_RULE}")
    return value


def check_text(field: str, value: str, limit: int, *, allow_empty: bool = True) -> str:
    """``value`` if it is at most ``limit`` characters with no control character."""
    if len(value) > limit:
        raise FieldError(f"{field}: at most {limit} characters, not {len(value)}")
    if CONTROL_RE.search(value):
        raise FieldError(f"{field} {shown(value)}: no control characters")
    if not allow_empty and not value.strip():
        raise FieldError(f"{field}: must not be empty")
    return value


def check_count(field: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise FieldError(f"{field}: between {low} and {high}, not {value}")
    return value


def plain(text: str) -> Text:
    """``text`` for rich: printable and never parsed as markup (a ``rich.text.Text``)."""
    return Text(printable(text))

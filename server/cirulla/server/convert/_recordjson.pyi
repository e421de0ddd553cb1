"""Types of the match server's compiled record writer, ``cirulla.server.convert._recordjson``
(server/cirulla/server/convert/_recordjson.c), for mypy and the editors: the module carries
none. ``recordkeeping.record_text`` is its one caller."""

from collections.abc import Callable, Mapping
from typing import TypeVar

from cirulla.rules.actions import DeclarationKind
from cirulla.rules.events import Event
from cirulla.server.messages import EventMsg

T = TypeVar("T")

def setup(
    names: tuple[str, ...],
    types: Mapping[type[Event], tuple[str, ...]],
    kind: type[DeclarationKind],
    /,
) -> None:
    """The 40 cards' names by card index, each event type written natively with its
    field names in ``Event.to_dict``'s order, and the declarations' kind (its label)."""

def events(messages: list[EventMsg], fallback: Callable[[EventMsg], str], /) -> str:
    """The JSON list of the messages' record entries (``documents.event_entry``), each
    one the native writer cannot write by ``fallback`` (its JSON)."""

def flat(items: list[T], fallback: Callable[[T], str], /) -> str:
    """The JSON list of flat dicts (a record's actions), each one the native writer
    cannot write by ``fallback`` (its JSON)."""

"""The files of a game's bots, as every runner names and reads them: one definition for
the tournament, the ladder and the worker pool.

* ``safe_name``: a match or bot id as a file name (``logs/<safe>-<seat>.log``,
  ``records/<safe>.json``).
* ``log_tail``: the end of a bot's log, and for a kept-alive bot's log (which spans many
  matches) only the part of one match.
* ``printable``: a bot's text with escape sequences and control characters removed,
  before any of it reaches a terminal (what a bot prints is data).
* ``write_atomic``: a record file written whole or not at all, gzip'd for the ladder.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

#: How much of a log is read for its tail (a kept-alive bot's log may be long).
LOG_WINDOW = 256_000


def safe_name(name: str) -> str:
    """``name`` with every character but letters, digits, ``-``, ``_`` and ``.`` made
    ``_``: how the referee names a match's files."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def read_tail(path: Path, window: int = LOG_WINDOW) -> str:
    """The last ``window`` bytes of ``path`` as text (bad UTF-8 replaced); OSError if it
    cannot be read."""
    with path.open("rb") as f:
        f.seek(max(0, f.seek(0, 2) - window))
        return f.read().decode("utf-8", "replace")


def log_tail(path: Path, chars: int = 4000, match_id: str | None = None) -> str:
    """The last ``chars`` characters of a bot's log ("" if it cannot be read). A
    kept-alive bot's log spans many matches: with ``match_id`` only the part from that
    match's assignment line (which ``cirulla.bots.loop`` writes) to the next assignment
    is kept, so a fault's log is the faulty match's own."""
    try:
        text = read_tail(path)
    except OSError:
        return ""
    if match_id:
        start = text.rfind(f"assignment: match {match_id} ")
        if start >= 0:
            start = text.rfind("\n", 0, start) + 1
            end = text.find("assignment: match ", text.find("\n", start) + 1)
            text = text[start : None if end < 0 else text.rfind("\n", start, end) + 1]
    return text[-chars:]


#: ESC/CSI/OSC sequences and every other control character but newline and tab
_SEQUENCE_RE = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b\[[0-?]*[ -/]*[@-~]?|\x1b.?")
_UNPRINTABLE_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """A bot's (or any caller's) text with escape sequences and control characters removed.

    What a bot prints is data: it must never move the operator's cursor, clear the screen,
    set a title or smuggle a hyperlink into a terminal.
    """
    return _UNPRINTABLE_RE.sub("", _SEQUENCE_RE.sub("", text))


def write_atomic(path: Path, text: str, compress: bool = False) -> None:
    """Readers (and a --resume after SIGKILL) see the whole file or none; ``compress``:
    gzip'd (mtime 0: the same record makes the same bytes)."""
    tmp = path.with_name(f".{path.name}.tmp")
    data = text.encode("utf-8")
    tmp.write_bytes(gzip.compress(data, 6, mtime=0) if compress else data)
    os.replace(tmp, path)

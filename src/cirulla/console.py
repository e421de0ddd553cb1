"""The one way the ``cirulla`` commands make a rich ``Console`` for their output.

On a terminal, rich lays tables and lines out at the terminal's width. When stdout is a
pipe or a file (a log, ``| tee``, a CI job, a test), rich falls back to 80 columns and
would cut table cells (``Ptnml(0-2)`` split over lines, a match id broken in two) and wrap
long lines: output that is read by people later, or by programs, must keep every value
whole. So off a terminal the console is as wide as its content (``PIPED_WIDTH``) and does
not wrap lines (``soft_wrap``); tables are never wider than their cells need.
"""

from __future__ import annotations

from typing import IO, Any

from rich.console import Console

#: Columns of a console that is not a terminal: wide enough that no table or line is cut.
PIPED_WIDTH = 10_000


def output_console(file: IO[str] | None = None, **kwargs: Any) -> Console:
    """A ``Console`` (``kwargs`` as rich's) that keeps whole values off a terminal."""
    console = Console(file=file, **kwargs)
    if console.is_terminal or "width" in kwargs:
        return console
    return Console(file=file, width=PIPED_WIDTH, soft_wrap=True, **kwargs)

"""The bots' compiled search (``bots/cirulla/bots/_search.c``: opponent-hand inference,
playouts and the whole ISMCTS loop), on the bots' floor beside the Python loop it mirrors.

It is built by the same install as the native rules core, on the same state machine, and
runs exactly when that core does: ``CIRULLA_CORE=python`` turns both off, so a bot never
searches natively over a game the Python core plays.
"""

from __future__ import annotations

from cirulla.rules.core import CORE, CoreUnavailableError, require_native

# The module is typed by its stub (_search.pyi). mypy has no "this module or None": the
# fallback below is the one place it is told otherwise; every use goes through
# require_search() first (or tests `search_native is None`).
try:
    if CORE != "native":
        raise ImportError("the Python rules core runs")
    from cirulla.bots import _search

    search_native = _search
except ImportError:
    #: The compiled module, or None when the Python core runs (or it was not built).
    search_native = None  # type: ignore[assignment]


def require_search() -> None:
    """A one-line error saying why the compiled search module is missing; after it,
    ``search_native`` is the module."""
    require_native()
    if search_native is None:
        raise CoreUnavailableError(
            "the bots' compiled search is not available: not built (no C compiler at install?)"
        )

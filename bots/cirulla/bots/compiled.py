"""The bots' compiled search (``bots/cirulla/bots/_search.c``: opponent-hand inference,
playouts and the whole ISMCTS loop), on the bots' floor beside the Python loop it mirrors.

It is built by the same install as the native rules core, on the same state machine, and
runs exactly when that core does: ``CIRULLA_CORE=python`` turns both off, so a bot never
searches natively over a game the Python core plays.
"""

from __future__ import annotations

from typing import Any

from cirulla.rules.core import CORE, CoreUnavailableError, require_native


def _load() -> Any:
    if CORE != "native":
        return None
    try:
        from cirulla.bots import _search  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _search


#: The compiled module, or None when the Python core runs (or it was not built).
search_native: Any = _load()


def require_search() -> Any:
    """The compiled search module, or a one-line error saying why it is missing."""
    require_native()
    if search_native is None:
        raise CoreUnavailableError(
            "the bots' compiled search is not available: not built (no C compiler at install?)"
        )
    return search_native

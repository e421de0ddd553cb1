"""Per-decision seeds: a bot's choice depends on its seed and what it sees, nothing else.

Deriving the RNG from the information state (rather than advancing one RNG across the
match) makes a decision reproducible on its own: after a reconnect, in a test, or when a
tournament replays one position.
"""

from __future__ import annotations

import hashlib

from cirulla.rules.views import View


def decision_seed(seed: int | None, view: View, salt: int = 0) -> int:
    """A 64-bit seed from the bot's seed, the view's key and ``salt`` (e.g. a worker id)."""
    text = f"{seed}|{salt}|{view.key()}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")

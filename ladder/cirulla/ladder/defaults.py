"""Where a ladder lives by default, in a module light enough for ``cirulla --help``.

Every ``cirulla`` invocation (each bot process included) registers the ladder's
subcommands; importing the database layer for these names cost bots ~0.45 s of start-up.
"""

from __future__ import annotations

DEFAULT_DB = "cirulla-ladder.sqlite3"
STATE_FILE = "cirulla-ladder.json"
DEFAULT_DATA = "cirulla-ladder-data"
DEFAULT_LISTEN = "127.0.0.1:50061"
#: Bot states; ``removed`` bots keep their matches but leave the standings.
BOT_STATES = ("active", "paused", "deactivated", "removed")
#: Ladder match life cycle (``ladder_matches.status``).
MATCH_STATES = ("scheduled", "claimed", "running", "finished", "cancelled")
#: Seconds a claim stays valid without a heartbeat of its worker.
LEASE_SECONDS = 60.0

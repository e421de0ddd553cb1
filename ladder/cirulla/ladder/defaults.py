"""Where a ladder lives by default, in a module light enough for ``cirulla --help``.

Every ``cirulla`` invocation (each bot process included) registers the ladder's
subcommands; importing the database layer for these names cost bots ~0.45 s of start-up.
"""

from __future__ import annotations

from typing import TypedDict

DEFAULT_DB = "cirulla-ladder.sqlite3"
STATE_FILE = "cirulla-ladder.json"
DEFAULT_DATA = "cirulla-ladder-data"
#: ``cirulla ladder worker``'s data folder.
WORKER_DATA = "cirulla-worker-data"
DEFAULT_LISTEN = "127.0.0.1:50061"
#: The queues, by their number of seats (the one list: the store, the scheduler, the
#: metrics and the command line read it).
QUEUES = ("2p", "3p", "4p")
#: Bot states; ``removed`` bots keep their matches but leave the standings.
BOT_STATES = ("active", "paused", "deactivated", "removed")
#: Ladder match life cycle (``ladder_matches.status``).
MATCH_STATES = ("scheduled", "claimed", "running", "finished", "cancelled")
#: Games one request may ask for (an operator's series).
MAX_REQUEST_GAMES = 100
#: Items one page of a listing rpc holds at most.
MAX_PAGE = 1000
#: Seconds a claim stays valid without a heartbeat of its worker.
LEASE_SECONDS = 60.0


class LadderState(TypedDict, total=False):
    """``STATE_FILE``: what ``cirulla ladder serve`` writes for the commands run in its
    folder (``serve`` writes the first five; the commands read any of them as missing)."""

    address: str
    #: the database's URL, its password hidden
    db: str
    data: str
    pid: int
    admin_token_file: str
    #: ``--http``, ``--metrics``: where they listen
    http: str
    metrics: str
    #: ``--tls-cert``: the certificate the commands check the ladder against
    tls_cert: str

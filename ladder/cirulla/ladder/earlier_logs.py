"""The bot logs an earlier incarnation of the ladder left in ``DATA/logs``, counted in
each bot's ``--bot-logs`` budget when a ladder process starts (``MatchRunner``).

Without this a restarted ladder would start each bot's budget from nothing: a bot that
writes just under its budget would get all of it again after every restart, its older
logs bounded by ``--keep-records`` only. A tournament does the same on ``--resume``
(``Referee.count_logs``).

Each file is given to its bot from the store's facts, never from a guess:

* ``<safe bot name>-<N>.log`` is a kept-alive process's log (``BotPool._spawn``): the
  name before the last ``-<digits>`` must be the safe name of exactly one stored bot;
* ``<safe server match id>-<seat>.log`` is a ``cmd:`` seat's game log
  (``Referee._command_seat``): the store's match with that server id has that seat,
  played by a version of exactly one bot.

A file both readings give to different bots, or neither reading gives to a bot, is left
alone and not counted: ``server.log``, the ladder's own logs, a game log of a match that
was given back and played again (its row keeps only the new server id), a bot deleted
since. ``--keep-records`` still prunes those.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from sqlalchemy import select

from cirulla.clients.matches.files import safe_name
from cirulla.clients.matches.log_budget import LogBudget
from cirulla.ladder.schema import bot_versions, bots, ladder_matches, ladder_seats
from cirulla.ladder.store import LadderStore

log = logging.getLogger("cirulla.ladder")

#: ``<stem>-<number>.log``: a process's log (stem: a bot) or a game's (stem: a match).
_LOG_NAME = re.compile(r"(?P<stem>.+)-(?P<number>[0-9]+)\.log")
#: Server match ids looked up per query (the server's ids, ``m-<n>-<hex>``, are their
#: own safe names: the file's stem is looked up as it is).
_CHUNK = 500


def count_earlier_logs(store: LadderStore, logs: Path, budget: LogBudget) -> int:
    """Count every bot's logs in ``logs`` in its budget, oldest (mtime) first, then bring
    each bot back under it; how many files were counted."""
    found: list[tuple[float, Path, str, int]] = []
    for path in logs.glob("*.log"):
        named = _LOG_NAME.fullmatch(path.name)
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue  # pruned meanwhile
        if named is not None and path.is_file():
            found.append((mtime, path, named["stem"], int(named["number"])))
    if not found:
        return 0
    by_safe_name: dict[str, set[str]] = {}
    seats: dict[tuple[str, int], set[str]] = {}
    with store.engine.connect() as conn:
        names: list[str] = list(conn.execute(select(bots.c.name)).scalars())
        for name in names:
            by_safe_name.setdefault(safe_name(name), set()).add(name)
        stems = sorted({stem for _, _, stem, _ in found})
        for start in range(0, len(stems), _CHUNK):
            rows = conn.execute(
                select(ladder_matches.c.server_match_id, ladder_seats.c.seat, bots.c.name)
                .join(ladder_seats, ladder_seats.c.match_id == ladder_matches.c.id)
                .join(bot_versions, bot_versions.c.id == ladder_seats.c.version_id)
                .join(bots, bots.c.id == bot_versions.c.bot_id)
                .where(ladder_matches.c.server_match_id.in_(stems[start : start + _CHUNK]))
            )
            for row in rows:
                key = (safe_name(str(row[0])), int(row[1]))
                seats.setdefault(key, set()).add(str(row[2]))
    counted: set[str] = set()
    unknown = 0
    for _, path, stem, number in sorted(found, key=lambda f: (f[0], f[1].name)):
        owners = by_safe_name.get(stem, set()) | seats.get((stem, number), set())
        if len(owners) != 1:
            unknown += 1  # no bot's, or more than one bot's: not ours to count
            continue
        bot = owners.pop()
        budget.known(bot, path)
        counted.add(bot)
    for bot in sorted(counted):
        budget.settle(bot)
    log.info(
        "ladder_bot_logs_counted files=%d bots=%d unattributed=%d",
        len(found) - unknown,
        len(counted),
        unknown,
    )
    return len(found) - unknown

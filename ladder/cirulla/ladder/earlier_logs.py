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
from pathlib import Path

from sqlalchemy import select

from cirulla.clients.matches.files import safe_name
from cirulla.clients.matches.log_budget import LOG_NAME, LogBudget
from cirulla.ladder.schema import bot_versions, bots, ladder_matches, ladder_seats
from cirulla.ladder.store import LadderStore

log = logging.getLogger("cirulla.ladder")

#: Server match ids looked up per query (the server's ids, ``m-<n>-<hex>``, are their
#: own safe names: the file's stem is looked up as it is).
_CHUNK = 500


def count_earlier_logs(store: LadderStore, logs: Path, budget: LogBudget) -> int:
    """Count every bot's logs in ``logs`` in its budget, oldest (mtime) first, then bring
    each bot back under it; how many files were counted."""
    found: list[tuple[Path, str, int]] = []
    for path in logs.glob("*.log"):
        named = LOG_NAME.fullmatch(path.name)
        if named is not None:
            found.append((path, named["stem"], int(named["number"])))
    if not found:
        return 0
    by_safe_name: dict[str, set[str]] = {}
    seats: dict[tuple[str, int], set[str]] = {}
    with store.engine.connect() as conn:
        names: list[str] = list(conn.execute(select(bots.c.name)).scalars())
        for name in names:
            by_safe_name.setdefault(safe_name(name), set()).add(name)
        stems = sorted({stem for _, stem, _ in found})
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
    earlier: list[tuple[str, Path]] = []
    unknown = 0
    for path, stem, number in found:
        owners = by_safe_name.get(stem, set()) | seats.get((stem, number), set())
        if len(owners) != 1:
            unknown += 1  # no bot's, or more than one bot's: not ours to count
            continue
        earlier.append((owners.pop(), path))
    counted = budget.count_earlier(earlier)  # oldest first, then each bot settled
    log.info(
        "ladder_bot_logs_counted files=%d bots=%d unattributed=%d",
        counted,
        len({bot for bot, _ in earlier}),
        unknown,
    )
    return counted

"""Duplicate-deal twins: which records and streams stay withheld while decks are in play.

Matches created with the same ``CreateMatchRequest.deal_group`` share deck orders (a
duplicate-deal tournament plays each deck set once per seating). A finished twin's record
shows every hand, and its public events show every card played, so a seat that read it
would know the cards of its own game. The rule, in one place: while a group is *open*
(a member is waiting or in progress, or fewer members than the announced
``deal_group_size`` exist yet), the records of its games are withheld from everyone
without the admin token, and its members cannot be spectated except by the admin.

The registry lives in memory; a group the server has not seen since it started is
rebuilt once from the stored match summaries (a restarted server holds no live match, so
only the announced size can keep such a group open). Closed groups leave memory once
more than ``MAX_GROUPS_KEPT`` groups are known (read back from the database if asked
again), so the registry does not grow with the games a long-running server plays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cirulla.server.documents import MatchSummary

#: Longest deal_group name accepted.
MAX_GROUP_LEN = 128
#: Largest deal_group_size accepted.
MAX_GROUP_SIZE = 100_000
#: Statuses of a match whose deck orders are no longer in play.
ENDED = ("finished", "aborted")
#: Groups kept in memory before closed ones are dropped (the database keeps them).
MAX_GROUPS_KEPT = 2000


@dataclass
class GroupState:
    """The members of one deal group (match id -> status) and its announced size."""

    size: int = 0
    members: dict[str, str] = field(default_factory=dict)


def check_group(name: str, size: int) -> str | None:
    """The one-line complaint about a requested group, or None when it is acceptable."""
    if len(name) > MAX_GROUP_LEN:
        return f"CreateMatchRequest.deal_group has {len(name)} characters; at most {MAX_GROUP_LEN}"
    if name and not name.isprintable():
        return "CreateMatchRequest.deal_group must be printable text"
    if size and not name:
        return "CreateMatchRequest.deal_group_size is set but deal_group is empty"
    if size > MAX_GROUP_SIZE:
        return f"CreateMatchRequest.deal_group_size {size} is above the limit {MAX_GROUP_SIZE}"
    return None


class DealGroups:
    """Membership and status of every deal group this server knows."""

    def __init__(self, stored_members: Callable[[str], list[MatchSummary]]) -> None:
        #: Reads the stored summaries of a group's matches (used once per unknown group).
        self._stored_members = stored_members
        self._groups: dict[str, GroupState] = {}

    def _state(self, group: str) -> GroupState:
        state = self._groups.get(group)
        if state is None:
            state = GroupState()
            for summary in self._stored_members(group):
                state.members[summary["match_id"]] = summary["status"]
                state.size = max(state.size, int(summary.get("deal_group_size") or 0))
            self._groups[group] = state
        return state

    def add(self, group: str, size: int, match_id: str, status: str) -> None:
        state = self._state(group)
        state.size = max(state.size, size)
        state.members[match_id] = status

    def member_ids(self, group: str) -> list[str]:
        """The match ids of ``group``'s members."""
        return list(self._state(group).members) if group else []

    def update(self, group: str, match_id: str, status: str) -> None:
        if group:
            self._state(group).members[match_id] = status
            if status in ENDED and len(self._groups) > MAX_GROUPS_KEPT:
                self._forget_closed()

    def _forget_closed(self) -> None:
        """Drop the oldest closed groups from memory, down to half the limit: every
        member ended and the group complete, so nothing about it changes any more."""
        excess = len(self._groups) - MAX_GROUPS_KEPT // 2
        closed = [g for g in self._groups if not self.is_open(g)][:excess]
        for group in closed:
            del self._groups[group]

    def is_open(self, group: str, *, excluding: str = "") -> bool:
        """Whether a game of ``group`` other than ``excluding`` may still be played."""
        if not group:
            return False
        state = self._state(group)
        if len(state.members) < state.size:
            return True
        return any(status not in ENDED for mid, status in state.members.items() if mid != excluding)

    def withheld_message(self, group: str) -> str:
        return f"record withheld: its deal_group {group} still has games in play"

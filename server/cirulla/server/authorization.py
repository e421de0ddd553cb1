"""Who may do what on this server: the admin token, creation rates on an open server,
who may abort a match, and what twin games on duplicate deals withhold (their records,
their live streams and their summaries, on every rpc that shows them).

Kept out of the registry (``hub``) so that every rule of access reads in one place and is
tested on its own; the hub supplies what each check needs to know (the live count, a
match's tokens, the deal groups) and does the rest.
"""

from __future__ import annotations

import collections
import secrets

from cirulla.server.connections import token_seat
from cirulla.server.dealgroups import DealGroups
from cirulla.server.documents import GameRecord, MatchSummary
from cirulla.server.errors import (
    FailedPrecondition,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
)
from cirulla.server.limits import Limits, RateGate, peer_host


def bearer(metadata: dict[str, str], what: str) -> str:
    """The token of ``authorization: Bearer TOKEN``; a clear refusal naming ``what``."""
    value = metadata.get("authorization", "")
    if not value:
        raise Unauthenticated(
            f"this call needs {what}: send call metadata 'authorization: Bearer <token>'"
        )
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer":
        raise PermissionDenied("the 'authorization' metadata must be 'Bearer <token>'")
    return token.strip()


class Authorization:
    """The server's access rules. ``admin_token`` None: an open server."""

    def __init__(
        self,
        admin_token: str | None,
        limits: Limits,
        groups: DealGroups,
        stats: collections.Counter[str],
    ) -> None:
        self.admin_token = admin_token
        self.limits = limits
        self.groups = groups
        self.stats = stats
        self._creations = RateGate(limits.create_rate, limits.create_burst)

    def check_admin(self, metadata: dict[str, str]) -> None:
        """With an admin token configured, require ``authorization: Bearer TOKEN``."""
        if not self.admin_token:
            return
        token = bearer(metadata, "the admin token")
        if token_seat([self.admin_token], token) is None:
            raise PermissionDenied("the admin token in 'authorization' metadata is wrong")

    def is_admin(self, metadata: dict[str, str]) -> bool:
        """Whether the call carries this server's admin token (never true without one)."""
        if not self.admin_token:
            return False
        scheme, _, token = metadata.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(
            token.strip().encode(), self.admin_token.encode()
        )

    def check_create(self, metadata: dict[str, str], peer: str, live: int) -> None:
        """May this caller create a match or room now? The admin token when there is one;
        on an open server a creation rate per client address. Always the live cap
        (``live``: the waiting or running matches now)."""
        if self.admin_token:
            self.check_admin(metadata)
        elif not self._creations.take(who := peer_host(peer)):
            self.stats["creations_refused"] += 1
            raise ResourceExhausted(
                f"too many matches and rooms created from {who}: at most "
                f"{self.limits.create_rate:g} per second (bursts of "
                f"{self.limits.create_burst}); retry later"
            )
        if live >= self.limits.max_live_matches:
            self.stats["creations_refused"] += 1
            raise ResourceExhausted(
                f"the server holds {live} waiting or running matches, its limit; retry later"
            )

    def check_abort(
        self,
        metadata: dict[str, str],
        match_id: str,
        tokens: list[str] | None,
        stored_unended: bool,
    ) -> None:
        """The admin when there is one; on an open server the match's creator, who proves
        it with one of the match's (or its room's) seat ``tokens`` (None: not live here;
        ``stored_unended``: the database holds it unfinished, so only the admin may)."""
        if self.admin_token:
            self.check_admin(metadata)
            return
        if tokens is None:
            if stored_unended:
                raise PermissionDenied(
                    f"match {match_id} is not live on this server: only the admin may abort it"
                )
            return  # abort_match answers: ended (as GetMatch shows anyone), or not found
        token = bearer(metadata, "one of the match's seat tokens (or the admin token)")
        if token_seat(tokens, token) is None:
            raise PermissionDenied(
                f"only the creator of match {match_id} (holding one of its seat tokens) "
                "or the admin may abort it"
            )

    def record_withheld(self, record: GameRecord) -> bool:
        """Whether ``record``'s decks may still be in play in a twin (dealgroups.py)."""
        return self.groups.is_open(record.get("deal_group", ""))

    def check_record_readable(self, record: GameRecord, metadata: dict[str, str]) -> None:
        group = record.get("deal_group", "")
        if self.record_withheld(record) and not self.is_admin(metadata):
            raise FailedPrecondition(self.groups.withheld_message(group))

    def check_spectatable(self, match_id: str, group: str, metadata: dict[str, str]) -> None:
        if self.groups.is_open(group, excluding=match_id) and not self.is_admin(metadata):
            raise FailedPrecondition(
                f"match {match_id} cannot be watched: its deal_group {group} has "
                "other games in play that share its deck orders"
            )

    def match_withheld(self, summary: MatchSummary) -> bool:
        """Whether a match's summary is withheld from the public: the spectator's rule
        (another game of its deal group may still be played, dealgroups.py).

        Why the whole summary: every field of it can carry what a seat saw to a twin
        still in play, not only the names: game totals, fault counts, notes, the abort
        reason and the moment the status changed are all chosen by the seats' play.
        """
        return self.groups.is_open(summary.get("deal_group", ""), excluding=summary["match_id"])

    def check_match_readable(
        self, summary: MatchSummary, metadata: dict[str, str], tokens: list[str] | None
    ) -> None:
        """Refuse a withheld match's summary (``match_withheld``) to all but the admin and
        the match's creator, who proves it with one of its seat ``tokens`` (None: not
        live here, only the admin) as for AbortMatch: a referee reads its own game."""
        if not self.match_withheld(summary) or self.is_admin(metadata):
            return
        scheme, _, token = metadata.get("authorization", "").partition(" ")
        if tokens and scheme.lower() == "bearer" and token_seat(tokens, token.strip()) is not None:
            return
        match_id, group = summary["match_id"], summary.get("deal_group", "")
        raise FailedPrecondition(
            f"match {match_id} withheld: its deal_group {group} has other games in play "
            "that share its deck orders (only the admin or its seat tokens may read it)"
        )

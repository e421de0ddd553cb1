"""Seat admission: which seat a Hello's token opens, and a stream taking its seat.

Security-relevant: a seat's name and version are fixed at its first Hello
(``check_identity``), a token is compared in constant time (``connections.token_seat``),
and a seat's live stream is only replaced by a Hello that asks to resume. The session
(one match) and the hub's rooms (one game after another) both admit through here.
"""

from __future__ import annotations

from cirulla.server.connections import Connection, Seat, token_seat
from cirulla.server.errors import AlreadyExists, FailedPrecondition, Unauthenticated


def seat_of_token(tokens: list[str], token: str, *, created_by: str, holder: str) -> int:
    """The seat ``token`` opens among ``tokens`` (those ``created_by`` answered with, for
    ``holder``, e.g. "match m-1-..."); Unauthenticated if none."""
    if not token:
        raise Unauthenticated(f"Hello.seat_token is empty: send the token from {created_by}")
    seat = token_seat(tokens, token)
    if seat is None:
        raise Unauthenticated(f"Hello.seat_token is not a token of {holder}")
    return seat


def check_identity(slot: Seat, seat: int, name: str, version: str) -> None:
    """A seat's name and version are those of its first Hello: a later Hello (a resume, a
    reconnect) may repeat them or leave them empty, never change them.

    Why: a seat's name is shown to anyone (GetMatch, records); a bot free to rename its
    seat mid-game could spell its hand there for its own fresh process playing the twin
    game dealt alike (dealgroups.py) to read.
    """
    if not slot.joined:
        return
    for field, given, fixed in (("name", name, slot.name), ("version", version, slot.version)):
        if given and given != fixed:
            raise FailedPrecondition(
                f"Hello.{field} {given!r} differs from {fixed!r}, seat {seat}'s {field} since "
                "its first Hello: it cannot change (send the same or leave it empty)"
            )


def admit(
    slot: Seat,
    seat: int,
    conn: Connection,
    *,
    name: str,
    version: str,
    takeover: bool,
    match_id: str,
) -> bool:
    """Give ``slot`` (seat ``seat`` of ``match_id``) to the stream ``conn``: the Hello's
    name and version checked (``check_identity``), a live stream replaced only on
    ``takeover``. Changes nothing if refused; True if the seat was disconnected (a
    reconnection the others are told of)."""
    check_identity(slot, seat, name, version)
    if slot.conn is not None and slot.conn is not conn:
        if not takeover:
            raise AlreadyExists(
                f"seat {seat} of match {match_id} already has a live stream "
                "(reconnect with Hello.resume set to take it over)"
            )
        slot.conn.close("replaced", "another stream took over this seat")
    was_disconnected = slot.disconnected_at is not None
    slot.conn = conn
    if not slot.joined:  # fixed from now on (check_identity)
        slot.name = name or f"seat {seat}"
        slot.version = version
    slot.joined = True
    slot.disconnected_at = None
    conn.seat = seat
    return was_disconnected

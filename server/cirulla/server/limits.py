"""Every bound the server puts on what clients send and on what it keeps for them.

A server open to the network meets hostile and broken clients: a 4 MiB display name
copied into every message the other seats receive, a 1 MiB notation quoted back in each
rejection, a stream that never reads its replies, thousands of anonymous matches. Each
client-supplied string has a length limit here (checked before anything stores, copies
or quotes it; an error names the field and the limit, never the value), and the
configurable limits of an open server live in ``Limits`` with their defaults, which
docs/server.md ("Limits and trust") lists. The strings shown to people (names, versions,
a room's name, an abort reason) must also be printable: an ANSI escape or a newline in a
seat's name would reach every terminal and log that shows it.
"""

from __future__ import annotations

import ipaddress
import time
import urllib.parse
from dataclasses import dataclass

from cirulla.server.errors import InvalidArgument

#: Longest accepted strings, in characters, per request field.
MAX_NAME = 64  # Hello.name, CreateRoomRequest.display_name
MAX_VERSION = 64  # Hello.version (a bot's software version)
MAX_PROTOCOL_VERSION = 32  # Hello.protocol_version
MAX_ID = 64  # match, room and record ids in any request
MAX_TOKEN = 128  # seat tokens (the server issues 32 characters)
MAX_NOTATION = 128  # SubmitAction.notation (the longest legal action is under 40)
MAX_CARD_CODE = 16  # Card.code in a deck order or an action ("7H"; blanks around it are read)
MAX_REASON = 1000  # AbortMatchRequest.reason (stored and sent to every player)
MAX_QUIT_REASON = 200  # Quit.reason (logged; longer ones are cut)
MAX_BATCH = 64  # server messages packed into one PlayResponse.batch, at most
MAX_PAGE_TOKEN = 9  # decimal digits of a page token this server issues
#: Longest time in any ``_ms`` setting of a match (TimeControl's four, the disconnect
#: grace): a week. Far above any real game, and it keeps a bank that grows by its
#: increment at every answer inside the uint64 of ``Clock`` (an increment of 2**64 - 1
#: overflowed the decision request's clock and left the match hanging).
MAX_TIME_MS = 7 * 24 * 3600 * 1000
#: Page size when a request leaves page_size at 0.
DEFAULT_PAGE = 100


def check_text(value: str, field: str, limit: int, *, printable: bool = False) -> str:
    """``value`` if it has at most ``limit`` characters (and, with ``printable``, none
    that ``str.isprintable`` refuses); the error never quotes it."""
    if len(value) > limit:
        raise InvalidArgument(f"{field} has {len(value)} characters; the limit is {limit}")
    if printable and not value.isprintable():
        at, char = next((i, c) for i, c in enumerate(value) if not c.isprintable())
        raise InvalidArgument(
            f"{field} has a control or format character (U+{ord(char):04X} at {at}); "
            "it is shown to people: printable text only"
        )
    return value


def check_time_ms(value: int, field: str) -> int:
    """``value`` if it is at most ``MAX_TIME_MS`` (a week)."""
    if value > MAX_TIME_MS:
        raise InvalidArgument(f"{field} is {value} ms; the limit is {MAX_TIME_MS} (7 days)")
    return value


def page_offset(token: str, field: str = "page_token") -> int:
    """The offset in a page token this server issued (ASCII digits, at most 9)."""
    if not token:
        return 0
    if not (token.isascii() and token.isdigit() and len(token) <= MAX_PAGE_TOKEN):
        raise InvalidArgument(
            f"{field} is not one this server issued (pass next_page_token back unchanged)"
        )
    return int(token)


@dataclass(frozen=True, slots=True)
class Limits:
    """The configurable limits of a running server (``cirulla server`` flags)."""

    #: Largest request frame accepted, in bytes (gRPC's receive limit; default is 4 MiB).
    max_request_bytes: int = 256 * 1024
    #: Messages waiting for one stream; a client that lets more pile up is disconnected.
    stream_queue: int = 1000
    #: Entries in one page of ListMatches, ListRooms and ListRecords (page_size is capped).
    max_page: int = 500
    #: Seconds a Play stream may stay open without sending its hello.
    hello_timeout_s: float = 30.0
    #: Streams (calls) one client connection may hold open at once (HTTP/2's
    #: MAX_CONCURRENT_STREAMS). Without it one connection held 5,000 Play streams without
    #: a hello (+107 MiB for the 30 s of the hello timeout). A gRPC client queues the
    #: calls past it, and may see some refused (UNAVAILABLE) as streams end and start: a
    #: legitimate load must stay well below. A process's channels to one server share one
    #: connection: ``cirulla bench server``'s load holds up to 200 streams on one (100
    #: matches of 2 seats, --processes 1; at a cap of 150 it hung, matches waiting for
    #: seats queued behind others), the web view one per live viewer.
    max_streams_per_connection: int = 1000
    #: Without an admin token: matches and rooms one client address may create per second
    #: (sustained), and in a burst.
    create_rate: float = 20.0
    create_burst: int = 200
    #: Waiting plus in-progress matches the server holds at once (creation fails beyond).
    max_live_matches: int = 5000
    #: Cards of explicit deck orders (MatchSettings.deck_orders, 40 a deck, one byte each)
    #: the waiting and running matches hold in all: 500,000 decks, 100 for each of 5,000
    #: live matches (a game to 51 deals 6 to 10: random play). One CreateMatch carries ~1,070.
    max_deck_cards: int = 20_000_000
    #: Seconds a match may wait for its players before it is aborted (0 = never).
    waiting_timeout_s: float = 900.0
    #: Seconds a room with no connected seat stays in memory (0 = forever).
    room_idle_s: float = 3600.0
    #: Rooms held in memory at once (CreateRoom fails beyond): ~3 KB each while idle.
    max_rooms: int = 10_000
    #: Games kept in a room's history (older ones stay in ListRecords).
    room_history: int = 200
    #: Ended matches kept in memory at most (besides ``--keep-finished`` seconds): the
    #: oldest leave first, and the database serves them from then on.
    keep_finished_matches: int = 100
    #: ... and at most this many of their events in all (a long game holds thousands).
    keep_finished_events: int = 100_000

    def page_size(self, requested: int) -> int:
        """The page size to serve for a request's ``page_size`` (0 = the default)."""
        return min(requested or DEFAULT_PAGE, self.max_page)


class RateGate:
    """A token bucket per client address: ``rate`` per second, up to ``burst`` at once."""

    #: Addresses remembered at most; full buckets are forgotten first.
    MAX_ADDRESSES = 10_000

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, who: str) -> bool:
        """Spend one token of ``who``; False if it has none left."""
        now = time.monotonic()
        tokens, last = self._buckets.get(who, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        if tokens < 1:
            self._buckets[who] = (tokens, now)
            return False
        self._buckets[who] = (tokens - 1, now)
        if len(self._buckets) > self.MAX_ADDRESSES:
            self._forget(now)
        return True

    def _forget(self, now: float) -> None:
        full = [
            who
            for who, (tokens, last) in self._buckets.items()
            if tokens + (now - last) * self.rate >= self.burst
        ]
        for who in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[who]


def peer_host(peer: str) -> str:
    """The client a gRPC peer counts as for the creation rate: an IPv4 address
    (``ipv4:1.2.3.4:5678`` -> ``ipv4:1.2.3.4``), an IPv6 /64 network, the least a host is
    given, so that one host's many addresses share one rate (``ipv6:%5B2001:db8::1%5D:5000``,
    as gRPC writes it, or ``ipv6:[2001:db8::1]:5000`` -> ``ipv6:2001:db8::/64``; an
    IPv4-mapped one is its IPv4 address); anything else (a unix socket) as it is."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return peer.rpartition(":")[0]
    if kind != "ipv6":
        return peer
    host = urllib.parse.unquote(rest).rpartition(":")[0].strip("[]").partition("%")[0]
    try:
        address = ipaddress.IPv6Address(host)
    except ValueError:
        return peer.rpartition(":")[0]
    if address.ipv4_mapped is not None:
        return f"ipv4:{address.ipv4_mapped}"
    return f"ipv6:{ipaddress.IPv6Network((address, 64), strict=False)}"

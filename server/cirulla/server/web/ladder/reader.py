"""The ladder's pages read the LadderService, and the records and live streams of the match
servers hosting its matches, as a public client (``LadderReader``).

A ladder match is played on the match server of whichever ladder process claimed it
(``LadderMatch.server_address``): its replay and live view are read from that server,
the web view's own when the address is one of its own (``local``), else another worker's,
dialled on demand (a few channels kept, keyed by address; plaintext, or TLS checked
against the CA the ladder process was given). The routes take the *ladder* match id, so
the web view only ever dials an address the ladder itself reports.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable, Collection

import grpc

from cirulla.server.web.ladder import (
    LIST_MATCHES,
    PAGE,
    QUEUES,
    RPC_TIMEOUT,
    STATUS_VALUES,
)
from cirulla.server.web.replay import StepsCache
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc, match_service_pb2, match_service_pb2_grpc

#: channels kept to other workers' match servers (the least recently used is closed)
REMOTE_CHANNELS = 8
#: server match ids remembered as hosted here or not
KNOWN_HOSTS = 1024
Match = ladder_pb2.LadderMatch
MatchStub = match_service_pb2_grpc.MatchServiceStub


class LadderReader:
    """The LadderService, and the records and live streams of the match servers hosting
    its matches, read as a public client.

    ``match_target`` is the web view's own match server; a match whose
    ``server_address`` is in ``local`` is read there. Any other address is another
    ladder process's match server: dialled with ``tls_ca`` (PEM bytes) when given, in
    plaintext otherwise, its channel kept among the ``REMOTE_CHANNELS`` used last.
    """

    def __init__(
        self,
        ladder_target: str,
        match_target: str,
        *,
        local: Collection[str] = (),
        tls_ca: bytes | None = None,
    ) -> None:
        self.ladder_target = ladder_target
        self.match_target = match_target
        self.local = frozenset(local)
        self.tls_ca = tls_ca
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._remote: collections.OrderedDict[str, grpc.aio.Channel] = collections.OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()
        #: whether our own match server knows a server match id (it never changes)
        self._known: collections.OrderedDict[str, bool] = collections.OrderedDict()
        #: replay steps of the records served, by match server and record id
        self.steps = StepsCache()

    def _channel(self, target: str) -> grpc.aio.Channel:
        if target not in self._channels:
            self._channels[target] = grpc.aio.insecure_channel(target)
        return self._channels[target]

    def dial(self, address: str) -> grpc.aio.Channel:
        """A new channel to another ladder process's match server."""
        if self.tls_ca is None:
            return grpc.aio.insecure_channel(address)
        credentials = grpc.ssl_channel_credentials(root_certificates=self.tls_ca)
        return grpc.aio.secure_channel(address, credentials)

    @property
    def ladder(self) -> ladder_pb2_grpc.LadderServiceStub:
        return ladder_pb2_grpc.LadderServiceStub(self._channel(self.ladder_target))

    @property
    def matches(self) -> match_service_pb2_grpc.MatchServiceStub:
        return match_service_pb2_grpc.MatchServiceStub(self._channel(self.match_target))

    async def hosted_here(self, m: Match) -> bool:
        """Whether the web view's own match server hosts ``m``: its address is one of
        ours, or our server knows the match (a ladder restarted on another port hosted
        it under an older address; match ids are unique, so a match we know is ours)."""
        if not m.server_address or m.server_address in self.local:
            return True
        if not m.server_match_id:
            return False
        known = self._known.get(m.server_match_id)
        if known is None:
            try:
                await self.matches.GetMatch(
                    match_service_pb2.GetMatchRequest(match_id=m.server_match_id), timeout=2.0
                )
                known = True
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:
                    known = True  # a withheld duplicate twin: ours, not shown yet
                elif exc.code() != grpc.StatusCode.NOT_FOUND:
                    return False  # not known for sure: ask again next time
                else:
                    known = False
            self._known[m.server_match_id] = known
            while len(self._known) > KNOWN_HOSTS:
                self._known.popitem(last=False)
        return known

    async def server_of(self, m: Match) -> tuple[str, MatchStub]:
        """The match server hosting ladder match ``m``: its address ("" for the web
        view's own) and a stub on a kept channel."""
        if await self.hosted_here(m):
            return "", self.matches
        address = m.server_address
        channel = self._remote.get(address)
        if channel is None:
            channel = self._remote[address] = self.dial(address)
            while len(self._remote) > REMOTE_CHANNELS:
                _, old = self._remote.popitem(last=False)
                closing = asyncio.get_running_loop().create_task(old.close(grace=RPC_TIMEOUT))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        else:
            self._remote.move_to_end(address)
        return address, match_service_pb2_grpc.MatchServiceStub(channel)

    async def stream_of(self, m: Match) -> tuple[MatchStub, Callable[[], Awaitable[None]] | None]:
        """A stub for a live stream of ``m``, and what to call when the stream ends: a
        stream from another worker's server has a channel of its own (a long stream
        never holds a kept channel open, nor is cut when it is let go)."""
        if await self.hosted_here(m):
            return self.matches, None
        channel = self.dial(m.server_address)
        return match_service_pb2_grpc.MatchServiceStub(channel), lambda: channel.close(grace=None)

    async def close(self) -> None:
        for channel in [*self._channels.values(), *self._remote.values()]:
            await channel.close(grace=None)
        self._remote.clear()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    async def standings(
        self, queue: str, include_inactive: bool = False
    ) -> ladder_pb2.GetStandingsResponse:
        got: ladder_pb2.GetStandingsResponse = await self.ladder.GetStandings(
            ladder_pb2.GetStandingsRequest(queue=QUEUES[queue], include_inactive=include_inactive),
            timeout=RPC_TIMEOUT,
        )
        return got

    async def history(self, name: str) -> ladder_pb2.GetBotHistoryResponse:
        got: ladder_pb2.GetBotHistoryResponse = await self.ladder.GetBotHistory(
            ladder_pb2.GetBotHistoryRequest(bot_name=name, page_size=PAGE), timeout=RPC_TIMEOUT
        )
        return got

    async def match(self, match_id: str) -> Match:
        got: ladder_pb2.GetLadderMatchResponse = await self.ladder.GetLadderMatch(
            ladder_pb2.GetLadderMatchRequest(match_id=match_id), timeout=RPC_TIMEOUT
        )
        return got.match

    async def list_matches(
        self, queue: str = "", status: str = "", bot: str = "", token: str = ""
    ) -> ladder_pb2.ListLadderMatchesResponse:
        """One page of every ladder match, newest first (ListLadderMatches)."""
        got: ladder_pb2.ListLadderMatchesResponse = await self.ladder.ListLadderMatches(
            ladder_pb2.ListLadderMatchesRequest(
                queue=QUEUES[queue] if queue else ladder_pb2.LADDER_QUEUE_UNSPECIFIED,
                status=(
                    STATUS_VALUES[status] if status else ladder_pb2.LADDER_MATCH_STATUS_UNSPECIFIED
                ),
                bot_name=bot,
                page_size=LIST_MATCHES,
                page_token=token,
            ),
            timeout=RPC_TIMEOUT,
        )
        return got

    async def records_of(self, m: Match) -> list[str]:
        """The record ids the match server hosting ``m`` serves to anyone for it."""
        _, stub = await self.server_of(m)
        got = await stub.ListRecords(
            match_service_pb2.ListRecordsRequest(match_id=m.server_match_id, page_size=50),
            timeout=RPC_TIMEOUT,
        )
        return sorted(r.record_id for r in got.records)

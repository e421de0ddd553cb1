"""The LadderService rpcs (proto/cirulla/v1/ladder.proto) over the store.

Reads are open to anyone and show only what the store's public views show (no token, no
key, no seed, withheld duplicate twins). AddBot, PauseBot, ResumeBot and RemoveBot need
``authorization: Bearer <admin token>`` when the ladder has an admin token. Store calls
are blocking database work, so each runs in a thread, off the server's event loop.
``Enroll`` (connect-in bots) is the body in ``cirulla.ladder.enroll``.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TypeVar

import grpc

from cirulla.ladder import authors
from cirulla.ladder.enroll import enroll_stream
from cirulla.ladder.limits import effective_pb, text_from_pb
from cirulla.ladder.messages import (
    QUEUE_TO_PB,
    Context,
    bot_pb,
    match_pb,
    page_size,
    queue_name,
    rating_pb,
    request_pb,
    status_name,
    timestamp,
)
from cirulla.ladder.spec_paths import hidden_path
from cirulla.ladder.store import (
    CONNECT_SPEC,
    QUEUES,
    BotInfo,
    LadderStore,
    MatchConfig,
    MatchPage,
)
from cirulla.server.store import Store
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc

SERVICE_NAME = ladder_pb2.DESCRIPTOR.services_by_name["LadderService"].full_name
T = TypeVar("T")


#: The metadata key that carried a version's limits on AddBot before the request had its
#: ``limits`` field (``cirulla ladder add`` of earlier releases sends it; docs/ladder.md
#: described it): still read when the field is unset, so such a client's limits are not
#: silently dropped.
LIMITS_METADATA = "cirulla-bot-limits"
#: Characters of it read at most (the checked form is far shorter).
MAX_LIMITS = 200


def _no_one_to_tell() -> None:
    """``new_work`` of a service no ladder loop listens to."""


class LadderService(ladder_pb2_grpc.LadderServiceServicer):
    def __init__(
        self,
        store: LadderStore,
        admin_token: str | None = None,
        *,
        served_by: str = "ladder",
        open_registration: bool = False,
        tls_ca: str | None = None,
        config: MatchConfig | None = None,
        queues: tuple[str, ...] = QUEUES,
        data: Path | None = None,
        private: tuple[Path, ...] = (),
    ) -> None:
        self.store = store
        #: what this ladder's sandbox never shows a bot (``serve.private_paths``; empty
        #: without the sandbox): a spec naming a file there is refused by AddBot
        self.private = private
        #: this process's data folder: the bots' logs and the games' records its workers
        #: wrote, which authors read (``cirulla.ladder.authors``); None: none kept here
        self.data = data
        #: the match server's database (set by ``serve``): why a record is no longer kept
        #: (``--keep-records``), said to an author asking for it
        self.server_store: Store | None = None
        #: how requested matches are played (the scheduler's settings), and the queues
        #: this ladder plays
        self.config = config or MatchConfig()
        self.queues = queues
        #: the CA of the ladder's TLS match servers (None: they speak plaintext); the
        #: redelivery of an unjoined seat asks the one hosting it
        self.tls_ca = tls_ca
        self.admin_token = admin_token
        #: ``--insecure-open``: a caller without the token may register a NEW connect-in
        #: bot (never a command to run, never an existing name)
        self.open_registration = open_registration
        #: who holds the enrollments of this process (its worker id), for the table
        self.served_by = served_by
        #: set when the process shuts down: every Enroll stream says goodbye
        self.stopping = asyncio.Event()
        #: called when this service made new work (a bot added, resumed or enrolled, a
        #: match requested): ``serve`` wakes its idle scheduler and workers with it
        self.new_work: Callable[[], None] = _no_one_to_tell

    async def Enroll(
        self,
        request_iterator: AsyncIterator[ladder_pb2.EnrollRequest],
        context: Context,
    ) -> AsyncIterator[ladder_pb2.EnrollResponse]:
        async for response in enroll_stream(
            self.store,
            request_iterator,
            context,
            served_by=self.served_by,
            stopping=self.stopping,
            tls_ca=self.tls_ca,
            on_enrolled=self.new_work,
        ):
            yield response

    async def GetBotLogs(
        self, request: ladder_pb2.GetBotLogsRequest, context: Context
    ) -> ladder_pb2.GetBotLogsResponse:
        return await authors.get_bot_logs(self, request, context)

    async def GetBotRecord(
        self, request: ladder_pb2.GetBotRecordRequest, context: Context
    ) -> ladder_pb2.GetBotRecordResponse:
        return await authors.get_bot_record(self, request, context)

    async def ListBotEvents(
        self, request: ladder_pb2.ListBotEventsRequest, context: Context
    ) -> ladder_pb2.ListBotEventsResponse:
        return await authors.list_bot_events(self, request, context)

    async def RotateBotKey(
        self, request: ladder_pb2.RotateBotKeyRequest, context: Context
    ) -> ladder_pb2.RotateBotKeyResponse:
        return await authors.rotate_bot_key(self, request, context)

    async def _call(self, context: Context, fn: Callable[[], T]) -> T:
        """Run a store call in a thread; refusals become one clear gRPC error."""
        return await authors.call_store(context, fn)

    def _is_admin(self, context: Context) -> bool | None:
        """True: the admin token; None: no authorization sent; False: a wrong one."""
        metadata = dict(context.invocation_metadata() or ())
        auth = str(metadata.get("authorization", ""))
        if not auth:
            return None
        if not self.admin_token:
            return False
        given = auth.removeprefix("Bearer ").strip()
        return secrets.compare_digest(given.encode(), self.admin_token.encode())

    async def _check_admin(self, context: Context) -> None:
        """Every mutating rpc needs the admin token, on loopback too (no token: no admin)."""
        admin = self._is_admin(context)
        if admin is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "this rpc needs the ladder's admin token: send 'authorization: Bearer "
                "<token>' metadata (the token file is named in cirulla-ladder.json)",
            )
        if not admin:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "wrong admin token")

    async def GetStandings(
        self, request: ladder_pb2.GetStandingsRequest, context: Context
    ) -> ladder_pb2.GetStandingsResponse:
        queue = await self._call(context, lambda: queue_name(request.queue))
        assert queue is not None
        entries, rated = await self._call(
            context,
            lambda: (
                self.store.results.standings(queue, request.include_inactive),
                self.store.results.rated_games(queue),
            ),
        )
        return ladder_pb2.GetStandingsResponse(
            queue=QUEUE_TO_PB[queue],
            rated_games=rated,
            entries=[
                ladder_pb2.StandingsEntry(rank=e["rank"], bot=bot_pb(e["bot"]), rating=rating_pb(e))
                for e in entries
            ],
        )

    async def GetBotHistory(
        self, request: ladder_pb2.GetBotHistoryRequest, context: Context
    ) -> ladder_pb2.GetBotHistoryResponse:
        queue = await self._call(context, lambda: queue_name(request.queue, None))
        h = await self._call(
            context,
            lambda: self.store.results.bot_history(
                request.bot_name, queue, page_size(request.page_size)
            ),
        )
        bot = bot_pb(h["bot"])
        versions = []
        for v in h["versions"]:
            version = ladder_pb2.LadderBot()
            version.CopyFrom(bot)
            version.version = v["version"]
            version.spec = v["spec"]
            version.ClearField("limits")
            if v["spec"] != CONNECT_SPEC:
                version.limits.CopyFrom(effective_pb(v["limits"]))
            del version.queues[:]
            version.queues.extend(QUEUE_TO_PB[q] for q in v["queues"])
            created = timestamp(v["created_at"])
            if created is not None:
                version.create_time.CopyFrom(created)
            versions.append(version)
        return ladder_pb2.GetBotHistoryResponse(
            bot=bot,
            versions=versions,
            ratings=[rating_pb(r) for r in h["ratings"]],
            rating_history=[
                ladder_pb2.RatingPoint(
                    queue=QUEUE_TO_PB[p["queue"]],
                    version=p["version"],
                    match_id=p["match_id"],
                    mu=p["mu"],
                    sigma=p["sigma"],
                    time=timestamp(p["at"]),
                )
                for p in h["rating_history"]
            ],
            matches=[match_pb(m) for m in h["matches"]],
        )

    async def GetLadderMatch(
        self, request: ladder_pb2.GetLadderMatchRequest, context: Context
    ) -> ladder_pb2.GetLadderMatchResponse:
        m = await self._call(context, lambda: self.store.views.match(request.match_id))
        return ladder_pb2.GetLadderMatchResponse(match=match_pb(m))

    async def GetHeadToHead(
        self, request: ladder_pb2.GetHeadToHeadRequest, context: Context
    ) -> ladder_pb2.GetHeadToHeadResponse:
        queue = await self._call(context, lambda: queue_name(request.queue, None))
        h = await self._call(
            context,
            lambda: self.store.results.head_to_head(
                request.bot_a, request.bot_b, queue, page_size(request.page_size)
            ),
        )
        return ladder_pb2.GetHeadToHeadResponse(
            bot_a=h["bot_a"],
            bot_b=h["bot_b"],
            games=h["games"],
            a_wins=h["a_wins"],
            b_wins=h["b_wins"],
            draws=h["draws"],
            a_points=h["a_points"],
            b_points=h["b_points"],
            matches=[match_pb(m) for m in h["matches"]],
        )

    async def AddBot(
        self, request: ladder_pb2.AddBotRequest, context: Context
    ) -> ladder_pb2.AddBotResponse:
        only_new = False
        if self.open_registration and self._is_admin(context) is None:
            # anonymous self-registration: a new connect-in bot, nothing else
            if request.spec.strip() != CONNECT_SPEC:
                await context.abort(
                    grpc.StatusCode.PERMISSION_DENIED,
                    "spec: without the admin token only 'connect' bots may be registered",
                )
            only_new = True
        else:
            await self._check_admin(context)

        # a version's own limits: the request's field, else the metadata of older clients
        if request.HasField("limits"):
            limits = await self._call(context, lambda: text_from_pb(request.limits))
        else:
            metadata = dict(context.invocation_metadata() or ())
            limits = str(metadata.get(LIMITS_METADATA, ""))[:MAX_LIMITS]
        if limits and only_new:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, "limits: only the admin token sets them"
            )

        hidden = hidden_path(request.spec, self.private)
        if hidden is not None:
            word, folder = hidden
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"spec: {word} lies in {folder}, which this ladder's sandbox never shows a "
                "bot (its data, its database's folder or a secret): the bot would start "
                "without it; put the bot's files in a folder of their own, or the database "
                "in one (serve --db)",
            )

        def add() -> tuple[BotInfo, bool, str]:
            queues = [queue_name(q) or "2p" for q in request.queues] or ["2p"]
            return self.store.bots.add_bot(
                request.bot_name,
                request.spec,
                queues,
                request.max_concurrency,
                only_new=only_new,
                limits=limits,
            )

        bot, new, key = await self._call(context, add)
        self.new_work()
        return ladder_pb2.AddBotResponse(bot=bot_pb(bot), new_version=new, bot_key=key)

    async def PauseBot(
        self, request: ladder_pb2.PauseBotRequest, context: Context
    ) -> ladder_pb2.PauseBotResponse:
        await self._check_admin(context)
        reason = request.reason or "paused by an admin"
        bot = await self._call(
            context, lambda: self.store.bots.set_state(request.bot_name, "paused", reason)
        )
        return ladder_pb2.PauseBotResponse(bot=bot_pb(bot))

    async def ResumeBot(
        self, request: ladder_pb2.ResumeBotRequest, context: Context
    ) -> ladder_pb2.ResumeBotResponse:
        await self._check_admin(context)
        bot = await self._call(
            context, lambda: self.store.bots.set_state(request.bot_name, "active")
        )
        self.new_work()
        return ladder_pb2.ResumeBotResponse(bot=bot_pb(bot))

    async def RemoveBot(
        self, request: ladder_pb2.RemoveBotRequest, context: Context
    ) -> ladder_pb2.RemoveBotResponse:
        await self._check_admin(context)
        reason = request.reason or "removed by an admin"
        bot = await self._call(
            context, lambda: self.store.bots.set_state(request.bot_name, "removed", reason)
        )
        return ladder_pb2.RemoveBotResponse(bot=bot_pb(bot))

    async def RequestMatch(
        self, request: ladder_pb2.RequestMatchRequest, context: Context
    ) -> ladder_pb2.RequestMatchResponse:
        admin = self._is_admin(context)
        owner_key: str | None = None
        if admin is None and request.bot_key:
            owner_key = request.bot_key  # a bot's owner: checked against the bots named
        else:
            await self._check_admin(context)
        r = await self._call(
            context,
            lambda: self.store.requests.request_matches(
                list(request.bot_names),
                request.games,
                unrated=request.unrated,
                config=self.config,
                queues=self.queues,
                owner_key=owner_key,
            ),
        )
        self.new_work()
        return ladder_pb2.RequestMatchResponse(request=request_pb(r))

    async def ListMatchRequests(
        self,
        request: ladder_pb2.ListMatchRequestsRequest,
        context: Context,
    ) -> ladder_pb2.ListMatchRequestsResponse:
        requests = await self._call(
            context,
            lambda: self.store.requests.match_requests(
                request.bot_name or None, page_size(request.page_size)
            ),
        )
        return ladder_pb2.ListMatchRequestsResponse(requests=[request_pb(r) for r in requests])

    async def ListLadderMatches(
        self,
        request: ladder_pb2.ListLadderMatchesRequest,
        context: Context,
    ) -> ladder_pb2.ListLadderMatchesResponse:
        def read() -> MatchPage:
            return self.store.views.every_match(
                queue_name(request.queue, None),
                status_name(request.status),
                request.bot_name or None,
                page_size(request.page_size),
                request.page_token,
            )

        got = await self._call(context, read)
        return ladder_pb2.ListLadderMatchesResponse(
            matches=[match_pb(m) for m in got.matches], next_page_token=got.next_token
        )

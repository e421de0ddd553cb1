"""The ladder's pages: standings, every bot's page, every match, each match's page, and the
bot author's page. One module per page family (``standings``, ``bots``, ``matches``,
``games`` for a ladder match's replay and live view, ``author``), their markup in
``templates/ladder/``; ``reader`` reads the ladder, ``routes`` puts the pages together.

Everything is read through the ladder's public ``LadderService`` (proto/cirulla/v1/
ladder.proto), without the admin token, exactly as any client reads it: the first game of
a duplicate pair whose twin is still in play comes back ``withheld`` (no result, points,
outcomes or rating points), and its record and live stream are refused by the match
server too, so no page can show more than the rpc does. The server area never imports
the ladder; it only speaks its protocol.

Pages are rendered on the server (they read without JavaScript); the standings page's
script only refreshes itself every few seconds.

This module holds the protocol's words the pages share (queues, states, statuses) and
the pages' sizes.
"""

from __future__ import annotations

from cirulla import ladder_words

RPC_TIMEOUT = 10.0
QUEUES = ladder_words.QUEUES
QUEUE_NAMES = ladder_words.QUEUE_NAMES
STATES = {v: k for k, v in ladder_words.BOT_STATES.items()}
STATUS_VALUES = ladder_words.MATCH_STATUSES
STATUSES = ladder_words.MATCH_STATUS_NAMES
#: a bot's history page size (the rpc's maximum)
PAGE = 1000
#: matches listed on a bot's page (its chart has every rated game)
BOT_PAGE_MATCHES = 100
#: matches on one page of every match (ListLadderMatches' page_size)
LIST_MATCHES = 100

"""The ladder: registered bots, continuous rated matches, standings (issue 8; docs/ladder.md).

Modules, one job each: ``schema`` (the tables), ``db`` (engines and migrations), ``store``
(every read and write of ladder state), ``rating`` (openskill), ``matchmaking`` (who plays
whom), ``runner`` (plays one claimed match), ``serve`` (the ladder process), ``service``
(the LadderService rpcs), ``messages`` (its rows as protobuf messages), ``cli``
(``cirulla ladder``).
"""
